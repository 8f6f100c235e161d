"""What a request asks, read literally: which widgets it names or describes, what to do with each (add, repair,
read), with which stated values, which instances it fences off, which policy phrases stand in for a value,
which knowledge sources it names, and which note it wants.

Pure functions of the prompt and of what the agent was shown (snapshot, catalog listing, schemas). The
capability ladder composes them: a rung decides which of these readings it is allowed to act on.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .reading import Mention, find, finds, listing, named_widgets, option_mentions
from .retrieval import BM25, terms

OpKind = Literal["create", "update", "read"]

_ABBREVIATION_WORDS = "St Mr Mrs Ms Dr No Inc Co Ltd vs etc e.g i.e approx"
_ABBREVIATIONS = tuple(_ABBREVIATION_WORDS.split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9])")

# A clause that fences off a twin: another instance the request must leave as it is.
TWIN = re.compile(
    r"\b(?:the|a)\s+(?:other|second|separate)\b|\bthere is also\b|\bbelongs to\b|\bserves another\b"
    r"|\b(?:do not|don't|never)\s+(?:touch|change|modify|alter|edit)\b"
    r"|\bleave\s+(?:the|that|this|it|them|those)\b[^.;]{0,120}?\balone\b"
    r"|\bmust not (?:be )?chang|\bmust stay\b|\b(?:is|are) (?:already )?(?:right|correct)\b"
    r"|\bstays? (?:as it is|as is|untouched)\b",
    re.I,
)

# ("Get … up on the board", the phrasebook's split verb, is an add)
_VERBS: dict[OpKind, re.Pattern[str]] = {
    "update": re.compile(
        r"\b(repair|fix|correct|rectify|restore|reset|re-?point|re-?cut|switch|flip|misconfigured"
        r"|set up wrong|wrong|set(?! up| down| to| by))\b",
        re.I,
    ),
    "create": re.compile(
        r"\b(add|put(?: up)?|bring(?: up| in)?|place|pin|drop|open up|need|show|display|stand up"
        r"|set up(?! wrong)|get(?=[^.;]*\bup\s+on\b))\b",
        re.I,
    ),
    "read": re.compile(r"\b(read(?: off)?|pull(?: up)?|look up|check|inspect|consult)\b", re.I),
}
# ("it should read AAPL" says a value; "Time to read …", the phrasebook's opener, is still the instruction)
_NOT_A_READ = re.compile(r"\b(?:should|it|(?<!time )to|must|would)\s+read\b", re.I)
# Words after which a stated value is the one to leave behind, not the one asked for.
_STALE = re.compile(
    r"\b(currently shows|currently reads|is showing|shows|showing|that has|has parameters|"
    r"from parameters?|instead of|stale|was set to|is set to|left at)\b",
    re.I,
)
_TARGET = re.compile(
    r"\b(to|with|using|for|setting|set|should read|read|cut|so that|back|is|are)\b|[=:]", re.I
)
RECORD_SERVED = re.compile(
    r"\b(as served|as the view serves|as it serves|exactly as served|as returned|the returned"
    r"|as shown|as displayed)\b",
    re.I,
)
# One more instance of a widget the request names, asked in a clause of the sentence that names it ("…, plus a
# copy beside it per the interim rule"): the same widget on the same stated values, but for the parameter the
# clause's own policy decides.
COPY = re.compile(r"\b(?:a|one more) copy\b", re.I)
_THEN_READ = re.compile(r"\bthen read (?:it|them)\b", re.I)
QUESTION = re.compile(r"\?|\b(tell me|report back|let me know|reply with|answer with)\b", re.I)

# The nouns a policy phrase ends with ("the pulled-orders rule", "the evaluated-bond-pricing vendor").
_POLICY_NOUN_WORDS = (
    "rule policy convention standard limit case guideline guidelines practice mandate vendor window principle "
    "regime playbook protocol procedure stance approach rulebook norm requirement"
)
_POLICY_NOUNS = tuple(_POLICY_NOUN_WORDS.split())
POLICY_NOUNS = _POLICY_NOUNS
_PHRASE_WORD = r"(?:(?!the\b|and\b|with\b|for\b|to\b|of the\b)[\w'’&/+-]+)"
_TRAILED = re.compile(
    r"\bthe\s+((?:" + _PHRASE_WORD + r"\s+){0,6}?" + _PHRASE_WORD + r")\s+"
    r"(?:says|sets it|sets|calls for|requires|dictates|gives|specifies|prescribes|demands|mandates|"
    r"lays down|asks for)\b",
    re.I,
)
_ASKED = re.compile(r"\b(?:what|which|how|where|when|who|whom)\s+$", re.I)
_LED = re.compile(
    r"\b(?:per|as|whatever|follows|following|under|by|according to|in line with|configured under)"
    r"\s+the\s+((?:" + _PHRASE_WORD + r"\s+){0,6}?(?:" + "|".join(_POLICY_NOUNS) + r"))\b",
    re.I,
)


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence; a period after a common abbreviation ("St. Brennan") does not end one."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        before = text[start : m.start()]
        if any(before.endswith(f" {a}.") or before == f"{a}." for a in _ABBREVIATIONS):
            continue
        out.append((start, m.start()))
        start = m.end()
    out.append((start, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


@dataclass(frozen=True)
class Policy:
    """A phrase that stands in for a value ("the pulled-orders rule"), where it occurs, and the words around it
    that say which parameter it sets."""

    phrase: str
    start: int
    end: int


def reads_as_policy(phrase: str) -> bool:
    """Whether the agents take `phrase` for a policy wherever a request puts it ("per …", "in line with …"):
    it ends with one of the policy nouns (rule, convention, case, limit, …)."""
    bare = re.sub(r"^(?:the|a|an)\s+", "", phrase.strip(), flags=re.I)
    return any(bare.lower().startswith(p.phrase.lower()) for p in policies(f"Set it per the {bare}."))


def policies(text: str) -> list[Policy]:
    return list(_policies(text))


@functools.lru_cache(maxsize=4096)
def _policies(text: str) -> tuple[Policy, ...]:
    # pure (a Policy is frozen), and every reader of a request asks it of the same prompt
    found: dict[int, Policy] = {}
    for pattern in (_TRAILED, _LED):
        for m in pattern.finditer(text):
            phrase = m.group(1).strip()
            if (
                len(terms(phrase)) < 1
                or m.start(1) in found
                or _ASKED.search(text[max(0, m.start() - 12) : m.start()])
            ):
                continue
            if any(p.start <= m.start(1) < p.end for p in found.values()):
                continue
            found[m.start(1)] = Policy(phrase, m.start(1), m.start(1) + len(phrase))
    return tuple(sorted(found.values(), key=lambda p: p.start))


@dataclass
class Target:
    """A catalog widget the request is about, and where the request talks about it."""

    widget: dict[str, Any]
    positions: list[int]
    described: str | None = None
    # what a note's entry pointing at it says its instance shows ("on TSLA" of "Live Grid on TSLA"): the
    # instance to work on when twins of it are placed beside it ("" when the entry names the widget only)
    shows: str = ""

    @property
    def widget_id(self) -> str:
        return str(self.widget["widget_id"])

    @property
    def origin(self) -> str:
        return str(self.widget["origin"])


@dataclass
class Op:
    """One thing to do to a target: what, where the prompt asks it, and with which values (filled as they are
    read, derived or grounded)."""

    kind: OpKind
    target: Target
    position: int
    args: dict[str, Any] = field(default_factory=dict)
    # a copy the request asks for beside the widget (`COPY`): the clause that asks it, whose policy decides the
    # copy alone; None for an operation on a widget the request names
    clause: tuple[int, int] | None = None


@dataclass
class Request:
    """The literal reading of a prompt against what the agent was shown."""

    prompt: str
    spans: list[tuple[int, int]]
    twins: list[tuple[int, int]]
    policies: list[Policy]
    names: list[tuple[int, int]] = field(default_factory=list)
    # parenthesised contrasts ("(not the view of …)"): fenced like twins, but they fence off no placed instance
    contrasts: list[tuple[int, int]] = field(default_factory=list)
    # clauses asking for a copy of a named widget (`copy_clauses`): what they say is about the copy only
    copies: list[tuple[int, int]] = field(default_factory=list)

    def name(self, names: Sequence[str], more: Sequence[str] = ()) -> None:
        """Mark where the prompt says the name of something (a widget, an app, a dashboard, a skill): an
        option value inside a name ("Working" in "Working Orders") is not a stated value. `more`: names after
        `names`, marked as if they ended it (`names` a listing's, the same tuple for every request read
        against that listing: its indexes are built once, the few names of one workspace apart)."""
        # a listing repeats its apps and origins: each is looked for once, and its places are marked once per
        # time `names` holds it, in the order it holds them (only the names found are visited: a listing's
        # hundreds are mostly not in the prompt)
        names, more = tuple(names), tuple(more)
        found = finds(self.prompt, names)
        if more:
            found.update(finds(self.prompt, more))
        if not found:
            return
        held, after = _held_at(names), _held_at(more) if more else {}
        places = [
            (i, n) for n in found for i in (*held.get(n, ()), *(len(names) + j for j in after.get(n, ())))
        ]
        for _, name in sorted(places):
            self.names += [(p, p + len(name)) for p in found[name]]

    def sentence_of(self, position: int) -> tuple[int, int]:
        return next((s for s in self.spans if s[0] <= position < s[1]), (0, len(self.prompt)))

    def in_twin(self, position: int) -> bool:
        return any(a <= position < b for a, b in [*self.twins, *self.contrasts])

    def live(self, positions: list[int]) -> list[int]:
        return [p for p in positions if not self.in_twin(p)]


@functools.lru_cache(maxsize=64)
def _held_at(names: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Where each name occurs in `names` (one index per listing's names and the rest, built once)."""
    at: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        at.setdefault(n, []).append(i)
    return {n: tuple(v) for n, v in at.items()}


