"""The prompt linter: faults a request makes that a reviewer would not sign, by class.

A request is the one thing an agent reads; a benchmark whose requests say "point back it", "for fund Lantern Macro
— Lantern —." or "the convention it names of the … prompt" measures reading garbled text. These are faults, not
style: the `prose` gate (certify/gates.py) refuses a task that has any, and its detail names each fault, so the
pipeline hands it back to the author as the next round's feedback like any other failed gate.

Each class is a mechanism, not a list of bad strings: a phrasal verb is a verb of `PHRASAL_VERBS` with a particle of
`PARTICLES` and a pronoun object after the particle; a bolted alias is an aside next to a name that repeats the
name's own words; a forward reference is a demonstrative whose noun, or an event ("once it is retitled") whose
verb, the request has not stated before it. A rule that fires on a sentence a careful writer would keep is a bad
rule (tests/certify/test_prose.py holds a negative example for every class).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

FAULT_CLASSES = (
    "split_phrasal_verb",
    "bolted_alias",
    "fragment",
    "forward_reference",
    "pointer",
    "doubled",
    "punctuation",
    "article",
)


@dataclass(frozen=True)
class Fault:
    """One fault: its class, what is wrong (said so an author can repair it), and the words around it."""

    kind: str
    message: str
    where: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message} ('{self.where}')"


# --------------------------------------------------------------------------------------------- lexicon
# Transitive verbs that take an adverbial particle ("point it back", "bring them up"). The object pronoun goes
# between verb and particle; after the particle it is a fault ("point back it").
PHRASAL_VERBS = [
    "add",
    "bring",
    "call",
    "carry",
    "change",
    "check",
    "clean",
    "cut",
    "dial",
    "fill",
    "filter",
    "find",
    "fix",
    "flip",
    "follow",
    "get",
    "give",
    "hand",
    "hold",
    "jot",
    "keep",
    "knock",
    "lay",
    "leave",
    "line",
    "look",
    "mark",
    "move",
    "narrow",
    "note",
    "open",
    "pick",
    "pin",
    "point",
    "print",
    "pull",
    "put",
    "read",
    "repoint",
    "reset",
    "restore",
    "roll",
    "round",
    "scale",
    "send",
    "set",
    "shift",
    "sort",
    "spin",
    "split",
    "start",
    "sum",
    "swap",
    "switch",
    "take",
    "tidy",
    "track",
    "turn",
    "type",
    "wind",
    "work",
    "write",
    "zero",
]
IRREGULAR = "brought cut found gave given got held kept laid left put read sent set split spun took taken wrote written"
PARTICLES = ("back", "up", "down", "out", "off", "away", "aside", "apart", "together")
OBJECT_PRONOUNS = ("it", "them", "him", "her", "me", "us")
# Nouns a request refers back to ("that status", "the same board"); a noun of the task's own world (its widgets'
# parameter labels) is added by the gate. Each group is one referent said in different words.
REFERENT_GROUPS = (
    ("board", "dashboard"),
    ("view", "widget", "panel"),
    ("note", "entry", "jotting", "summary", "memo", "log line"),
    ("tab",),
    ("row",),
    ("column",),
    ("figure", "number", "value"),
    ("status",),
    ("period", "window"),
    ("cut",),
    ("table",),
    ("app",),
    ("backend",),
    ("document", "page", "handbook"),
    ("skill",),
    ("step",),
    ("fund",),
    ("client",),
    ("counterparty",),
    ("region",),
    ("scenario",),
)
# The pieces of a document a request points at (authoring/locate.py splits documents into them).
PIECES = [
    "convention",
    "point",
    "step",
    "row",
    "entry",
    "rule",
    "passage",
    "section",
    "line",
    "heading",
    "item",
    "paragraph",
    "part",
    "piece",
    "term",
    "definition",
    "clause",
    "table",
]
# Words after which "that" opens a clause, not a demonstrative ("so that status is Draft").
CLAUSE_THAT = frozenset(
    [
        "so",
        "such",
        "now",
        "given",
        "ensure",
        "sure",
        "check",
        "checking",
        "confirm",
        "say",
        "says",
        "said",
        "means",
        "mean",
        "note",
        "notes",
        "noting",
        "shows",
        "show",
        "states",
        "stating",
        "read",
        "reads",
        "see",
        "make",
        "making",
        "provided",
        "except",
        "than",
    ]
)
# Abbreviations after whose full stop a sentence does not end.
ABBREVIATIONS = frozenset(
    [
        "st",
        "e.g",
        "i.e",
        "vs",
        "no",
        "etc",
        "approx",
        "mr",
        "mrs",
        "ms",
        "dr",
        "inc",
        "ltd",
        "co",
        "cf",
        "p",
        "pp",
    ]
)
# "a" before these vowel letters is right ("a one-off", "a European fund", "a unit").
CONSONANT_SOUNDS = re.compile(r"(?:one\b|once\b|eu|uni|use|usu|ur)", re.I)


def _inflected(verbs: Iterable[str]) -> str:
    forms: set[str] = set(IRREGULAR.split())
    for v in verbs:
        forms |= {v, v + "s", v + "es", v + "ed", v + "d", v + "ing", v + v[-1] + "ing", v + v[-1] + "ed"}
        if v.endswith("e"):
            forms |= {v[:-1] + "ing"}
    return "|".join(sorted(forms, key=len, reverse=True))


_VERB = _inflected(PHRASAL_VERBS)
_PARTICLE = "|".join(PARTICLES)
_PRONOUN = "|".join(OBJECT_PRONOUNS)
_NAME_WORD = r"[A-Z][\w&'+%.-]*"
_NAME = rf"{_NAME_WORD}(?:\s+(?:of\s+|&\s+)?{_NAME_WORD}){{0,5}}"


def _excerpt(text: str, start: int, end: int) -> str:
    return text[max(0, start - 14) : min(len(text), end + 14)].strip()


def _words(text: str) -> list[str]:
    return re.findall(r"[\w&'+%-]+", text.casefold())


# Every split this class finds has a particle right before an object pronoun, or a pronoun, a comma and a
# particle: a text with neither has none, and is not searched with the long pattern of every verb form.
_SPLIT_CUE = re.compile(rf"\b(?:{_PARTICLE})\s+(?:{_PRONOUN})\b|\b(?:{_PRONOUN}),\s+(?:{_PARTICLE})\b", re.I)


# ------------------------------------------------------------------------------------------ the classes
def split_phrasal_verbs(text: str) -> list[Fault]:
    out: list[Fault] = []
    if _SPLIT_CUE.search(text) is None:
        return out
    for m in re.finditer(rf"\b(?:{_VERB})\s+(?:{_PARTICLE})\s+(?:{_PRONOUN})\b", text, re.I):
        out.append(
            Fault(
                "split_phrasal_verb",
                "the pronoun object goes between the verb and its particle ('point it back', not 'point back it')",
                _excerpt(text, m.start(), m.end()),
            )
        )
    for m in re.finditer(rf"\b({_PARTICLE})\s+(?:{_PRONOUN})\s+\1\b", text, re.I):
        out.append(
            Fault(
                "split_phrasal_verb", "the particle is said twice ('back it back')", _excerpt(text, *m.span())
            )
        )
    for m in re.finditer(rf"\b(?:{_PRONOUN}),\s+(?:{_PARTICLE})\b", text, re.I):
        out.append(
            Fault(
                "split_phrasal_verb", "a comma splits the verb from its particle", _excerpt(text, *m.span())
            )
        )
    return out


def bolted_aliases(text: str) -> list[Fault]:
    """An aside next to a name that only repeats the name's own words ("Lantern Macro — Lantern —", "Reedbed
    Small Cap (Reedbed)"), or the same aside twice: the alias is bolted on, where a person says it instead."""
    out = []
    aside = r"(?:\(\s*([^()]{1,60}?)\s*\)|—\s*([^—.;]{1,60}?)\s*—)"
    for m in re.finditer(rf"({_NAME})\s*{aside}", text):
        name, said = m.group(1), m.group(2) or m.group(3)
        inner = _words(said)
        if inner and set(inner) <= set(_words(name)):
            out.append(
                Fault(
                    "bolted_alias",
                    f"'{said}' beside '{name}' repeats the name; say the alias instead of the name after the first "
                    "mention, not next to it",
                    _excerpt(text, m.start(), m.end()),
                )
            )
    for m in re.finditer(rf"{aside}\s*{aside}", text):
        first, second = m.group(1) or m.group(2), m.group(3) or m.group(4)
        if first and second and _words(first) == _words(second):
            out.append(Fault("bolted_alias", f"the aside '{first}' is said twice", _excerpt(text, *m.span())))
    return out


