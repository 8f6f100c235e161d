"""Which field of a story a blocking review item comes back to, and how to change it.

A blocked run's items speak the pipeline's language (grader codes, rung names). The story writer needs the
facts field to edit: this maps an item (its kind, check, level and reason) to that field and a concrete
change, printed under the item by `taskforge author`, `check --draft` and `review show`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEVEL_WORDS = {"Execute": 0, "Find": 1, "Derive": 2, "Ground": 3, "Compose": 4}

# (level, the rung that should pass failed) -> field, how
FAILED = {
    0: ("facts.targets", "the request states everything and still fails: check the targets and params"),
    1: (
        "facts.find_hint",
        "the Find rung ranks the app's widgets by what they serve (their schemas' columns and filters) "
        "against the request: describe the columns that set the widget apart, in your own words, not its "
        "catalog description (taskforge world show '<widget>')",
    ),
    2: (
        "facts.policy",
        "the Derive rung did not resolve the policy: its phrase must end with a policy noun (rule, "
        "convention, case, …) and be defined, with the carried value, in the note or resource the story names",
    ),
    3: (
        "facts.governance.fact",
        "the Ground rung did not find the fact where the request points: ground it in a piece "
        "`taskforge world show --facts <source>` lists (a resource must be in the resource index)",
    ),
    4: (
        "facts.build",
        "the Compose rung could not build, place or key what facts.build names: check the backend, table, "
        "app and tab names, and that the grounded value is one the built table can be keyed on",
    ),
}
# (level, the rung below solved it) -> field, how
SOLVED = {
    1: (
        "facts.targets[0]",
        "the request picks the widget without its description: choose a first target whose parameters "
        "another widget of its app (and of the board) also takes",
    ),
    2: (
        "facts.policy.carries",
        "the carried value is reachable without the policy: carry a value that is not the parameter's "
        "default and that no name in the request states",
    ),
    3: (
        "facts.governance.sets",
        "the grounded value is reachable without reading the source: ground a parameter whose right value "
        "is neither its default nor stated elsewhere (a repair: seed it wrong)",
    ),
    4: ("facts.build", "the built part is not needed to pass: key the table on the grounded parameter"),
}


# The gates in the story writer's terms: what failing one means, and the facts field that changes it (per level
# where the level decides it; "facts" where the cause is in the drafted task, not in one field). The exhausted-
# rounds item says this, not the gate's own code, and its fix line names the same field.
_LEVEL_FIELD = {
    0: "facts.targets",
    1: "facts.targets[0]",
    2: "facts.policy",
    3: "facts.governance.fact",
    4: "facts.build",
}
GATE_CAUSES: dict[str, tuple[str, dict[int, str] | str]] = {
    "schema": ("the drafted task does not parse", "facts"),
    "grounding": (
        "a value the task grades is neither among its widget's options nor in the source it names",
        {3: "facts.governance.fact", **{n: "facts.params" for n in (0, 1, 2, 4)}},
    ),
    "oracle": ("the reference solution fails the task's own checks", _LEVEL_FIELD),
    "noop": (
        "doing nothing already passes: the board shows what the request asks before any work",
        {
            0: "facts.seeded_wrong",
            1: "facts.seeded_wrong",
            2: "facts.policy.carries",
            3: "facts.governance.sets",
        },
    ),
    "load_bearing": ("a step the reference takes is not needed to pass", _LEVEL_FIELD),
    "leak": (
        "the request states a value it should leave to the agent",
        {1: "facts.find_hint", 2: "facts.policy", 3: "facts.governance.fact", 4: "facts.build"},
    ),
    "determinism": ("two replays of the reference end differently", "facts"),
    "equivalence": (
        "a valid variant of the reference fails: the checks ask more than the request",
        "facts.targets",
    ),
    "shortcuts": (
        "an agent that does not understand the request passes",
        {n: field for n, (field, _) in SOLVED.items()},
    ),
    "counterfactual": (
        "the hidden value does not come from its source (varied there, the right answer stays)",
        {2: "facts.policy", 3: "facts.governance.fact", 4: "facts.build"},
    ),
    "judge": ("the judged answer has no current judge audit", "facts"),
    "prose": ("the request has a wording fault a reviewer would not sign", "facts"),
}
# The grader's check codes a gate's finding quotes, in words (a code not listed reads with its underscores
# dropped): what the reference did not do, as the writer would say it.
CODE_WORDS = {
    "missing_widget": "a widget the task requires is missing",
    "too_many_widgets": "more widgets than the task allows",
    "unrequested_widget": "a widget the request did not ask for",
    "forbidden_value": "a value the task forbids",
    "missing_generated_widget": "a note or generated widget the task requires is missing",
    "missing_dashboard": "the dashboard is missing",
    "dashboard_name": "the dashboard's name differs",
    "missing_tab": "a tab is missing",
    "missing_tab_name": "a tab's name differs",
    "missing_final_answer": "no final answer",
    "missing_answer_value": "the answer lacks a value",
    "answer_judgment": "the judged answer is not accepted",
    "missing_custom_backend": "the built backend is missing",
    "missing_widget_def": "the built widget is missing",
    "widget_def_mismatch": "the built widget differs",
    "missing_app_def": "the built app is missing",
    "app_def_mismatch": "the built app differs",
    "missing_tool_call": "a required call was not made",
    "missing_resource_read": "a source the task needs was not read",
    "collateral_dashboard_change": "another dashboard was changed",
    "layout_mismatch": "the layout differs",
}
_CODE = re.compile(r"\b([a-z]+(?:_[a-z]+)+):")


def in_words(finding: str) -> str:
    """A gate's finding with the grader's check codes said in words."""
    return _CODE.sub(lambda m: CODE_WORDS.get(m.group(1), m.group(1).replace("_", " ")) + ":", finding)


def gate_field(gate: str, level: int | None) -> str:
    """The facts field a failing gate comes back to at `level`."""
    field = GATE_CAUSES.get(gate, ("", "facts"))[1]
    if isinstance(field, str):
        return field
    return field.get(level, "facts") if level is not None else "facts"


def gate_cause(level: int | None, failing: dict[str, str]) -> str:
    """What the last round's failing gates (name -> detail) mean for the story: each gate as its cause and the
    facts field it comes back to, the first gate's first finding with its codes in words. The reason of the
    item a level that ran out of rounds raises: the writer reads what went wrong, not only that it did."""
    if not failing:
        return "the author produced no task"
    names = list(failing)
    first = names[0]
    what = GATE_CAUSES.get(first, (f"the {first} gate fails", "facts"))[0]
    finding = in_words(" ".join(failing[first].split()).split("; ")[0])
    if len(finding) > 160:
        finding = finding[:157].rstrip() + "…"
    said = f"{what} (gate {first}, {gate_field(first, level)}: {finding})"
    others = [f"gate {n}, {gate_field(n, level)}" for n in names[1:]]
    return said + (f"; also {'; '.join(others)}" if others else "")


# A gate failure whose evidence names the shortcut agent that passes: the facts field the story writer changes
# and how, per shortcut (what it reads without understanding the request, `certify/shortcuts/battery.py`). The
# first named shortcut that has an entry decides; an item naming none keeps the evidence-only line.
SHORTCUT_FIX = {
    "signature_matcher": (
        "facts.targets[0]",
        "an agent that reads only schemas takes every widget of the app accepting the stated values, and that "
        "is enough: pick a first target whose stated values more widgets of its app take (taskforge world show "
        "'<app>')",
    ),
    "enumerator": (
        "facts.params",
        "trying every option of a parameter the request leaves unstated passes: the hidden parameter needs more "
        "options, or a value the policy or the source alone decides",
    ),
    "bag_of_words": (
        "facts.find_hint",
        "a word matcher over catalog names and descriptions finds the target: keep the target's name and "
        "description words out of the hint, the dashboard, the why and the deadline",
    ),
    "description_matcher": (
        "facts.find_hint",
        "a word matcher over catalog names and descriptions finds the target: keep the target's name and "
        "description words out of the hint, the dashboard, the why and the deadline",
    ),
    "phrase_guesser": (
        "facts.policy.phrase",
        "the value is guessed from the names the request says (the policy phrase, the dashboard, the notes) "
        "through a shared word or a finance-lexicon synonym: reword them so that none names the value",
    ),
    "source_skimmer": (
        "facts.governance.fact",
        "the source names the value most often (or first): ground in a piece where it is neither "
        "(taskforge world show --facts '<source>' tags each), or add a document through the overlay",
    ),
    "tail_skimmer": (
        "facts.governance.fact",
        "the source names the value last: ground in a piece where it is not (taskforge world show --facts "
        "'<source>' tags each), or add a document through the overlay",
    ),
    "title_stuffer": (
        "facts.tab",
        "retitling with every name the sources quote passes: ground a tab title the source does not quote "
        "beside others, or a parameter instead",
    ),
    "over_builder": (
        "facts.targets",
        "adding the look-alikes too passes: the level must grade what is left out (a single target, or "
        "targets whose look-alikes take other values)",
    ),
    "neighbour_copier": (
        "facts.params",
        "copying the same widget placed on another dashboard passes: state a value no other placement of the "
        "target shows, or pick a target the lived-in boards do not hold",
    ),
}


def _shortcut_fix(evidence: str) -> tuple[str, str] | None:
    """The entry of the first shortcut the evidence says passes ("shortcut(s) pass …: signature_matcher (19
    calls)"), None when it names none."""
    _, _, passing = evidence.partition("pass without understanding the request:")
    for name in re.findall(r"\b([a-z]+(?:_[a-z]+)+|[a-z]+)\b(?= \(\d+ calls?\))", passing):
        if name in SHORTCUT_FIX:
            return SHORTCUT_FIX[name]
    return None


