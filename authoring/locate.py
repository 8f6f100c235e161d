"""Where a fact sits in a knowledge document, said so that a request can point at it and a reader can find it.

A Ground level names a source and points at one piece of it ("the row for Lantern Macro in the Stress Scenario
Catalogue"). The pointer is generated here from the document's structure — a table row (by its first cell), a
numbered step (by its number), a point of a list (by its bold lead, else its ordinal), a glossary entry (by its
term) — and then checked the way an agent reads it: `certify.agents.knowledge.asked_unit` must land on the piece
holding the fact. A fact no piece holds, or that two pieces hold, or whose pointer a reader would resolve to
another piece, is an error the story writer sees before authoring, with what the document does offer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from certify import asked_unit, words

_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_STEP = re.compile(r"^\s*(\d+)[.)]\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*•]\s+(.*)$")
_BOLD_LEAD = re.compile(r"^\*\*(.+?)\*\*\s*[:—–-]?\s*")
_TERM_LINE = re.compile(r"^\s*\*\*(.+?)\*\*\s*[:—–-]\s*\S")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


@dataclass(frozen=True)
class Piece:
    """One piece of a document a request can point at."""

    kind: str  # "row", "step", "point", "entry", "sentence"
    text: str  # the piece as a reader sees it (a row's cells joined by " | ")
    position: str  # "its row for Lantern Macro", "step 3 of its workflow"
    topic: str = ""  # what the piece is about where the fact is ("the committee scenario"), or ""
    header: tuple[str, ...] = ()  # a row's table header
    ordinal: str = ""  # a point's position by count ("the fourth point of its list"), when its lead misleads

    @property
    def where(self) -> str:
        """position and topic in the form the world's `planted[].where` uses."""
        return f"{self.position} ({self.topic})" if self.topic else self.position


@dataclass(frozen=True)
class Located:
    piece: Piece | None
    problem: str = ""  # why the fact cannot be pointed at ("" when it can)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _plain(text: str) -> str:
    return " ".join(text.replace("**", "").split())


def _flat(text: str) -> str:
    """A piece compared across the ways a reader and this module cut it (cell bars, bold, spacing)."""
    return re.sub(r"[\s|*]+", " ", text).strip().casefold()


def _lower_name(name: str) -> str:
    """A bold lead as a request says it mid-sentence ("The worst-first pricing rule" → "the worst-first …")."""
    first, _, rest = name.partition(" ")
    if first in {"The", "A", "An"}:
        return f"{first.lower()} {rest}"
    return name


def pieces(text: str, list_word: str = "list") -> list[Piece]:
    """Every piece of `text`, in order. `list_word` is what its numbered steps are called ("workflow")."""
    lines = text.splitlines()
    out: list[Piece] = []
    header: list[str] = []
    bullets = 0
    i = 0
    prose: list[str] = []

    def flush() -> None:
        body = " ".join(" ".join(prose).split())
        prose.clear()
        for sentence in re.split(r"(?<=[.!?])\s+", body):
            if sentence.strip():
                out.append(Piece("sentence", _plain(sentence), ""))

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            flush()
            i += 1
            continue
        if stripped.startswith("|"):
            flush()
            if i + 1 < len(lines) and _RULE.match(lines[i + 1]):
                header = _cells(line)
                i += 2
                continue
            if not _RULE.match(line):
                cells = _cells(line)
                out.append(Piece("row", " | ".join(cells), f"its row for {cells[0]}", "", tuple(header)))
            i += 1
            continue
        step, bullet = _STEP.match(line), _BULLET.match(line)
        if step or bullet:
            flush()
            body = [(step or bullet).group(2 if step else 1)]  # type: ignore[union-attr]
            i += 1
            while i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():
                if _STEP.match(lines[i]) or _BULLET.match(lines[i]):
                    break
                body.append(lines[i].strip())
                i += 1
            joined = " ".join(body)
            bullets += 1
            if step:
                out.append(Piece("step", _plain(joined), f"step {step.group(1)} of its {list_word}"))
                continue
            lead = _BOLD_LEAD.match(joined)
            count = (
                f"the {ORDINALS[bullets - 1]} point of its {list_word}" if bullets <= len(ORDINALS) else ""
            )
            if lead:
                position = f"its point on {_lower_name(lead.group(1))}"
                out.append(Piece("point", _plain(joined), position, ordinal=count))
            else:
                out.append(Piece("point", _plain(joined), count or "the  point"))
            continue
        term = _TERM_LINE.match(line)
        if term:
            flush()
            out.append(Piece("entry", _plain(stripped), f"its entry for {term.group(1)}"))
            i += 1
            continue
        prose.append(stripped)
        i += 1
    flush()
    return out