def fragments(text: str) -> list[Fault]:
    """A sentence that starts in lower case after a full stop (a clause glued on after the stop, like a deadline
    "… the view. ahead of the CLS cut-off."), or a clause after ';' or ':' that has no subject."""
    out = []
    for m in re.finditer(r"([\w.]+)([.!?])\s+([a-z][\w-]*)", text):
        before = m.group(1).casefold().rstrip(".")
        if m.group(2) == "." and (before in ABBREVIATIONS or re.fullmatch(r"(?:\w\.)+\w?", m.group(1))):
            continue
        out.append(
            Fault(
                "fragment",
                f"a sentence starts in lower case ('{m.group(3)}'): a clause is glued on after a full stop",
                _excerpt(text, m.start(2), m.end()),
            )
        )
    for m in re.finditer(r"[;:]\s+(?:is|are|was|were|must|belongs|serves|stays|should)\b", text):
        out.append(Fault("fragment", "a clause has no subject", _excerpt(text, *m.span())))
    return out


def forward_references(text: str, nouns: Iterable[str] = (), known: Iterable[str] = ()) -> list[Fault]:
    """A reference to what the request has not said yet: a demonstrative ("that status", "the same board")
    whose noun no earlier words name, or an event ("once it is retitled") whose verb no earlier words ask for.
    `nouns` adds referent nouns of the task's world (its parameter labels); `known` holds referents the episode
    itself supplies (words that count as said before the request starts, e.g. the open board)."""
    groups = [set(g) for g in REFERENT_GROUPS] + [{n.casefold()} for n in nouns if n.strip()]
    given = " ".join(known).casefold()
    out = []
    noun_alt = "|".join(sorted({re.escape(n) for g in groups for n in g}, key=len, reverse=True))
    for m in re.finditer(rf"\b(that|those|the same)\s+({noun_alt})(?:s|es)?\b", text, re.I):
        det, noun = m.group(1).casefold(), m.group(2).casefold()
        previous = re.findall(r"[\w-]+", text[: m.start()])
        if det == "that" and previous and previous[-1].casefold() in CLAUSE_THAT:
            continue
        group = next(g for g in groups if noun in g)
        earlier = text[: m.start()].casefold() + " " + given
        if not any(re.search(rf"\b{re.escape(w)}", earlier) for w in group):
            out.append(
                Fault(
                    "forward_reference",
                    f"'{m.group(1)} {m.group(2)}' refers back to a {noun} the request has not mentioned yet",
                    _excerpt(text, *m.span()),
                )
            )
    # the past simple ("when it was opened") tells the data's history, not the request's work: only the present
    # and perfect ("once it is retitled", "after they have been moved") refer to an event the request causes
    event = r"\b(?:once|after|when|as soon as)\s+(?:(?:it|they|the \w+(?: \w+)?)\s+(?:is|are|has been|have been)\s+)?(\w+?)(?:ed|d)\b"
    for m in re.finditer(event, text, re.I):
        if re.match(r"\S+\s+(?:it|they|the \w+(?: \w+)?)\s+(?:was|were)\s", m.group(0) + " ", re.I):
            continue
        stem = m.group(1).casefold()
        if len(stem) < 4 or stem in {"need", "want", "ask", "use", "show", "say", "fix"}:
            continue
        earlier = text[: m.start()].casefold()
        if not re.search(rf"\b{re.escape(stem)}", earlier):
            out.append(
                Fault(
                    "forward_reference",
                    f"'{m.group(0).strip()}' refers to a {stem}e/{stem}ing that the request has not asked for before: "
                    "state the work before referring to its result",
                    _excerpt(text, *m.span()),
                )
            )
    return out