# A parenthesised contrast ("(not the view of …)", one level of nested parentheses inside): it says what the
# request does not mean, so nothing it names or describes is a target.
CONTRAST = re.compile(r"\(\s*not\b(?:[^()]|\([^()]*\))*\)", re.I)


def read_request(prompt: str) -> Request:
    spans = sentences(prompt)
    found = policies(prompt)
    # a policy phrase is the persona's name for a rule, not a clause about another instance: "the
    # second-reader export policy" fences nothing off, so its words are not read for a twin
    unfenced = _masked(prompt, [(p.start, p.end) for p in found])
    twins = [s for s in spans if TWIN.search(unfenced[s[0] : s[1]])]
    contrasts = [(m.start(), m.end()) for m in CONTRAST.finditer(prompt)]
    request = Request(prompt, spans, twins, found, contrasts=contrasts)
    request.copies = copy_clauses(request)
    return request


def named_targets(
    request: Request, catalog: list[dict[str, Any]], other_names: Sequence[tuple[int, int]] = ()
) -> list[Target]:
    """Catalog widgets the prompt names outside the clauses that fence off twins and outside the names of other
    things (a skill called "Daloopa Capital Allocation" does not name the widget "Capital Allocation")."""
    text = _masked(request.prompt, [*request.twins, *request.contrasts, *other_names])
    out = []
    for w in named_widgets(text, catalog, limit=6):
        positions = request.live(find(text, str(w["name"])))
        if positions:
            out.append(Target(w, positions))
    return out


