"""The workspace's documents as an agent finds and reads them: which ones exist (skills and notes from the
snapshot, resources from the index resource, the workspace prompts from the tool schema), how to read each one,
where a policy phrase is defined and which value it assigns, and which part of a document a question asks about.

Only what tool results show is used: nothing here knows how the world is laid out on disk.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from .reading import Mention, option_mentions
from .retrieval import BM25, terms

URI = re.compile(r"openbb://[\w./-]*[\w/]")
_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+", re.M)
_ORDINALS = {
    "first": 0,
    "second": 1,
    "third": 2,
    "fourth": 3,
    "fifth": 4,
    "sixth": 5,
    "seventh": 6,
    "eighth": 7,
    "ninth": 8,
    "tenth": 9,
}
# Proper names a question quotes ("Share Buybacks", "VLTX"): the piece that carries them verbatim is the one it means.
_NAMED = re.compile(r"\b[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)+|\b[A-Z]{2,}[0-9A-Z]*\b")
# The main clause of a question is what it asks; what follows "before …" only situates it.
_SUBORDINATE = re.compile(r"\b(?:before|after|when|while|once|so that|in order to)\b", re.I)
# A markdown table's rule line: the line above it is the header (labels, not an answer).
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_XREF = re.compile(
    r"\b(?:see|refer to|as (?:set out|defined|listed|given) in|defined in|listed in|per)\b", re.I
)


@dataclass
class Document:
    """A document the agent can read: the call that reads it, what is known of it before reading, its text
    once read."""

    kind: str
    key: str
    title: str
    summary: str
    text: str | None = None

    @property
    def call(self) -> tuple[str, dict[str, Any]]:
        if self.kind == "skill":
            return "get_skill_content", {"slug": self.key}
        if self.kind == "prompt":
            return "get_workspace_prompt", {"name": self.key}
        return "read_workspace_resource", {"uri": self.key}


def envelope_text(envelope: dict[str, Any] | None) -> str | None:
    """The readable text of a knowledge tool's result (skill content, resource or prompt text)."""
    if not envelope or not envelope.get("ok") or not isinstance(envelope.get("data"), dict):
        return None
    data = envelope["data"]
    for key in ("content", "text"):
        if isinstance(data.get(key), str):
            head = " ".join(
                str(data[k]) for k in ("name", "title", "description") if isinstance(data.get(k), str)
            )
            return f"{head}\n{data[key]}" if head else data[key]
    return None


def skills(snapshot: dict[str, Any]) -> list[Document]:
    return [
        Document(
            "skill",
            str(s["slug"]),
            str(s.get("name") or s["slug"]),
            f"{s.get('name', '')} {s.get('description', '')}",
        )
        for s in snapshot.get("skills") or []
        if isinstance(s, dict) and s.get("slug")
    ]


def notes(snapshot: dict[str, Any]) -> list[Document]:
    """The notes on the open dashboard: already read, since the snapshot shows their text."""
    out = []
    for w in (snapshot.get("dashboard_composition") or {}).get("widgets") or []:
        if w.get("generated") and isinstance(w.get("generated_data"), str):
            name = str(w.get("name") or "note")
            out.append(
                Document("note", str(w.get("widget_uuid")), name, name, f"{name}\n{w['generated_data']}")
            )
    return out


def prompts(tools: list[dict[str, Any]]) -> list[Document]:
    """The workspace prompts, named by the enum of get_workspace_prompt's schema when the tool is allowed; a
    request names one in words ("the workspace session context prompt")."""
    tool = next((t for t in tools if t.get("name") == "get_workspace_prompt"), None)
    names = (((tool or {}).get("parameters") or {}).get("properties") or {}).get("name", {}).get("enum") or []
    return [Document("prompt", str(n), str(n).replace("_", " "), str(n).replace("_", " ")) for n in names]


def index_uri(tools: list[dict[str, Any]]) -> str | None:
    """Where the resources are listed: the URI the read_workspace_resource tool says to start at."""
    tool = next((t for t in tools if t.get("name") == "read_workspace_resource"), None)
    found = URI.search(str((tool or {}).get("description") or ""))
    return found.group(0) if found else None