def _column_topic(piece: Piece, fact: str) -> str:
    """The header of the column a row's fact is in ("the committee scenario"), when it is not the first."""
    header = piece.header
    cells = piece.text.split(" | ")
    for index, cell in enumerate(cells):
        if fact.casefold() in cell.casefold() and 0 < index < len(header) and header[index]:
            return f"the {header[index][:1].lower()}{header[index][1:]}"
    return ""


def locate(text: str, fact: str, list_word: str = "list") -> Located:
    """The piece of `text` holding `fact`, with a pointer a reader resolves to that piece (checked with the
    agents' own reading), or why there is none."""
    needle = _plain(fact).casefold()
    found = [p for p in pieces(text, list_word) if needle in p.text.casefold()]
    if not found:
        return Located(None, "no row, step, point or entry of it holds the fact")
    if len(found) > 1:
        listed = "; ".join(f"'{p.text[:60]}'" for p in found[:3])
        return Located(None, f"{len(found)} pieces of it say it ({listed}): a fact must sit in one")
    piece = found[0]
    if piece.kind == "sentence":
        every = [p for p in pieces(text, list_word) if p.kind == "sentence"]
        for position, edge in (("its last point", every[-1]), ("its first point", every[0])):
            if edge == piece:
                piece = Piece("sentence", piece.text, position)
    if (piece.kind == "sentence" and not piece.position) or piece.position.startswith("the  "):
        return Located(
            None,
            f"it sits in running prose ('{piece.text[:60]}'), which a request cannot point at; "
            "put it in a row, step, point or entry",
        )
    topic = _column_topic(piece, fact) if piece.kind == "row" else ""
    resolved = _resolved(text, piece, topic, fact)
    if resolved is None:
        pointer = f"{piece.position} {topic}".strip()
        unit = asked_unit(text, pointer)
        # say why it lands there: the words the other passage shares with the pointer (often the column
        # header an intro sentence repeats, "one standing instruction per line of work")
        shared = sorted(words(unit or "") & words(pointer))
        why = (
            f" (it shares {', '.join(repr(w) for w in shared)} with the pointer '{pointer}')"
            if shared
            else ""
        )
        return Located(
            None,
            f"a reader pointed at {piece.position} lands on '{(unit or '')[:60]}' instead{why}; "
            "reword that passage without those words, or give the piece a distinct lead or first cell",
        )
    return Located(resolved)


def _resolved(text: str, piece: Piece, topic: str = "", fact: str = "") -> Piece | None:
    """The piece with the first of its pointers a reader resolves back to it (its lead, else its count): the
    piece a reader lands on holds the fact (or is this piece, when no fact is given)."""
    for position in (piece.position, piece.ordinal):
        if not position:
            continue
        unit = asked_unit(text, f"{position} {topic}".strip())
        if unit is None:
            continue
        if (_flat(fact) in _flat(unit)) if fact else _flat(unit) == _flat(piece.text):
            return Piece(piece.kind, piece.text, position, topic, piece.header)
    return None


def offered(text: str, list_word: str = "list") -> list[Piece]:
    """The pieces of a document a fact can be grounded in (every non-prose piece a reader resolves)."""
    out = []
    for piece in pieces(text, list_word):
        if piece.kind == "sentence" or piece.position.startswith("the  "):
            continue
        resolved = _resolved(text, piece)
        if resolved is not None:
            out.append(resolved)
    return out