def masked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the spans blanked (the names a request says, the clauses it fences off), positions kept."""
    return _masked(text, spans)


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


_BOUNDARY = re.compile(r"[.;:!?—–()]|\b(?:along with|as well as|plus|then|and then)\b")


def description_cuts(text: str) -> list[str]:
    """The marks and words in `text` at which the agents end a description (`_BOUNDARY`: a parenthesis, a colon,
    a dash, "plus", "then" …): said inside a find hint, the Find rung reads only what follows the last of them.
    `taskforge check` refuses a hint holding one."""
    return list(dict.fromkeys(m.group(0) for m in _BOUNDARY.finditer(text)))


def description_read(text: str) -> str:
    """What the agents read of a description said as `text`: the words after its last cut."""
    return _BOUNDARY.split(text)[-1].strip(" ,")


def described_spans(
    request: Request, origins: list[str], apps: list[str], named: list[Target]
) -> list[tuple[int, int, str, list[str]]]:
    """Phrases that stand for a widget without naming it: the words before "from <origin or app>" back to the
    verb or punctuation that opens them, less the names of widgets already named there. Returns (start, end,
    description, the origins/apps the phrase says it comes from)."""
    prompt = request.prompt
    out = []
    for m in re.finditer(r"\bfrom\s+(?:the\s+)?", prompt, re.I):
        tail = re.split(r"[.;:,!?]", prompt[m.end() : m.end() + 60], maxsplit=1)[0]
        # the origin belongs to this "from" unless another "from" comes first ("… come from <widget> from <origin>")
        sources = [
            s
            for s in origins
            if s and (hits := find(tail, s)) and not re.search(r"\bfrom\b", tail[: hits[0]], re.I)
        ]
        rest = prompt[m.end() :].lower()
        for origin in sources:
            if rest.startswith(origin.lower() + "'s "):
                rest = rest[len(origin) + 3 :]
        sources += [
            a
            for a in apps
            if a and rest.startswith(a.lower()) and not (len(rest) > len(a) and (rest[len(a)].isalnum()))
        ]
        if not sources or request.in_twin(m.start()):
            continue
        start = m.start()
        head = prompt[request.sentence_of(m.start())[0] : m.start()]
        cut = 0
        for pattern in (*_VERBS.values(), _BOUNDARY):
            for v in pattern.finditer(head):
                cut = max(cut, v.end())
        begin = request.sentence_of(m.start())[0] + cut
        phrase = prompt[begin:start]
        last = max(
            (pos + len(str(t.widget["name"])) for t in named for pos in t.positions if begin <= pos < start),
            default=-1,
        )
        if last >= 0 and not prompt[last:start].strip():
            # "from <origin>" belongs to the widget named right before it; a description can only precede that
            # name, joined to it by "and" or a comma ("the family's flows and Redemption Notices from …")
            first = min(pos for t in named for pos in t.positions if begin <= pos < start)
            joined = re.search(r"(?:,|\band)\s*$", prompt[begin:first])
            if joined is None:
                continue
        for t in named:
            for pos in t.positions:
                if begin <= pos < start:
                    name = str(t.widget["name"])
                    phrase = phrase.replace(prompt[pos : pos + len(name)], " ")
        for a, b in request.names:
            if begin <= a and b <= start:
                phrase = phrase.replace(prompt[a:b], " ")
        phrase = re.sub(r"\b(?:and|both|also|the built)\b", " ", phrase, flags=re.I)
        if len(terms(phrase)) >= 2:
            out.append((begin, start, " ".join(phrase.split()), sources))
    return out


def described_pools(
    request: Request, catalog: list[dict[str, Any]], named: list[Target], on_dashboard: set[str]
) -> list[tuple[int, int, str, list[dict[str, Any]]]]:
    """Each phrase that describes a widget, with the catalog entries it may mean: those of the origin or app the
    phrase names (the ones on the open dashboard when the phrase asks for a repair), less the named ones."""
    listed = listing(catalog)
    taken = {t.widget_id for t in named}
    out = []
    for begin, end, phrase, sources in described_spans(request, listed.origins, listed.apps, named):
        pool = listed.of(sources)
        narrowed = [w for w in pool if w.get("category") in sources]
        pool = [w for w in (narrowed or pool) if str(w["widget_id"]) not in taken]
        if op_kind(request, begin, end) == "update":
            placed = [w for w in pool if str(w["widget_id"]) in on_dashboard]
            pool = placed or pool
        if pool:
            out.append((begin, end, phrase, pool))
    return out


def served_text(schema: dict[str, Any]) -> str:
    """What a widget serves, as words: its columns' headers and the labels of what it can be filtered by. Find matches a description against this, not against the catalog's own
    description: the person describes what they want to see, and that is what the schema says is served."""
    return " ".join(served_parts(schema))


def served_parts(schema: dict[str, Any]) -> list[str]:
    """What a widget serves, part by part (each column header, then each filter label, once each): the pieces
    `served_text` joins, and what a content description is coined from."""
    parts: list[str] = []
    table = (schema.get("schema_data") or {}).get("table") or {}
    for column in table.get("columnsDefs") or []:
        if isinstance(column, dict):
            parts.append(str(column.get("headerName") or column.get("field") or ""))
    for param in schema.get("params") or []:
        if isinstance(param, dict):
            parts.append(str(param.get("label") or param.get("paramName") or ""))
    return list(dict.fromkeys(p for p in parts if p))


# An entry of a note that points at a widget: "<label>: <widget name>" on a line of its own.
_ENTRY = re.compile(r"^\s*(?:[-*•]\s*)?([^:\n]{2,60}?)\s*:\s*(.+?)\s*\.?\s*$", re.M)


def note_entries(text: str) -> list[tuple[str, str]]:
    """(label, what it names) of each "<label>: <name>" line of a note."""
    return [(m.group(1).strip(), m.group(2).strip()) for m in _ENTRY.finditer(text)]


def pointed(
    phrase: str, pool: list[dict[str, Any]], notes: Sequence[tuple[str, str]]
) -> dict[str, Any] | None:
    """The widget a description points at through a note (`notes`: (name, text) of each note the agent was
    shown): the phrase names the note and one of its entries' labels ("the widget the Desk Shortlist lists for
    the first look"), and that entry names a widget of the pool. None when the phrase points at no entry."""
    found = pointed_entry(phrase, pool, notes)
    return found[0] if found is not None else None