def _level(item: dict[str, Any]) -> int | None:
    if item.get("level") is not None:
        return int(item["level"])
    match = re.search(r"_level(\d)$", str(item.get("task_id") or ""))
    return int(match.group(1)) if match else None


def story_fix(item: dict[str, Any]) -> tuple[str, str] | None:
    """(facts field, the change) for a review item, or None when it is not about the story's facts."""
    kind, reason = str(item.get("kind") or ""), str(item.get("reason") or "")
    level = _level(item)
    if "only widget of its app" in reason or "only widget on the dashboard" in reason:
        return SOLVED[1]
    if kind in ("ladder", "defect", "dead_rung") and level is not None:
        if re.search(r"\bsolved this \w+ task\b", reason) and level in SOLVED:
            return SOLVED[level]
        return FAILED.get(level)
    if kind == "gate_failure":
        evidence = " ".join(str(item.get("evidence") or "").split())
        named = _shortcut_fix(evidence[:300])
        if named is not None:
            field, how = named
            return (
                field,
                f"{how} ({in_words(evidence[:300])}); `taskforge check --draft` reproduces it in seconds",
            )
        gates = re.findall(r"(?:^|; )gate (\w+):", evidence)
        return (
            gate_field(gates[0], level) if gates else "facts",
            f"the gates failed on what the author made of these facts ({in_words(evidence[:300]) or 'no evidence'}); "
            "`taskforge check --draft` reproduces it in seconds",
        )
    if kind == "staircase":
        return (
            "facts",
            "the staircase is inverted: the stories whose lower-level tasks the reference fails change",
        )
    return None


