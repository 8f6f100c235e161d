"""Writing an analysis a request asks for, the way a named skill prescribes: the capability every ladder rung
has (it does what is stated and reads what it is told to read), over whatever rows its other capabilities got it.

A request that says "cite each sector's active weight, compare it with the skill's talking-point threshold, and
end with a verdict" is read for three things: the column that names the rows, the figure column, and the name
of the threshold. The threshold's number is looked up in the named skill, in the step whose words the request's
name for it (and the figure's) share most; its scale is the one of the candidates (as written, per hundred, per
ten thousand) nearest the figures' own, and the skill's words decide whether the size of a figure or its value
is compared ("either side", "outside a band"). The answer cites every row, compares each with the threshold in
the skill's own words and ends with a verdict. A rung that read the wrong cut analyses the wrong figures, and
one that found no rows has nothing to analyse: the judge fails both.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .knowledge import Document

ASK = re.compile(
    r"\bcites? each (?P<label>[\w .&/'()$%-]+?)'s (?P<figure>[\w .&/()$%-]+?), compares? it with the skill's "
    r"(?P<name>[\w .&/'%-]+?)(?:,|\s+and\b|\s+then\b|\.)",
    re.I,
)
NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ],
    )
}
_NUMBER = re.compile(
    r"(?<![\w.])(?P<num>\d[\d,]*(?:\.\d+)?|"
    + "|".join(NUMBER_WORDS)
    + r")(?P<pct>%)?(?:\s+(?P<unit>[a-z]+))?",
    re.I,
)
_STEP_NUMBER = re.compile(r"^\s*\d+[.)]\s+")
SIZE_WORDS = re.compile(r"\beither (?:side|way)\b|\bband\b|\boutside\b|\bpast\b|\bin size\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class AnalysisAsk:
    label: str
    figure: str
    name: str
    sentence: str


@dataclass(frozen=True)
class Threshold:
    said: str
    value: float
    size: bool


def analysis_ask(prompt: str) -> AnalysisAsk | None:
    """The analysis a request asks for, if it asks for one."""
    m = ASK.search(prompt)
    if m is None:
        return None
    start = max(prompt.rfind(". ", 0, m.start()), 0)
    end = prompt.find(".", m.end() - 1)
    return AnalysisAsk(
        m.group("label").strip(),
        m.group("figure").strip(),
        m.group("name").strip(),
        prompt[start : end if end >= 0 else len(prompt)],
    )


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 2}


def column(said: str, rows: list[Any], schema: dict[str, Any]) -> str | None:
    """The served column a request names: by the table's header, else by the key read as words."""
    defs = (schema.get("schema_data") or {}).get("table", {}).get("columnsDefs") or []
    wanted = said.strip().lower()
    for c in defs:
        if isinstance(c, dict) and str(c.get("headerName") or "").strip().lower() == wanted:
            return str(c.get("field"))
    keys = [k for r in rows[:1] if isinstance(r, dict) for k in r]
    for k in keys:
        if k.replace("_", " ").lower() == wanted:
            return k
    close = [k for k in keys if _words(k.replace("_", " ")) == _words(wanted)]
    return close[0] if close else None


def skill_of(ask: AnalysisAsk, documents: list[Document]) -> Document | None:
    """The skill the request's analysis sentence names, among the documents read."""
    sentence = ask.sentence.lower()
    named = [d for d in documents if d.kind == "skill" and d.text and d.title.lower() in sentence]
    return max(named, key=lambda d: len(d.title)) if named else None


def threshold(ask: AnalysisAsk, text: str, figures: list[float]) -> Threshold | None:
    """The threshold the skill sets for the figures: its number, in the step that best matches the request's
    name for it, on the figures' scale."""
    wanted = _words(ask.name) | _words(ask.figure)
    best: tuple[int, str] | None = None
    for raw in text.splitlines():
        line = _STEP_NUMBER.sub("", raw)
        if not _NUMBER.search(line):
            continue
        score = len(_words(line) & wanted)
        if score and (best is None or score > best[0]):
            best = (score, line)
    if best is None:
        return None
    line = best[1]
    sizes = [abs(f) for f in figures if f]
    typical = math.log10(sum(sizes) / len(sizes)) if sizes else 0.0
    found: tuple[float, str, float] | None = None
    for m in _NUMBER.finditer(line):
        raw = m.group("num").lower()
        number = float(NUMBER_WORDS[raw]) if raw in NUMBER_WORDS else float(raw.replace(",", ""))
        if number == 0:
            continue
        scales = (100.0,) if m.group("pct") else (1.0, 100.0, 10000.0)
        for scale in scales:
            value = number / scale
            fit = abs(math.log10(value) - typical)
            if found is None or fit < found[0]:
                said = (
                    m.group("num")
                    + (m.group("pct") or "")
                    + (f" {m.group('unit')}" if m.group("unit") else "")
                )
                found = (fit, said, value)
    if found is None:
        return None
    return Threshold(found[1], found[2], bool(SIZE_WORDS.search(line)))


def write_analysis(
    ask: AnalysisAsk, rows: list[Any], schema: dict[str, Any], documents: list[Document]
) -> str | None:
    """The answer: every row's figure against the skill's threshold, then a verdict (None when the rows or the
    skill give nothing to analyse)."""
    figure = column(ask.figure, rows, schema)
    label = column(ask.label, rows, schema)
    skill = skill_of(ask, documents)
    if figure is None or skill is None or not skill.text:
        return None
    usable = [r for r in rows if isinstance(r, dict) and isinstance(r.get(figure), (int, float))]
    line = threshold(ask, skill.text, [float(r[figure]) for r in usable])
    if not usable or line is None:
        return None
    cites, flagged = [], []
    for r in usable:
        value = float(r[figure])
        name = str(r.get(label)) if label is not None else "row"
        measure = abs(value) if line.size else value
        word = "above" if measure > line.value else "at" if measure == line.value else "below"
        cites.append(
            f"{name}: {ask.figure} {r[figure]} is {word} {line.said}{' in size' if line.size else ''}"
        )
        if word == "above":
            flagged.append(name)
    verdict = (
        f"Verdict: {len(flagged)} of {len(usable)} above the {ask.name}: {', '.join(flagged)}."
        if flagged
        else f"Verdict: none of the {len(usable)} is above the {ask.name}; nothing to take up."
    )
    return (
        f"Against the {skill.title} skill's {ask.name} of {line.said}: " + "; ".join(cites) + f". {verdict}"
    )