def pointed_entry(
    phrase: str, pool: list[dict[str, Any]], notes: Sequence[tuple[str, str]]
) -> tuple[dict[str, Any], str] | None:
    """`pointed`, with what the entry says its instance shows after the widget's name ("TSLA" of "Live Grid on
    TSLA", "" when it names the widget only): with twins of the widget placed, that is which one is meant."""
    for name, text in notes:
        if not name or not find(phrase, name):
            continue
        hits = [(len(label), said) for label, said in note_entries(text) if find(phrase, label)]
        for _, said in sorted(hits, reverse=True):
            folded = said.casefold()
            widget = next((w for w in pool if str(w.get("name") or "").casefold() == folded), None)
            if widget is not None:
                return widget, ""
            for w in pool:
                head = f"{w.get('name') or ''} on ".casefold()
                if len(head) > 4 and folded.startswith(head):
                    return w, said[len(head) :].strip()
    return None


def shown_by(shows: str, args: dict[str, Any]) -> int:
    """How many of an instance's values (`args`) a pointer entry's `shows` says (`pointed_entry`)."""
    said = [v if isinstance(v, str) else str(v) for v in args.values() if v is not None]
    return sum(1 for v in said if re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", shows, re.I))


def find_described(
    request: Request,
    catalog: list[dict[str, Any]],
    named: list[Target],
    on_dashboard: set[str],
    schemas: dict[str, dict[str, Any]],
    notes: Sequence[tuple[str, str]] = (),
) -> list[Target]:
    """Widgets found from their description: the widget a note's entry names when the description points at
    that entry (`pointed`), else BM25 of the phrase over what each candidate serves (its schema's columns and
    filters, `served_text`), among the entries `described_pools` leaves. A candidate whose schema was not read
    is matched on nothing."""
    taken = {t.widget_id for t in named}
    out: list[Target] = []
    for begin, end, phrase, pool in described_pools(request, catalog, named, on_dashboard):
        pool = [w for w in pool if str(w["widget_id"]) not in taken]
        if not pool:
            continue
        entry = pointed_entry(request.prompt[begin:end], pool, notes)
        widget, shows = entry if entry is not None else (None, "")
        if widget is None:
            ranked = BM25([served_text(schemas.get(str(w["widget_id"])) or {}) for w in pool]).rank(phrase)
            widget = pool[ranked[0][0]] if ranked else None
        if widget is not None:
            taken.add(str(widget["widget_id"]))
            out.append(Target(widget, [begin], described=phrase, shows=shows))
    return out


def reads_as_twin(text: str) -> bool:
    """Whether the agents read `text`, said in a request, as fencing off a twin ("the second …", "the other …",
    "leave it alone"): every widget its sentence names or describes is then one to leave be. A coined phrase the
    pipeline says for a target (a pointer's entry) must not read so."""
    return TWIN.search(text) is not None


def verb_kind(verb: str) -> OpKind | None:
    """What a verb, said on its own ("put right", "bring up"), asks the agents to do: the kind whose verb pattern
    matches earliest in it (update first at a tie, as in `op_kind`), or None when none does. A persona's
    declared verbs are checked against this, so that every verb its prompts use is one the agents act on."""
    best: tuple[int, OpKind] | None = None
    for kind, pattern in _VERBS.items():
        m = pattern.search(verb)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), kind)
    return None if best is None else best[1]