def resources(index_text: str) -> list[Document]:
    """The resources an index lists: every URI with the words of its line. A table row's first cell is the
    resource's title (how a request names it); otherwise the title is the URI's last segment read as words
    ("widget-parameters" → "widget parameters": a prose index names no title, a request names the words)."""
    out, seen = [], set()
    for line in index_text.splitlines():
        cells = (
            [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        )
        title = cells[0] if cells and cells[0] and not URI.search(cells[0]) else ""
        for uri in URI.findall(line):
            if uri not in seen:
                seen.add(uri)
                words = URI.sub(" ", line).replace("|", " ")
                tail = uri.rsplit("/", 1)[-1]
                out.append(
                    Document(
                        "resource", uri, title or tail.replace("-", " "), f"{words} {tail.replace('-', ' ')}"
                    )
                )
    return out


def resource_at(uri: str) -> Document:
    """A resource known only by its URI (a document another one sends the reader to)."""
    tail = uri.rsplit("/", 1)[-1]
    return Document("resource", uri, tail, tail.replace("-", " "))


def rank(documents: list[Document], query: str) -> list[Document]:
    """Documents by how well what is known of them matches the query; ones sharing no word are left out."""
    if not documents:
        return []
    return [documents[i] for i, _ in BM25([d.summary for d in documents]).rank(query)]


def _stated(text: str, param: dict[str, Any]) -> list[Mention]:
    """Options of `param` that `text` states as the catalog writes them."""
    return option_mentions(text, param, as_written=True)


@functools.lru_cache(maxsize=2048)
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A phrase matched across case, hyphens and apostrophes ("pulled-orders rule" ≡ "Pulled orders rule").
    Compiled once per phrase (remembered: `re`'s own cache is too small for a certification's patterns)."""
    return re.compile(
        r"(?<![A-Za-z0-9])"
        + r"[^A-Za-z0-9\n]{1,3}".join(map(re.escape, _phrase_tokens(phrase)))
        + r"(?![A-Za-z0-9])",
        re.I,
    )


@functools.lru_cache(maxsize=2048)
def _phrase_tokens(phrase: str) -> tuple[str, ...]:
    tokens = [t for t in re.split(r"[^A-Za-z0-9]+", phrase) if t]
    if tokens and tokens[0].lower() == "the":
        tokens = tokens[1:]
    return tuple(tokens)


_lowered = functools.lru_cache(maxsize=1024)(str.lower)


def may_state(text: str, phrase: str) -> bool:
    """False only where `phrase_pattern(phrase)` cannot match in `text` (in the whole of it or any part): a
    word of the phrase is not in it. Its words are ASCII; in an ASCII text ignoring case is lowering both (`re`
    pairs two ASCII letters with non-ASCII ones, so any other text is left to the pattern). Asked first, it
    spares compiling a pattern for each phrase a reader looks for in a document that does not hold it."""
    tokens = _phrase_tokens(phrase)
    if not tokens or not text.isascii():
        return True
    low = _lowered(text)
    return all(t.lower() in low for t in tokens)


def _lines(text: str) -> list[tuple[int, int]]:
    out, start = [], 0
    for line in text.split("\n"):
        out.append((start, start + len(line)))
        start += len(line) + 1
    return out


def policy_value(text: str, phrase: str, param: dict[str, Any], others: list[str]) -> Mention | None:
    """The option of `param` that `text` assigns to the policy `phrase`: stated after the phrase on its line (up
    to where another policy starts), else before it on the same line, else on the next line (a heading
    followed by its rule). `others` are the phrases of other policies, which bound the search."""
    if not may_state(text, phrase):
        return None
    pattern = phrase_pattern(phrase)
    # a fence that cannot match in the text bounds nothing in it
    fences = [phrase_pattern(o) for o in others if o.lower() != phrase.lower() and may_state(text, o)]
    spans = _lines(text)
    for m in pattern.finditer(text):
        line = next(((a, b) for a, b in spans if a <= m.start() <= b), (0, len(text)))
        index = spans.index(line) if line in spans else -1
        stops = sorted(f.start() for p in fences for f in p.finditer(text, m.end(), line[1]))
        after = [x for x in _stated(text[m.end() : stops[0] if stops else line[1]], param)]
        if after:
            first = after[0]
            return Mention(first.start + m.end(), first.end + m.end(), first.value, first.text)
        starts = [f.end() for p in fences for f in p.finditer(text, line[0], m.start())]
        floor = max(starts, default=line[0])
        before = _stated(text[floor : m.start()], param)
        if before:
            last = before[-1]
            return Mention(last.start + floor, last.end + floor, last.value, last.text)
        if 0 <= index < len(spans) - 1:
            a, b = spans[index + 1]
            below = _stated(text[a:b], param)
            if below and not any(p.search(text, a, b) for p in fences):
                return Mention(below[0].start + a, below[0].end + a, below[0].value, below[0].text)
    return None


def defines(text: str, phrase: str) -> bool:
    return may_state(text, phrase) and phrase_pattern(phrase).search(text) is not None


def units(text: str) -> list[str]:
    """A document cut into the pieces a question can point at: its numbered or bulleted steps when it has
    them, else its non-empty lines, else its sentences."""
    return list(_units(text))


@functools.lru_cache(maxsize=512)
def _units(text: str) -> tuple[str, ...]:
    # pure, and a world's few documents are cut again by every reader of every task that points into them
    return tuple(_cut(text))


def _cut(text: str) -> list[str]:
    steps = [m for m in _STEP.finditer(text)]
    if len(steps) >= 2:
        out = []
        for i, m in enumerate(steps):
            end = steps[i + 1].start() if i + 1 < len(steps) else len(text)
            piece = text[m.end() : end].strip().split("\n\n", 1)[0]
            out.append(" ".join(piece.split()))
        return [u for u in out if u]
    raw = text.splitlines()
    headers = {i for i, ln in enumerate(raw[:-1]) if _TABLE_RULE.match(raw[i + 1])}
    lines = [
        ln.strip(" |")
        for i, ln in enumerate(raw)
        if ln.strip(" |-") and not ln.lstrip().startswith("#") and i not in headers
    ]
    if len(lines) >= 2:
        return lines
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def position_asked(question: str) -> int | None:
    """The step a question points at by position: the last or final one, the first, the Nth."""
    low = question.lower()
    if re.search(r"\b(last|final)\b", low):
        return -1
    m = re.search(r"\bstep\s+(\d+)\b", low)
    if m:
        return int(m.group(1)) - 1
    for word, index in _ORDINALS.items():
        if re.search(rf"\b{word}\b", low):
            return index
    return None


# A pointer that names a piece by its label: "its row for Lantern Macro", "its point on the red-folder case",
# "its entry for Hurdle".
_LABELLED = re.compile(r"\b(?:row|point|entry)\s+(?:for|on)\s+(.+)", re.I | re.S)
_BOLD = re.compile(r"^\*\*(.+?)\*\*")


def _label(piece: str) -> str:
    """What a piece is named by: a table row's first cell, a point's or an entry's bold lead (else "")."""
    if " | " in piece:
        return piece.split(" | ", 1)[0].strip()
    bold = _BOLD.match(piece.strip())
    return bold.group(1).strip() if bold else ""


def labelled_unit(pieces: list[str], question: str) -> str | None:
    """The piece a question names by its label ("its row for Backtest pass"): a reader following the pointer
    goes to the row whose first cell (or the point whose bold lead) it names, whatever other words of the
    request — the document's own title, "read", "use" — happen to be in other rows. The longest label the
    pointer starts with wins (the row for "Keel Core Equity", not one for "Keel"; the first such piece on a
    tie)."""
    best: tuple[int, str] | None = None
    forms = None
    for m in _LABELLED.finditer(question):
        said = " ".join(m.group(1).split()).casefold()
        forms = forms or _label_forms(tuple(pieces))
        for form, piece in forms:
            if not said.startswith(form):
                continue
            whole = len(said) == len(form) or not said[len(form)].isalnum()
            if whole and (best is None or len(form) > best[0]):
                best = (len(form), piece)
    return best[1] if best else None


@functools.lru_cache(maxsize=512)
def _label_forms(pieces: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Every spelling a pointer may give each piece's label by (as written, without its article, with "the"),
    in the pieces' order: worked out once per document, not once per pointer the Ground rung follows."""
    out: list[tuple[str, str]] = []
    for piece in pieces:
        label = " ".join(_label(piece).split()).casefold()
        if not label:
            continue
        bare = re.sub(r"^(?:the|a|an)\s+", "", label)
        out += [(form, piece) for form in dict.fromkeys((label, bare, f"the {bare}"))]
    return tuple(out)


def asked_unit(text: str, question: str) -> str | None:
    """The part of a document a question asks about: the piece it names by its label, else the step it points
    at by position, else the piece whose words best match it."""
    pieces = units(text)
    if not pieces:
        return None
    named = labelled_unit(pieces, question)
    if named is not None:
        return named
    index = position_asked(question)
    if index is not None and -len(pieces) <= index < len(pieces):
        return pieces[index]
    ranker = BM25(pieces)
    head = _SUBORDINATE.split(question, maxsplit=1)[0]
    for query in (head, question) if len(terms(head)) >= 2 else (question,):
        names = [n for n in _NAMED.findall(query) if " " in n or n.isupper()]
        scores = ranker.scores(query)
        best = max(
            range(len(pieces)),
            key=lambda i: (sum(1 for n in names if n.lower() in pieces[i].lower()), scores[i], -i),
        )
        if scores[best] > 0:
            return pieces[best]
    return None


def cross_reference(unit: str, known: list[Document]) -> Document | None:
    """The document a piece of text sends the reader to ("see openbb://…", "as set out in the X skill"): a
    known document, or the resource at the URI it gives."""
    if not _XREF.search(unit):
        return None
    for uri in URI.findall(unit):
        return next((d for d in known if d.key == uri), None) or resource_at(uri)
    low = unit.lower()
    for d in sorted(known, key=lambda d: -len(d.title)):
        if d.kind in ("skill", "resource") and len(terms(d.title)) >= 2 and d.title.lower() in low:
            return d
    return None


def value_in_piece(piece: str | None, text: str, param: dict[str, Any]) -> Any | None:
    """The first option of `param` a piece of a document states (else the only option the whole document
    names)."""
    if piece:
        said = _stated(piece, param)
        if said:
            return said[0].value
    values = {str(m.value): m.value for m in _stated(text, param)}
    return next(iter(values.values())) if len(values) == 1 else None


_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]")


def quoted(piece: str) -> str | None:
    """The first name a piece of text quotes ('a tab titled "Pulled Clips"')."""
    found = _QUOTED.search(piece)
    return found.group(1).strip() if found else None
