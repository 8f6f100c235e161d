"""The ladder-fairness role: the five levels of one story side by side (and the persona's prompts as a set).

Checks that only a set can show: the graded core stays constant across levels, each level's signature is
present at its level and absent below, budgets grow with the work, and prompts are not copies of each other.
The rule driver checks them mechanically; the LLM driver reads the five files side by side with the fairness
skill and answers with a `FairnessReply`. Neither reviews a ladder that is not complete: that is one blocker,
found without asking anyone.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal, Protocol

from pydantic import BeforeValidator, Field, field_validator

from certify import LEVEL_NAMES, HiddenValue, Task, states_value
from simulator import tools_of

from ..flags import Flag
from ..variety import TARGET, jaccard, same_level_similarity
from .findings import Finding, raise_flag
from .llm import Endpoint, RoleReply, VerdictReply, spelled, task_json
from .prompts import render_prompt

DOCUMENT_TOOLS = tools_of("document")


class FairnessDriver(Protocol):
    name: str

    def review(
        self, story: str, levels: list[Task], persona_tasks: list[Task], persona: str
    ) -> list[Flag]: ...


def _graded_core(task: Task) -> set[tuple[str, str, str]]:
    core = set()
    for req in task.eval.required_widgets:
        core.add((req.origin, str(req.widget_id or req.name), repr(sorted(req.data_args.items()))))
    for note in task.eval.required_generated_widgets:
        core |= {("note", str(note.name_contains), fact) for fact in note.data_contains}
    for step in task.eval.required_tools:
        if not step.optional and step.tool == "get_widget_data":
            args = step.args
            core.add(
                (
                    str(args.get("origin")),
                    str(args.get("widget_id")),
                    repr(sorted((args.get("data_args") or {}).items())),
                )
            )
    return core


def _kept(task: Task) -> set[tuple[str, str, str]]:
    """The graded entries that keep a seeded widget as it is (a repair's decoy): graded on the values the board
    seats it on (and the defaults of the rest), where a stale target is graded on others."""
    board = (task.setup.model_dump().get("initial_state") or {}).get("dashboard") or {}
    seated = [
        (str(w.get("origin")), str(w.get("widget_id")), dict(w.get("data_args") or {}))
        for w in board.get("widgets") or []
        if isinstance(w, dict)
    ]
    return {
        (req.origin, str(req.widget_id), repr(sorted(req.data_args.items())))
        for req in task.eval.required_widgets
        if any(
            (origin, wid) == (req.origin, str(req.widget_id)) and args.items() <= req.data_args.items()
            for origin, wid, args in seated
        )
    }


def _graded_args(task: Task, origin: str, widget_id: str) -> list[dict[str, Any]]:
    """The values `task` grades the widget on: its required widgets' and graded reads' data_args."""
    out = [
        dict(req.data_args)
        for req in task.eval.required_widgets
        if (req.origin, str(req.widget_id)) == (origin, widget_id)
    ]
    out += [
        dict(step.args.get("data_args") or {})
        for step in task.eval.required_tools
        if not step.optional
        and step.tool == "get_widget_data"
        and (step.args.get("origin"), step.args.get("widget_id")) == (origin, widget_id)
    ]
    return out


def says_hidden(below: Task, hidden: HiddenValue) -> bool:
    """Whether another level `below` says `hidden` (`stated_below`): its prompt states the value — for a target
    hidden as an instance among twins, every value the instance is seeded on — or, for an instance, it works on
    (is graded to change) a seated widget showing those values."""
    if not hidden.instance:
        return states_value(below.prompt, hidden.value, any_case=True)
    shown = {k: str(v) for k, v in hidden.instance.items()}
    if all(states_value(below.prompt, v, any_case=True) for v in shown.values()):
        return True
    board = (below.setup.model_dump().get("initial_state") or {}).get("dashboard") or {}
    for w in board.get("widgets") or []:
        seat = (str(w.get("origin")), str(w.get("widget_id")))
        args = dict(w.get("data_args") or {})
        kept = any(  # graded to stay on what it is seated on (a decoy, a twin)
            (req.origin, str(req.widget_id)) == seat and args.items() <= req.data_args.items()
            for req in below.eval.required_widgets
        )
        if not kept and shown.items() <= {str(k): str(v) for k, v in args.items()}.items():
            return True
    return False


def stated_below(by_level: dict[int, Task]) -> dict[int, tuple[str, str]]:
    """Per level, (severity, why) another level of the same story states what it hides (levels not listed are
    sound): a lower one for every hidden value, and any other one — above it too — for a hidden target.

    A player that met the story's lower levels first (or anyone reading the published taskset, its higher
    levels included) must not find a level's answer there. A hidden target (Find) said at any other level, or a
    planted fact (Ground) said below, is a blocker: Execute, Derive, Ground and Compose work on a stand-in of
    the target Find hides (`factcheck.working`). A hidden carried value may be said below — Derive's first
    value is the one Execute and Find state, the dial it turns — when the level also hides something no lower
    level says (Derive's second view, Ground's planted passage, whose read is graded); a level every hidden
    value of which a lower level states is answered by copying, and is reported (minor: a Derive whose
    parameter offers no rival to ask a second view on has nothing else to hide). Values other than a target
    are read below only: a higher level states what a lower one hides by design (Ground says the value Derive
    carries where its fact sets another parameter). A target hidden as an instance among twins of its own
    widget (`instance`: its name names them all) is said where another level states the values that instance
    is seeded on, or works on a widget seated on them (a player that repaired it there repairs the instance
    showing the same)."""
    out: dict[int, tuple[str, str]] = {}
    for lv, task in sorted(by_level.items()):
        lower = {j: by_level[j] for j in sorted(by_level) if j < lv}
        others = {j: by_level[j] for j in sorted(by_level) if j != lv}
        hidden = task.meta.hidden if task.meta else []
        if not hidden:
            continue
        said = [
            [j for j, other in (others if h.kind == "target" else lower).items() if says_hidden(other, h)]
            for h in hidden
        ]
        named = [(h, js) for h, js in zip(hidden, said, strict=True) if js and h.kind != "carried"]
        if named:
            h, js = named[0]
            out[lv] = (
                "blocker",
                f"the hidden {h.kind} '{h.value}' is stated at level{js[0]} of the story: a player that met it "
                "there reads this level's answer",
            )
        elif lower and all(said):
            out[lv] = (
                "minor",
                "every hidden value ("
                + ", ".join(f"'{h.value}'" for h in hidden)
                + ") is stated by a lower level of the story: a player that met them there copies the answer",
            )
    return out


def _on_own_target(task: Task) -> bool:
    """Whether a level other than Find works on the story's own target because it asks for a judged analysis
    that no stand-in serves (`factcheck.working.execute_stories`): the analysis over the target's rows is kept
    at every level in preference to hiding the target from a player that met that level."""
    return task.eval.judged is not None and (task.meta is None or task.meta.stands_in is None)


def _analysis_on_target(by_level: dict[int, Task], lv: int) -> bool:
    """Whether what level `lv` hides is said elsewhere only by levels that work on the story's own target
    because they ask for a judged analysis that no stand-in serves (`_on_own_target`), or because nothing
    stands in for it there (a level above Find whose author says why, `meta.on_target`): that level is
    reported, not blocked."""
    excused = {
        j for j, t in by_level.items() if j != 1 and (_on_own_target(t) or (t.meta and t.meta.on_target))
    }
    if lv != 1 or not excused:
        return False
    rest = {k: t for k, t in by_level.items() if k not in excused}
    return stated_below(rest).get(lv, ("", ""))[0] != "blocker"


def named_elsewhere(story: str, by_level: dict[int, Task], persona_tasks: list[Task]) -> dict[int, str]:
    """The levels of `story` whose request names what another story's Find level hides: the published set
    shows every request, so a reader of it reads that Find's answer here. The rule author works such a level
    on that widget only where nothing else stands in (`rules._others_first`), so it is reported as minor."""
    out: dict[int, str] = {}
    for other in persona_tasks:
        meta = other.meta
        if other.level != 1 or meta is None or meta.story == story:
            continue
        for hidden in (h for h in meta.hidden if h.kind == "target" and not h.instance):
            for lv, task in by_level.items():
                if lv not in out and says_hidden(task, hidden):
                    out[lv] = (
                        f"names '{hidden.value}', which {other.id} hides: a reader of the published set reads that "
                        "Find's answer here (nothing else stands in for this level's widget)"
                    )
    return out


def stated_elsewhere(by_level: dict[int, Task]) -> dict[int, tuple[str, str]]:
    """`stated_below` as the fairness review reports it: a hidden target said only by levels that work on it
    because nothing stands in for it there (`_analysis_on_target`) is minor, with their reasons."""
    out = {}
    for lv, (severity, reason) in stated_below(by_level).items():
        if severity == "blocker" and _analysis_on_target(by_level, lv):
            severity = "minor"
            whys = [
                f"level{j}: "
                + (
                    t.meta.on_target
                    if t.meta and t.meta.on_target
                    else "the story asks for a judged analysis at every level and no other widget serves its "
                    "figure"
                )
                for j, t in sorted(by_level.items())
                if j != 1 and (_on_own_target(t) or (t.meta and t.meta.on_target))
            ]
            reason += " (the levels naming it work on the target itself: " + "; ".join(whys) + ")"
        out[lv] = (severity, reason)
    return out


def _required(task: Task, tool: str, operation: str | None = None) -> bool:
    return any(
        not s.optional and s.tool == tool and (operation is None or s.args.get("operation") == operation)
        for s in task.eval.required_tools
    )


def incomplete_ladder(story: str, levels: list[Task], persona: str) -> list[Flag]:
    """The blocker for a story whose five levels are not all there (no reviewer can read a partial ladder)."""
    present = sorted({t.level for t in levels})
    if present == [0, 1, 2, 3, 4]:
        return []
    finding = Finding("complete_ladder", "blocker", f"the story has levels {present}, not 0-4")
    return [raise_flag("fairness", persona, story, None, None, finding)]


class RuleFairness:
    name = "rules"

    def review(self, story: str, levels: list[Task], persona_tasks: list[Task], persona: str) -> list[Flag]:
        flags: list[Flag] = []
        by_level = {t.level: t for t in levels}

        def flag(
            level: int | None, check: str, reason: str, evidence: str = "", severity: str = "blocker"
        ) -> None:
            task = by_level.get(level) if level is not None else None
            flags.append(
                raise_flag(
                    "fairness", persona, story, task, level, Finding(check, severity, reason, evidence)
                )
            )

        incomplete = incomplete_ladder(story, levels, persona)
        if incomplete:
            return incomplete
        names = {
            lv: t.eval.judged_dashboard or t.eval.required_dashboard_name_contains
            for lv, t in by_level.items()
        }
        if len(set(names.values())) != 1 or None in names.values():
            odd = [lv for lv, n in names.items() if n != names[0] or n is None]
            for lv in odd:
                flag(
                    lv,
                    "constant_core",
                    "the judged dashboard is not the same as at the other levels",
                    f"level{lv}: {names[lv]!r} vs level0: {names[0]!r}",
                )
        stand = by_level[0].meta.stands_in if by_level[0].meta else None
        base = _graded_core(by_level[0])
        if stand is not None:
            # Execute works on a stand-in of the first target (no lower level names what Find hides): the core
            # the levels above keep is Execute's but for the stand-in's entries, a read's note (its rows) and
            # the widgets its board seats beside the stand-in to stay as seeded (a repair's decoy, drawn for the
            # stand-in); the stand-in itself is graded on the values the levels above grade the target on
            on = {(stand.origin, stand.widget_id), (stand.origin, stand.for_widget_id)}
            base = {c for c in base - _kept(by_level[0]) if c[:2] not in on and c[0] != "note"}
            on_target = _graded_args(by_level[1], stand.origin, stand.for_widget_id)
            for args in _graded_args(by_level[0], stand.origin, stand.widget_id):
                if not any(args.items() <= other.items() for other in on_target):
                    flag(
                        0,
                        "constant_core",
                        f"Execute's stand-in '{stand.name}' is graded on values the levels above do not grade "
                        f"'{stand.for_name}' on",
                        f"{args} vs {on_target}",
                    )
        found = by_level[1].meta.hidden if by_level[1].meta else []
        if stand is None and any(h.instance for h in found):
            # Execute works another instance of the target's widget (Find hides an instance among twins): its
            # board seats that instance on a twin's values, and the widgets it grades to stay as seeded are
            # drawn for that board, as beside a stand-in
            base -= _kept(by_level[0])
        for lv in range(1, 5):
            missing = base - _graded_core(by_level[lv])
            meta = by_level[lv].meta
            moved = meta.stands_in if meta is not None else None
            if meta is not None and moved is not None:
                # the level works on a stand-in of its own (no level names what Find hides): as beside
                # Execute's, what it keeps is its core but for the target's entries, its note and the widgets its
                # board seats to stay as seeded; the stand-in is graded on values the target is graded on above
                away = {(moved.origin, moved.for_widget_id), (moved.origin, moved.widget_id)}
                missing = {c for c in missing - _kept(by_level[0]) if c[:2] not in away and c[0] != "note"}
                on_target = _graded_args(by_level[1], moved.origin, moved.for_widget_id)
                # (a value the level itself hides is its own: Derive's second view on the rival rule's value)
                carried = {h.value for h in meta.hidden if h.kind == "carried"}
                kept = {c[2] for c in _kept(by_level[lv]) if c[:2] == (moved.origin, moved.widget_id)}
                for args in _graded_args(by_level[lv], moved.origin, moved.widget_id):
                    if repr(sorted(args.items())) in kept:
                        continue  # a twin of the stand-in, graded to stay as seeded
                    args = {k: v for k, v in args.items() if str(v) not in carried}
                    if not any(args.items() <= other.items() for other in on_target):
                        flag(
                            lv,
                            "constant_core",
                            f"the stand-in '{moved.name}' is graded on values Find does not grade "
                            f"'{moved.for_name}' on",
                            f"{args} vs {on_target}",
                        )
            if missing:
                flag(
                    lv,
                    "constant_core",
                    "graded targets or values differ from Execute",
                    f"missing {sorted(missing)}",
                )

        l0 = by_level[0].prompt
        for lv, kind in ((1, "target"), (2, "carried"), (3, "planted")):
            task = by_level[lv]
            hidden = [h for h in (task.meta.hidden if task.meta else []) if h.kind == kind]
            if not hidden:
                flag(lv, "signature", f"level{lv} declares no hidden {kind} value")
                continue
            value = hidden[0].value
            if kind == "carried" and stand is None and value not in l0:
                flag(
                    lv,
                    "signature",
                    f"the hidden {kind} '{value}' is not stated at Execute, so the level below "
                    "does not show what this level hides",
                )
        for lv, (severity, reason) in stated_elsewhere(by_level).items():
            flag(lv, "stated_below", reason, severity=severity)
        for lv, reason in named_elsewhere(story, by_level, persona_tasks).items():
            flag(lv, "named_elsewhere", reason, severity="minor")
        for lv in range(5):
            knows = any(_required(by_level[lv], tool) for tool in DOCUMENT_TOOLS)
            builds = _required(by_level[lv], "manage_backends", "add")
            if (lv >= 3) != knows:
                flag(
                    lv,
                    "signature",
                    "a knowledge read is graded "
                    + ("below Ground" if knows else "missing at Ground and above"),
                )
            if (lv == 4) != builds:
                flag(
                    lv,
                    "signature",
                    "a backend build is graded " + ("below Compose" if builds else "missing at Compose"),
                )
        budgets = {lv: t.eval.turn_budget or 0 for lv, t in by_level.items()}
        # Find's work is reading the schema of every widget its description may mean, which the levels above
        # (the target named) do not do: its budget grows with Execute's, not below Ground's.
        if not (budgets[0] <= min(budgets[1], budgets[2]) and budgets[2] <= budgets[3] < budgets[4]):
            flag(None, "budgets", "turn budgets do not grow with the work", f"{budgets}")
        for lv in range(1, 5):
            if jaccard(l0, by_level[lv].prompt) > 0.9:
                flag(lv, "copy_paste", "the prompt is nearly a copy of Execute's", severity="minor")

        others = [(t.meta.story if t.meta else t.id, t.difficulty, t.prompt) for t in persona_tasks]
        scores = same_level_similarity(others)
        for level, score in scores.items():
            if level != "all" and score > TARGET and any(t.difficulty == level for t in levels):
                lv = int(level[-1])
                flag(
                    lv,
                    "variety",
                    f"same-level prompts across the persona's stories are too alike "
                    f"(trigram Jaccard {score:.3f} > {TARGET})",
                    severity="minor",
                )
        return flags


# -------------------------------------------------------------------------------------------- LLM driver
Rule = Literal[
    "constant-core",
    "signature-present",
    "signature-absent-below",
    "budget",
    "copy-paste",
    "skeleton",
    "voice",
]


class FairnessFinding(RoleReply):
    level: int | None = Field(
        default=None, ge=0, le=4, description="the level that must change; null for the whole ladder"
    )
    rule: Annotated[Rule, BeforeValidator(spelled("-"))]
    severity: Literal["blocker", "minor"]
    reason: str = Field(min_length=1)
    evidence: str = ""

    @field_validator("level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower().removeprefix("level").isdigit():
            return int(value.strip().lower().removeprefix("level"))
        return value


class FairnessReply(VerdictReply):
    clean: ClassVar[str] = "pass"
    verdict: Literal["pass", "flag"]
    flags: list[FairnessFinding] = Field(default_factory=list)


class LLMFairness:
    """The ladder read as a set, by a model holding the fairness skill."""

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def review(self, story: str, levels: list[Task], persona_tasks: list[Task], persona: str) -> list[Flag]:
        incomplete = incomplete_ladder(story, levels, persona)
        if incomplete:
            self.endpoint.progress(f"llm fairness {story}: incomplete ladder, not reviewed")
            return incomplete
        ordered = sorted(levels, key=lambda t: t.level)
        others = []
        for task in ordered:
            for other in persona_tasks:
                other_story = other.meta.story if other.meta else None
                if other.difficulty == task.difficulty and other_story != story and other.id != task.id:
                    others.append(
                        {
                            "level": task.level,
                            "task_id": other.id,
                            "prompt": other.prompt,
                            "jaccard": round(jaccard(task.prompt, other.prompt), 3),
                            "against": task.id,
                        }
                    )
        user = render_prompt(
            "fairness",
            story=story,
            others=json.dumps(others, indent=1, ensure_ascii=False),
            levels=[{"id": t.id, "name": LEVEL_NAMES[t.difficulty], "json": task_json(t)} for t in ordered],
        )
        reply = self.endpoint.ask(
            "fairness", story, self.endpoint.skill("task-level-fairness"), user, FairnessReply
        )
        by_level = {t.level: t for t in ordered}
        flags = []
        for f in reply.flags:
            flagged = by_level.get(f.level) if f.level is not None else None
            finding = Finding(f.rule, f.severity, f.reason, f.evidence)
            flags.append(raise_flag("fairness", persona, story, flagged, f.level, finding))
        self.endpoint.progress(
            f"llm fairness {story}: {reply.verdict}" + (f" ({len(flags)} flag(s))" if flags else "")
        )
        return flags


# ================================================================================================ fixer