def op_kind(request: Request, position: int, end: int | None = None) -> OpKind | None:
    """What the sentence around a mention asks for it: the verb closest before the mention, else the first
    after it."""
    a, b = request.sentence_of(position)
    text = request.prompt
    asides = [(x.start(), x.end()) for x in re.finditer(r"\([^()]*\)", text[a:b])]
    best: tuple[int, OpKind] | None = None
    after: tuple[int, OpKind] | None = None
    for kind, pattern in _VERBS.items():
        for m in pattern.finditer(text, a, b):
            if kind == "read" and _NOT_A_READ.search(text[max(a, m.start() - 10) : m.end()]):
                continue
            if any(x <= m.start() - a < y for x, y in asides):
                # a parenthesised aside ("(not the view of … that still need …)") gives no instruction
                continue
            if any(x <= m.start() and m.end() <= y for x, y in request.names):
                # a verb inside a name ("Keel Release Check", "Compliance Pre-Check") asks nothing
                continue
            if any(x <= m.start() < y for x, y in request.copies):
                # nor does one that asks for a copy ("…, and add a copy per the interim rule"): the copy is added
                continue
            if m.end() <= position and (best is None or m.start() > best[0]):
                best = (m.start(), kind)
            elif m.start() >= (end or position) and (after is None or m.start() < after[0]):
                after = (m.start(), kind)
    if best is not None:
        return best[1]
    return after[1] if after is not None else None