# An inverted staircase's evidence, one part per inversion: "level1 60% > level2 40%" (the lower level fails
# more often than the one above it). Written by the review node, read back here for the fix line.
_INVERSION = re.compile(r"\b(level\d) (\d+)% > (level\d) (\d+)%")


def inversion_evidence(inversions: list[Any]) -> str:
    """The staircase item's evidence: each inversion as `_INVERSION` reads it."""
    return "; ".join(f"{i.lower} {i.fail_lower:.0%} > {i.upper} {i.fail_upper:.0%}" for i in inversions)


def fix_line(item: dict[str, Any], items: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(what to change, how) printed under a review item: its story's file and facts field; for an item about the
    whole persona (the staircase, a dead rung), the persona's stories at the levels it is about — the stories of
    this run's items at those levels, when there are any — never a file name with no story in it."""
    fix = story_fix(item)
    if fix is None:
        return None
    story = story_of(item)
    if story:
        return f"{story}.md", f"{fix[0]}: {fix[1]}"
    persona = str(item.get("persona") or "the persona")
    if str(item.get("kind")) != "staircase":
        level = _level(item)
        named = "" if level is None else f" at {_level_name(level)}"
        return f"{persona}'s stories{named}", f"{fix[0]}: {fix[1]}"
    inverted = [m.groups() for m in _INVERSION.finditer(str(item.get("evidence") or ""))]
    lower = list(dict.fromkeys(_number(low) for low, *_ in inverted))
    stories = sorted(
        {
            story_of(other)
            for other in items
            if other is not item
            and story_of(other)
            and _level(other) in lower
            and story_fix(other) is not None
        }
    )
    why = "; ".join(
        f"{_level_name(_number(low))} tasks fail {fl}% of the time, {_level_name(_number(up))} tasks only {fu}%"
        for low, fl, up, fu in inverted
    )
    levels = " and ".join(_level_name(level) for level in lower) or "the inverted levels"
    where = f"{persona}'s stories at {levels}"
    if stories:
        return where, (
            f"facts: {why or 'the staircase is inverted'}: a level must not be harder than the one above it; the "
            f"{levels} items above name the facts to change ({', '.join(f'{s}.md' for s in stories)})"
        )
    return where, (
        f"facts: {why or 'the staircase is inverted'}: a level must not be harder than the one above it; no item of "
        f"this run names a task at {levels}: `taskforge calibrate --taskset DIR --persona {persona}` lists the ones the "
        "reference fails (its defects and noise); fix those stories' facts"
    )


def _number(level: str) -> int:
    return int(level.removeprefix("level"))


def _level_name(level: int) -> str:
    return next((name for name, n in LEVEL_WORDS.items() if n == level), f"level {level}")


# ------------------------------------------------------------------------------------ the edit, proposed
@dataclass(frozen=True)
class StoryEdit:
    """A change to a story file that `review fix` proposes when the defect is in the story's facts: the field,
    how to change it, and — where it can be computed from the world — its new value and the file's diff."""

    file: str
    key: str
    how: str
    value: str | None = None
    diff: str = ""


# The facts fields a proposal can rewrite in place: one line `  <field>: <value>` of the front matter.
_LINE_FIELDS = ("find_hint", "dashboard", "tab")
_NEEDS_QUOTES = re.compile(r"[:#'\"{}\[\],&*!|>%@`]|^\s|\s$")


def story_of(item: dict[str, Any]) -> str:
    return str(item.get("story") or str(item.get("task_id") or "").rsplit("_level", 1)[0])


def _new_value(key: str, resolved: Any, message: str) -> str | None:
    """The field's new value, from the world, for the causes whose repair is mechanical."""
    from certify import verb_kind

    if resolved is None or not resolved.targets:
        return None
    target = resolved.targets[0]
    facts = resolved.story.facts
    if key == "facts.find_hint":
        described = str(target.widget.definition.get("description") or "").strip()
        # a hint holding a verb keeps its words up to it; any other Find cause takes the catalog's words
        base = facts.find_hint if "instruction verb" in message else described
        sentence = re.split(r"(?<=[.!?])\s+", base)[0].rstrip(".")
        words_ = sentence.split()
        cut = next((i for i, w in enumerate(words_) if verb_kind(w.strip(",;")) is not None), len(words_))
        kept = words_[:cut]
        while kept and kept[-1].lower().strip(",") in ("that", "which", "who", "to", "and", "or"):
            kept.pop()
        if len(kept) < 2:
            return None
        value = " ".join(kept).rstrip(",")
        value = value[:1].lower() + value[1:]
        if re.search(rf"(?<!\w){re.escape(target.name)}(?!\w)", value, re.I):
            return None  # a description that names the widget would name it at Find
        return value
    if key in ("facts.dashboard", "facts.tab") and "holds the name of the Find target" in message:
        current = facts.dashboard if key == "facts.dashboard" else (facts.tab or "")
        left = re.sub(rf"(?<!\w){re.escape(target.name)}(?!\w)", " ", current, flags=re.I).split()
        story_words = [w.capitalize() for w in resolved.story.slug.split("_") if w not in ("repair", "read")]
        value = " ".join(dict.fromkeys([*story_words[:2], *left]))
        return None if re.search(re.escape(target.name), value, re.I) else value
    return None


def _diff(path: Path, field_name: str, value: str) -> str:
    import difflib

    text = path.read_text(encoding="utf-8")
    said = json.dumps(value, ensure_ascii=False) if _NEEDS_QUOTES.search(value) else value
    pattern = re.compile(rf"^(\s+{re.escape(field_name)}:)[ \t]*.*$", re.M)
    if not pattern.search(text):
        return ""
    changed = pattern.sub(lambda m: f"{m.group(1)} {said}", text, count=1)
    return "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True), changed.splitlines(keepends=True), str(path), str(path)
        )
    )


def story_edits(item: dict[str, Any], sources: Path, world: Any) -> list[StoryEdit]:
    """What to change in the item's story file: every cause `taskforge check` finds in that story (the facts
    field, the fix, and the new value where the world gives it), else the field the item itself points at."""
    from .checks import check_persona
    from .sources import story_folder

    persona, story = str(item.get("persona") or ""), story_of(item)
    folder = story_folder(sources, persona)
    path = folder / f"{story}.md" if folder is not None else None
    if path is None or not path.is_file():
        return []
    report = check_persona(sources, persona, world)
    resolved = next((r for r in report.resolved if r.story.slug == story), None)
    causes = [e for e in [*report.errors, *report.ladder_errors] if Path(e.file).stem == story]
    pointed = story_fix(item)
    if not causes and pointed is not None:
        causes_keyed = [(pointed[0], pointed[1])]
    else:
        causes_keyed = [(e.key, e.message) for e in causes]
    out = []
    for key, how in causes_keyed:
        value = _new_value(key, resolved, how)
        field_name = key.removeprefix("facts.")
        diff = _diff(path, field_name, value) if value is not None and field_name in _LINE_FIELDS else ""
        out.append(StoryEdit(str(path), key, how, value, diff))
    return out
