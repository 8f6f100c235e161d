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
# The ask that names neither the rows' label nor the figure (a Find level whose figure is a word of the widget's
# own catalog entry): what to cite is the served figure the skill's threshold applies to.
PLAIN_ASK = re.compile(
    r"\bcites?, for each row, the figure the skill's (?P<name>[\w .&/'%-]+?) applies to, compares? it with the "
    r"skill's (?P=name)(?:,|\s+and\b|\s+then\b|\.)",
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
    """The analysis a request asks for, if it asks for one (label and figure '' when the ask names neither)."""
    m = ASK.search(prompt)
    plain = PLAIN_ASK.search(prompt) if m is None else None
    found = m or plain
    if found is None:
        return None
    start = max(prompt.rfind(". ", 0, found.start()), 0)
    end = prompt.find(".", found.end() - 1)
    return AnalysisAsk(
        m.group("label").strip() if m else "",
        m.group("figure").strip() if m else "",
        found.group("name").strip(),
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


def _columns(rows: list[Any], schema: dict[str, Any]) -> list[tuple[str, str]]:
    """The served columns, (key, header), in the table's order (else the first row's), the widget's own
    parameters (the cut) left out."""
    params = {str(p.get("paramName")) for p in schema.get("params") or [] if isinstance(p, dict)}
    defs = (schema.get("schema_data") or {}).get("table", {}).get("columnsDefs") or []
    cols = [(str(c.get("field")), str(c.get("headerName") or "")) for c in defs if isinstance(c, dict)]
    if not cols:
        cols = [(k, "") for r in rows[:1] if isinstance(r, dict) for k in r]
    return [(k, h) for k, h in cols if k not in params]


def _numeric(rows: list[Any], key: str) -> list[float]:
    values = [r.get(key) for r in rows if isinstance(r, dict)]
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return []
    return [float(v) for v in values if isinstance(v, (int, float))]


def figure_column(ask: AnalysisAsk, rows: list[Any], schema: dict[str, Any], text: str) -> str | None:
    """The served figure an ask that names none is about: of the numeric columns (the cut's parameters aside),
    one the skill's threshold step names as a phrase ("active weights"), else the one whose scale the threshold
    fits best (orders of magnitude), then the one whose words the step says most."""
    line = _step(ask, text)
    if line is None:
        return None
    said = _words(line)
    best: tuple[int, float, int, int, str] | None = None
    for i, (key, header) in enumerate(_columns(rows, schema)):
        figures = _numeric(rows, key)
        if not figures:
            continue
        scaled = _scaled(line, figures)
        if scaled is None:
            continue
        named = [_seq(key.replace("_", " ")), _seq(header)]
        # a column the step names as a phrase ("active weights") before one whose words it only scatters
        phrase = any(n and _contains(_seq(line), n) for n in named)
        shared = len(_words(f"{key.replace('_', ' ')} {header}") & said)
        rank = (-int(phrase), scaled[0], -shared, i, key)
        if best is None or rank < best:
            best = rank
    return best[4] if best else None


def _seq(text: str) -> list[str]:
    return [w.rstrip("s") for w in _WORD.findall(text.lower()) if len(w) > 2]


def _contains(seq: list[str], part: list[str]) -> bool:
    return any(seq[i : i + len(part)] == part for i in range(len(seq) - len(part) + 1))


def serves(ask: AnalysisAsk, rows: list[Any], schema: dict[str, Any]) -> bool:
    """Whether rows serve what the ask is about: the figure it names, else any served figure."""
    if ask.figure:
        return column(ask.figure, rows, schema) is not None
    return any(_numeric(rows, k) for k, _ in _columns(rows, schema))


def label_column(rows: list[Any], schema: dict[str, Any], figure: str) -> str | None:
    """The column that names the rows, for an ask that names none: the first served column of text (the cut's
    own parameters aside) whose values tell the rows apart, else the first of text."""
    texts = [
        k
        for k, _ in _columns(rows, schema)
        if k != figure and all(isinstance(r, dict) and isinstance(r.get(k), str) for r in rows)
    ]
    apart = [k for k in texts if len({r.get(k) for r in rows}) == len(rows)]
    found = apart or texts
    return found[0] if found else None


def skill_of(ask: AnalysisAsk, documents: list[Document]) -> Document | None:
    """The skill the request's analysis sentence names, among the documents read."""
    sentence = ask.sentence.lower()
    named = [d for d in documents if d.kind == "skill" and d.text and d.title.lower() in sentence]
    return max(named, key=lambda d: len(d.title)) if named else None


def threshold(ask: AnalysisAsk, text: str, figures: list[float]) -> Threshold | None:
    """The threshold the skill sets for the figures: its number, in the step that best matches the request's
    name for it, on the figures' scale."""
    line = _step(ask, text)
    if line is None:
        return None
    scaled = _scaled(line, figures)
    return scaled[1] if scaled else None


def _step(ask: AnalysisAsk, text: str) -> str | None:
    """The skill's step that best matches the request's name for the threshold (and its figure)."""
    wanted = _words(ask.name) | _words(ask.figure)
    best: tuple[int, str] | None = None
    for raw in text.splitlines():
        line = _STEP_NUMBER.sub("", raw)
        if not _NUMBER.search(line):
            continue
        score = len(_words(line) & wanted)
        if score and (best is None or score > best[0]):
            best = (score, line)
    return best[1] if best else None


def _scaled(line: str, figures: list[float]) -> tuple[float, Threshold] | None:
    """The threshold a step states, on the scale of the candidates nearest the figures' own, with how far off
    that scale is (orders of magnitude)."""
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
    return found[0], Threshold(found[1], found[2], bool(SIZE_WORDS.search(line)))


def write_analysis(
    ask: AnalysisAsk, rows: list[Any], schema: dict[str, Any], documents: list[Document]
) -> str | None:
    """The answer: every row's figure against the skill's threshold, then a verdict (None when the rows or the
    skill give nothing to analyse)."""
    skill = skill_of(ask, documents)
    if skill is None or not skill.text:
        return None
    if ask.figure:
        figure, label = column(ask.figure, rows, schema), column(ask.label, rows, schema)
    else:
        figure = figure_column(ask, rows, schema, skill.text)
        label = label_column(rows, schema, figure) if figure is not None else None
    if figure is None:
        return None
    said = ask.figure or figure.replace("_", " ")
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
        cites.append(f"{name}: {said} {r[figure]} is {word} {line.said}{' in size' if line.size else ''}")
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