def operations(request: Request, targets: list[Target], placed: dict[str, list[dict[str, Any]]]) -> list[Op]:
    """One operation per live mention of a target, in prompt order: what its sentence asks (a repair of an
    instance that is there, an addition, a read); a mention whose sentence asks nothing repairs an instance when
    there is one to repair and adds one otherwise. A read follows when the served values are to be recorded."""
    ops: list[Op] = []
    seen: set[tuple[str, tuple[int, int], OpKind]] = set()
    clauses = request.copies
    for target in targets:
        for pos in target.positions:
            if any(a <= pos < b for a, b in clauses):
                # the name said inside a copy clause says what is copied; the clause's own operation follows
                continue
            kind = op_kind(request, pos, pos + len(str(target.widget.get("name") or "")))
            if kind is None:
                kind = "update" if placed.get(target.widget_id) else "create"
            if kind == "update" and not placed.get(target.widget_id):
                if any(o.kind == "create" and o.target is target for o in ops):
                    continue
                kind = "create"
            key = (target.widget_id, request.sentence_of(pos), kind)
            if key not in seen:
                seen.add(key)
                ops.append(Op(kind, target, pos))
    for m in RECORD_SERVED.finditer(request.prompt):
        # the figures to record are those of the widgets the recording sentence is about (or, when it names
        # none, the sentence before it that does); a view repaired elsewhere in the request is not read
        for target in sentence_targets(request, targets, request.sentence_of(m.start())):
            if not any(o.kind == "read" and o.target is target for o in ops):
                first = min(target.positions)
                ops.append(Op("read", target, first))
    for clause in clauses:
        copied = copied_target(request, targets, clause)
        if copied is not None:
            ops.append(Op("create", copied, clause[0], clause=clause))
    for m in _THEN_READ.finditer(request.prompt):
        before = [o for o in ops if o.position < m.start() and o.kind == "create"]
        if before and not any(o.kind == "read" and o.target is before[-1].target for o in ops):
            ops.append(Op("read", before[-1].target, before[-1].position))
    order = {"update": 0, "create": 1, "read": 2}
    return sorted(ops, key=lambda o: (o.position, order[o.kind]))


