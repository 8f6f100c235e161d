"""The finance lexicon, and what a phrase gives away through it.

A hidden value is hidden only if the words standing in for it do not name it. "The sterling share-class rule"
names GBP as surely as "GBP" does, to anyone who knows a little finance; so does a shared word ("the Europe
overlay rule") or a shared stem ("the cancellation rule" for Cancelled). This module holds the one list of such
synonyms (certify/data/finance_lexicon.yaml: currencies, regions, periods, statuses, scenarios) and the one
judgement of whether a text gives a value away (`giveaways`), used by both sides:

- `taskforge check` and the rule author refuse a Derive phrase, dashboard or note name that gives away the
  carried value or its label;
- the battery's phrase guesser picks, for a parameter the prompt leaves unsaid, the option the prompt's words
  give away — so a task whose wording leaks its value fails the shortcuts gate.

A world extends the list with a `lexicon.yaml` beside its world.json, and a story folder with
`overlay/lexicon.yaml` (merged into the world's by `authoring.overlay`), in the same shape as the shipped file;
their entries add synonyms to a value the shipped list has, or add values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .agents.reading import words
from .agents.retrieval import stem as retrieval_stem

SHIPPED = Path(__file__).parent / "data" / "finance_lexicon.yaml"
WORLD_FILE = "lexicon.yaml"
# libyaml's safe loader where PyYAML was built with it: the pure-Python one takes a tenth of a second over the
# shipped lexicon, once per process that runs the phrase guesser (a certification's first Derive task).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Stems are compared on their first five letters: "cancelled"/"cancel", "European"/"Europe" meet.
STEM = 5


class LexiconError(Exception):
    """A lexicon file that cannot be used: names the file and the field."""

    def __init__(self, file: str, field: str, message: str) -> None:
        super().__init__(f"{file}: {field}: {message}")
        self.file, self.field = file, field


class Entry(BaseModel):
    """One option value and the words a desk uses for it without saying it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    synonyms: list[str] = Field(min_length=1)

    @field_validator("synonyms")
    @classmethod
    def _words(cls, value: list[str]) -> list[str]:
        blank = [s for s in value if not _norm(s)]
        if blank:
            raise ValueError(f"synonyms must hold letters or digits: {blank}")
        return value


class LexiconFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    entries: list[Entry] = Field(default_factory=list)


@dataclass(frozen=True)
class Lexicon:
    """Synonyms per option value (case-folded), merged from the shipped file and a world's own."""

    synonyms: dict[str, tuple[str, ...]]

    def of(self, value: object) -> tuple[str, ...]:
        return self.synonyms.get(str(value).casefold(), ())


def _norm(text: str) -> str:
    """Lowercase words joined by single spaces: "energy-shock" and "Energy shock" read alike."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def stem(word: str, cut: int | None = STEM) -> str:
    """The retrieval stem (plurals and verb endings off, as BM25 ranks), cut to five letters by default so that
    "pulled" meets "pull", "cancelled" "cancel" and "European" "Europe" (`cut=None`: the stem a word ranker
    compares)."""
    full = retrieval_stem(word.lower())
    return full if cut is None else full[:cut]


def read_file(path: Path) -> LexiconFile:
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or {}
    except OSError as exc:
        raise LexiconError(str(path), "(file)", f"cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise LexiconError(str(path), "(file)", f"invalid YAML: {exc}") from exc
    try:
        return LexiconFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise LexiconError(str(path), where, err["msg"]) from exc


@lru_cache(maxsize=16)
def _load(files: tuple[tuple[str, float], ...]) -> Lexicon:
    merged: dict[str, list[str]] = {}
    for name, _mtime in files:
        for entry in read_file(Path(name)).entries:
            bucket = merged.setdefault(entry.value.casefold(), [])
            bucket += [s for s in entry.synonyms if s not in bucket]
    return Lexicon({k: tuple(v) for k, v in merged.items()})


def load_lexicon(world: Path | None = None) -> Lexicon:
    """The shipped lexicon, extended by `<world>/lexicon.yaml` when the world has one."""
    files = [SHIPPED]
    if world is not None and (Path(world) / WORLD_FILE).is_file():
        files.append(Path(world) / WORLD_FILE)
    return _load(tuple((str(p), p.stat().st_mtime) for p in files))


def giveaways(text: str, value: object, label: str | None, lexicon: Lexicon) -> list[str]:
    """How `text` gives away `value` (or the parameter's `label`): each shared word, shared stem or lexicon
    synonym, said as a reason ("shares the word 'europe' with Europe"). Empty when it gives nothing away."""
    said, said_stems, padded = _reading(text)
    out: list[str] = []
    for what, target in ((str(value), f"the value {value}"), (label or "", f"the label '{label}'")):
        if not what:
            continue
        own = _own_words(what)
        for w in sorted(own & said):
            out.append(f"shares the word '{w}' with {target}")
        for w in sorted(own - said):
            if len(w) > 3 and stem(w) in said_stems:
                out.append(f"shares the stem of '{said_stems[stem(w)]}' with {target} ('{w}')")
    for synonym in lexicon.of(value):
        if f" {_normed(synonym)} " in padded:
            out.append(f"says '{synonym}', the finance lexicon's word for {value}")
    return out


@lru_cache(maxsize=4096)
def _reading(text: str) -> tuple[frozenset[str], dict[str, str], str]:
    """(words, their stems to the word said, the normalised text padded) of a text `giveaways` reads: a pure
    function of the text, worked out once — the phrase guesser asks of the same names for every option of every
    parameter, and `check` of the same phrase for every candidate value. Callers never change what it returns."""
    said = frozenset(words(text, longer_than=1))
    return said, {stem(w): w for w in said if len(w) > 3}, f" {_norm(text)} "


@lru_cache(maxsize=4096)
def _own_words(text: str) -> frozenset[str]:
    return frozenset(words(text, longer_than=1))


@lru_cache(maxsize=4096)
def _normed(text: str) -> str:
    return _norm(text)


def guess(
    text: str, options: list[object], lexicon: Lexicon, labels: list[str | None] | None = None
) -> object | None:
    """The option `text` gives away most (lexicon synonyms first, then shared words and stems, of the value or
    of the label its option shows, `labels[i]`), or None when it gives none away — what a reader who knows the
    jargon but not the policy would pick."""
    best: tuple[int, int, object] | None = None
    for i, option in enumerate(options):
        reasons = giveaways(text, option, labels[i] if labels else None, lexicon)
        if not reasons:
            continue
        score = sum(2 if r.startswith("says") else 1 for r in reasons)
        if best is None or (score, -i) > (best[0], -best[1]):
            best = (score, i, option)
    return None if best is None else best[2]
