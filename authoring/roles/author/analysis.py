"""The analyze ask of a level: the reads an analysis rests on, its exemplar and key points, and the clause that
asks for it.

A story with `facts.analyze` asks at every level, after the level's own work, for a judged answer over the first
target's rows on the level's cut: each row's figure cited, compared with the threshold the governing skill sets,
and a verdict. The rule author plans it like the rest of the level, in the planning episode: the skill read and
the cut read are steps the judge grades by what the answer states (a no-op fails without any judge, on its missing
answer). The exemplar is written from the rows that read returns and the skill's own words for the threshold;
the key points carry the figures (what a fact stub also has) and the comparison and verdict words (what it
lacks), so the judge audit's mutants fail. Whatever the level hides still decides the analysis: a wrong cut
serves other figures, which the key points do not accept and `answer_must_not_contain` names.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from certify import numbers_in, text_contains

from ...analyze import MAX_ANALYZED_ROWS, ResolvedAnalyze
from ...factcheck import ResolvedTarget
from ...factcheck import value_text as said_as_text
from .context import AuthoringError
from .level import Level
from .phrasebook import MAX_PROMPT_WORDS

if TYPE_CHECKING:
    from .plan import _Planner

# The analysis is a second ask of its own: a request carrying it may run this many words past one clear ask.
ANALYSIS_WORDS = 45
ABOVE = ["above", "beyond", "past", "over", "outside", "exceeds"]
BELOW = ["below", "within", "under", "inside"]
MAX_DISTRACTORS = 24
# The sentence that asks for the analysis. It never names the target (Find hides it) and never reads as a policy
# ("the … skill says" would be taken for one): it names the skill, the row label and the figure, and the
# threshold by the name the story gives it; the skill says the number. One sentence without inner stops, so that
# every clause of it carries the story's own columns; a story's five levels take five different wordings.
CLAUSES = (
    "Then answer with a short analysis worked through in line with the {skill} skill that cites each {label}'s "
    "{figure}, compares it with the skill's {name} and ends with a verdict.",
    "Once that is done, reply with an analysis in the manner of the {skill} skill, one that cites each "
    "{label}'s {figure}, compares it with the skill's {name} and arrives at a verdict.",
    "Finally, answer with an analysis following the {skill} skill that cites each {label}'s {figure}, compares "
    "it with the skill's {name} and closes with a verdict.",
    "To finish, answer with an analysis in the {skill} skill's manner that cites each {label}'s {figure}, "
    "compares it with the skill's {name} and ends on a verdict.",
    "Last of all, answer with a short analysis after the {skill} skill's fashion that cites each {label}'s "
    "{figure}, compares it with the skill's {name} and lands on a verdict.",
)
# The same asks naming neither the row label nor the figure, for a Find level whose figure and label are words of
# the target's own catalog entry ("each ticker's stale days" beside Stale Price Monitor, "not changed for several
# days"): said there, they hand a word matcher the widget Find hides. What to cite is then what the skill's
# threshold applies to, which the agent learns from the skill and from the rows of the widget it found.
PLAIN = "cites each {label}'s {figure}"
PLAIN_SAID = "cites, for each row, the figure the skill's {name} applies to"
PLAIN_CLAUSES = tuple(c.replace(PLAIN, PLAIN_SAID) for c in CLAUSES)


def prompt_word_limit(judged: bool) -> int:
    """The longest a request reads as one clear ask (plus the analysis, when it asks for one)."""
    return MAX_PROMPT_WORDS + (ANALYSIS_WORDS if judged else 0)


def column_label(t: ResolvedTarget, key: str) -> str:
    """How a person names a served column: its header when the table declares one, else the key in words."""
    defs = (t.widget.definition.get("schema_data") or {}).get("table", {}).get("columnsDefs") or []
    header = next((c.get("headerName") for c in defs if isinstance(c, dict) and c.get("field") == key), None)
    text = str(header or key).replace("_", " ").strip()
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in text.split())


@dataclass(frozen=True)
class Row:
    label: str
    figure: Any
    flagged: bool
    at: bool


def _rows(a: ResolvedAnalyze, served: list[Any], where: str) -> list[Row]:
    out = []
    for row in served:
        if not isinstance(row, dict) or a.figure not in row:
            raise AuthoringError(f"{where}: facts.analyze.figure: a served row has no '{a.figure}'")
        value = row[a.figure]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise AuthoringError(
                f"{where}: facts.analyze.figure: '{a.figure}' serves {value!r}, not a number"
            )
        measure = abs(value) if a.size else value
        out.append(Row(said_as_text(row.get(a.label)), value, measure > a.value, measure == a.value))
    return out


def clause(level: Level, attempt: int = 0, plain: bool = False) -> str:
    """The sentence of the request that asks for the analysis ('' for a story without the ask); `plain`: the
    ask that names neither the row label nor the figure (`PLAIN_CLAUSES`)."""
    a = level.story.analyze
    if a is None:
        return ""
    t = level.first
    offset = int(hashlib.sha256(f"{level.ctx.persona.slug}|{level.slug}".encode()).hexdigest(), 16)
    template = (PLAIN_CLAUSES if plain else CLAUSES)[(offset + level.number + attempt) % len(CLAUSES)]
    return template.format(
        skill=a.skill_name,
        label=column_label(t, a.label),
        figure=column_label(t, a.figure),
        name=a.name,
    )


def plan_analysis(planner: _Planner) -> None:
    """The analysis's reads, graded, then the exemplar and the judge's key points, into the eval block."""
    level = planner.level
    a = level.story.analyze
    if a is None:
        return
    t = level.first
    where = f"{level.slug} level{level.number}"
    tools = planner.eval.wire().get("required_tools") or []
    # The skill and the cut are read for what the exemplar cites; neither read is graded as a call (a graded
    # knowledge read is Ground's signature, and the placed widget's uuid reads the same rows): the judge is, and
    # an answer that did not read them states neither the skill's threshold nor the cut's figures.
    skill_read = {"slug": a.skill}
    if not any(s.get("tool") == "get_skill_content" and s.get("args") == skill_read for s in tools):
        planner.step("get_skill_content", skill_read, optional=True)
    read = {"origin": t.origin, "widget_id": t.widget_id, "data_args": dict(t.params)}
    if any(s.get("tool") == "get_widget_data" and s.get("args") == read for s in tools):
        envelope = planner.ws.call("get_widget_data", read).to_dict()
    else:
        envelope = planner.step("get_widget_data", read, optional=True)
    served = list((envelope.get("data") or {}).get("data") or [])
    if not served:
        raise AuthoringError(
            f"{where}: facts.analyze: '{t.name}' serves no rows for {t.params}; nothing to analyse"
        )
    if len(served) > MAX_ANALYZED_ROWS:
        raise AuthoringError(
            f"{where}: facts.analyze: '{t.name}' serves {len(served)} rows for {t.params}, over the "
            f"{MAX_ANALYZED_ROWS} an analysis cites; pick a narrower cut"
        )
    rows = _rows(a, served, level.story.story.file)
    answer, points = exemplar(a, t, rows)
    planner.eval.set("reference_answer", answer)
    planner.eval.set("judge_evaluation", {"skill": a.skill, "key_points": points})
    distractors = _distractors(planner, a, t, answer, served)
    if distractors:
        planner.eval.set("answer_must_not_contain", distractors)


def exemplar(a: ResolvedAnalyze, t: ResolvedTarget, rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """The exemplar answer and its key points: every row's figure against the skill's threshold, then the
    verdict; the first point names the threshold the comparisons are made against."""
    figure = column_label(t, a.figure)
    cut = ", ".join(said_as_text(v) for v in t.params.values())
    line = f"the {a.skill_name} skill's {a.name} of {a.said}"
    size = " in size" if a.size else ""
    cites = []
    points: list[dict[str, Any]] = [
        {
            "point": f"The note compares each {figure} with {line}.",
            "figures": [a.said],
            "terms": [a.name],
        }
    ]
    for r in rows:
        shown = said_as_text(r.figure)
        if r.at:
            cites.append(f"{r.label}: {figure} {shown} sits at the {a.said} line")
            points.append({"point": f"{r.label}'s {figure} {shown} is at the threshold.", "figures": [shown]})
            continue
        word, choices = ("above", ABOVE) if r.flagged else ("below", BELOW)
        cites.append(f"{r.label}: {figure} {shown} is {word} {a.said}{size}")
        points.append(
            {
                "point": f"{r.label}'s {figure} {shown} is {word} the threshold{size}.",
                "figures": [shown],
                "terms": [choices],
            }
        )
    flagged = [r.label for r in rows if r.flagged]
    if flagged:
        verdict = (
            f"Verdict: {len(flagged)} of {len(rows)} above the {a.name}, to take up: {', '.join(flagged)}."
        )
        terms: list[str | list[str]] = ["verdict", *dict.fromkeys(flagged)]
    else:
        verdict = f"Verdict: none of the {len(rows)} is above the {a.name}; nothing to take up."
        terms = ["verdict", ["none", "nothing"]]
    points.append(
        {
            "point": "The note ends with a verdict naming what is above the threshold, if anything.",
            "terms": terms,
        }
    )
    answer = f"{t.name} ({cut}) against {line}: " + "; ".join(cites) + f". {verdict}"
    return answer, points


def _distractors(
    planner: _Planner, a: ResolvedAnalyze, t: ResolvedTarget, answer: str, served: list[Any]
) -> list[str]:
    """What the answer must not state: the figures other cuts of the target serve (another option of one of its
    parameters), unless the right answer, the rows it rests on or the skill could say them too."""
    skill = planner.level.ctx.world.skills.get(a.skill)
    fair = " ".join([answer, json.dumps(served, default=str), skill.content if skill else ""])
    nums = numbers_in(fair)
    out: list[str] = []
    for key in t.params:
        for value in t.widget.options(key):
            if str(value) == str(t.params[key]):
                continue
            for row in planner._rows(t.origin, t.widget_id, {**t.params, key: value}):
                if not isinstance(row, dict) or a.figure not in row:
                    continue
                text = said_as_text(row[a.figure]).strip()
                if len(text) >= 3 and text not in out and not text_contains(fair, text, blob_numbers=nums):
                    out.append(text)
    return out[:MAX_DISTRACTORS]