def copy_clauses(request: Request) -> list[tuple[int, int]]:
    """(start, end) of each clause asking for a copy (`COPY`) outside the clauses that fence off twins: from its
    words (and the verb right before them) to the next semicolon or colon, else the end of its sentence."""
    out = []
    text = request.prompt
    for m in COPY.finditer(text):
        if request.in_twin(m.start()):
            continue
        a, b = request.sentence_of(m.start())
        # it ends where the sentence goes on to ask something else ("…; for Risk Rating Changes …", "…: read it")
        stop = min(
            (i for i in (text.find(";", m.end(), b), text.find(":", m.end(), b)) if i >= 0), default=-1
        )
        # the verb that asks for it ("and bring up a copy …") belongs to the clause: it asks nothing of the
        # widget the sentence names
        verb = re.search(
            rf"(?:{_VERBS['create'].pattern})\s+$", text[max(a, m.start() - 16) : m.start()], re.I
        )
        start = m.start() - (len(verb.group(0)) if verb else 0)
        out.append((start, stop if stop >= 0 else b))
    return out


def copied_target(request: Request, targets: list[Target], clause: tuple[int, int]) -> Target | None:
    """What a copy clause copies: the widget it names itself, else the one its sentence names last before it,
    else that of the sentence before it."""
    a, b = clause
    named = [(p, t) for t in targets for p in t.positions if a <= p < b]
    if named:
        return min(named, key=lambda x: x[0])[1]
    start = request.sentence_of(a)[0]
    before = [(p, t) for t in targets for p in request.live(t.positions) if start <= p < a]
    if before:
        return max(before, key=lambda x: x[0])[1]
    earlier = sentence_targets(request, targets, (start, a))
    return earlier[-1] if earlier else None


def sentence_targets(request: Request, targets: list[Target], sentence: tuple[int, int]) -> list[Target]:
    """The widgets a sentence is about: those it mentions, else (a sentence that says "it", "them" or names
    none) those of the nearest sentence before it that mentions one."""
    for a, b in sorted((s for s in request.spans if s[0] <= sentence[0]), reverse=True):
        mentioned = [t for t in targets if any(a <= p < b for p in t.positions)]
        if mentioned:
            return mentioned
    return []


def _scope(request: Request, op: Op, targets: list[Target]) -> tuple[int, int]:
    """Where the values of an operation are stated: its "for <name> …" segment when the sentence gives each
    widget its own, else its sentence."""
    a, b = request.sentence_of(op.position)
    text = request.prompt
    heads = []
    for t in targets:
        for pos in t.positions:
            if a <= pos < b and re.search(r"\bfor\s+(?:the\s+)?$", text[max(a, pos - 10) : pos], re.I):
                heads.append((pos, t))
    if len(heads) < 2:
        return a, b
    heads.sort(key=lambda h: h[0])
    for i, (pos, t) in enumerate(heads):
        if t is op.target:
            end = heads[i + 1][0] if i + 1 < len(heads) else b
            return pos + len(str(t.widget.get("name") or "")), end
    return a, b