def pointers(text: str) -> list[Fault]:
    """A pointer into a source that says what "it" does before saying what "it" is, so it names no place in the
    source: "the convention it names of the … prompt", "the last point it makes of …" (a piece of `PIECES`, a
    relative clause on "it", then the source)."""
    out = []
    pattern = rf"\bthe\s+(?:[\w-]+\s+)?(?:{'|'.join(PIECES)})s?\s+(?:it|they)\s+[\w-]+\s+(?:of|in)\b"
    for m in re.finditer(pattern, text, re.I):
        out.append(
            Fault(
                "pointer",
                "the pointer does not name a place in the source; say 'the convention named in X', 'the last "
                "point of X' or the piece's heading",
                _excerpt(text, *m.span()),
            )
        )
    return out


def doubled(text: str) -> list[Fault]:
    out = []
    for m in re.finditer(r"\b(\w+)\s+\1\b", text, re.I):
        out.append(Fault("doubled", f"the word '{m.group(1)}' is said twice", _excerpt(text, *m.span())))
    marks = r"[,;:]\s*[,;:.]|\.\s*[,;:]|(?<!\.)\.\.(?!\.)|—\s*[.,;:]|[,;:]\s*—|—\s*—|\(\s*\)"
    for m in re.finditer(marks, text):
        out.append(Fault("doubled", "doubled punctuation or an empty aside", _excerpt(text, *m.span())))
    return out


def punctuation(text: str) -> list[Fault]:
    out = [
        Fault("punctuation", "a space before punctuation", _excerpt(text, *m.span()))
        for m in re.finditer(r"\s[,.;:!?)]", text)
    ]
    if text.count("(") != text.count(")"):
        out.append(Fault("punctuation", "unbalanced parentheses", text[:40]))
    if text.count('"') % 2:
        out.append(Fault("punctuation", "an unclosed quotation mark", text[:40]))
    return out


def articles(text: str) -> list[Fault]:
    out = []
    for m in re.finditer(r"\b(a)\s+([aeioAEIOU][a-z]\w*)|\b(an)\s+([b-df-gj-np-tv-z][a-z]\w*)", text):
        word = m.group(2) or m.group(4)
        if m.group(1) and CONSONANT_SOUNDS.match(word):
            continue
        if m.group(1) and word[0] in "uU":
            continue  # "a unit", "a user": only the exceptions above take "an"
        out.append(
            Fault("article", "'a' before a vowel sound or 'an' before a consonant", _excerpt(text, *m.span()))
        )
    return out


def faults(text: str, *, nouns: Iterable[str] = (), known: Iterable[str] = ()) -> list[Fault]:
    """Every fault of `text`, by class in FAULT_CLASSES order (empty: a request a reviewer would sign)."""
    return [
        *split_phrasal_verbs(text),
        *bolted_aliases(text),
        *fragments(text),
        *forward_references(text, nouns, known),
        *pointers(text),
        *doubled(text),
        *punctuation(text),
        *articles(text),
    ]