def stated_values(request: Request, op: Op, schema: dict[str, Any], targets: list[Target]) -> dict[str, Any]:
    """The values the prompt states for an operation's widget: looked for in the operation's own scope first,
    then in the rest of the prompt; never inside a clause that fences off a twin or a policy phrase, and never
    a value said as what the widget currently shows."""
    scope = _scope(request, op, targets)
    said = schema_mentions(request.prompt, schema)
    out: dict[str, Any] = {}
    for param in schema.get("params") or []:
        if not isinstance(param, dict) or not param.get("paramName"):
            continue
        for a, b in (scope, request.sentence_of(op.position), (0, len(request.prompt))):
            pick = _pick(request, param, said[str(param["paramName"])], a, b)
            if pick is not None:
                out[str(param["paramName"])] = pick.value
                break
    return out


def schema_mentions(text: str, schema: dict[str, Any]) -> dict[str, list[Mention]]:
    """Per parameter of a widget's schema, where `text` states one of its options as the catalog writes it — but
    not inside a longer statement of another parameter's option: "Credit" in "fund Breakwater Credit" is the
    fund, not the asset class (`option_mentions` does the same within one parameter's options)."""
    params = [p for p in schema.get("params") or [] if isinstance(p, dict) and p.get("paramName")]
    said = {str(p["paramName"]): option_mentions(text, p, as_written=True) for p in params}
    spans = [(name, m.start, m.end) for name, ms in said.items() for m in ms]
    return {
        name: [
            m
            for m in ms
            if not any(
                other != name and x <= m.start and m.end <= y and y - x > m.end - m.start
                for other, x, y in spans
            )
        ]
        for name, ms in said.items()
    }


def _pick(request: Request, param: dict[str, Any], said: list[Mention], a: int, b: int) -> Mention | None:
    text = request.prompt
    lowered = text.lower()
    names = {str(param.get("paramName") or "").lower(), str(param.get("label") or "").lower()} - {""}
    best: tuple[int, int, Mention] | None = None
    unnamed: str | None = None  # the prompt with the names blanked: the same for every mention, made once
    for m in said:
        if not (a <= m.start < b) or request.in_twin(m.start):
            continue
        if any(p.start <= m.start < p.end for p in request.policies):
            continue
        if any(x <= m.start and m.end <= y and y - x > m.end - m.start for x, y in request.names):
            continue
        if unnamed is None:
            unnamed = _masked(text, request.names)
        if _is_stale(unnamed, m.start, a):
            continue
        before = lowered[max(a, m.start - 28) : m.start]
        named = 1 if any(n in before for n in names) or re.search(r"\bto\s+$", before) else 0
        if best is None or (named, m.start) > best[:2]:
            best = (named, m.start, m)
    return best[2] if best else None


def _is_stale(text: str, position: int, floor: int) -> bool:
    """True when the closest marker before `position` (in its sentence) says "currently shows" rather than
    "set to"."""
    window = text[floor:position]
    stale = max((m.end() for m in _STALE.finditer(window)), default=-1)
    target = max((m.end() for m in _TARGET.finditer(window)), default=-1)
    return stale >= 0 and stale >= target


def twin_signatures(
    request: Request, schema: dict[str, Any], name: str | None = None
) -> list[dict[str, Any]]:
    """For each fencing clause about the widget (one that names it, or names nothing), the values it states: the
    instance showing them is to be left alone. A clause that names another widget fences that one only."""
    out = []
    mentions = schema_mentions(request.prompt, schema)
    for a, b in request.twins:
        if name and not find(request.prompt[a:b], name) and any(a <= x and y <= b for x, y in request.names):
            continue
        values = {}
        for param_name, ms in mentions.items():
            said = [m for m in ms if a <= m.start < b]
            if said:
                values[param_name] = said[0].value
        if values:
            out.append(values)
    return out


def stale_values(request: Request, op: Op, schema: dict[str, Any]) -> dict[str, Any]:
    """The values the operation's sentence says its widget currently shows (the instance to repair)."""
    a, b = request.sentence_of(op.position)
    masked = _masked(request.prompt, request.names)
    out: dict[str, Any] = {}
    for param_name, ms in schema_mentions(request.prompt, schema).items():
        for m in ms:
            if a <= m.start < b and _is_stale(masked, m.start, a):
                out.setdefault(param_name, m.value)
    return out
