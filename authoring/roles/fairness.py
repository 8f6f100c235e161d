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

from certify import LEVEL_NAMES, Task
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
        base = _graded_core(by_level[0])
        for lv in range(1, 5):
            missing = base - _graded_core(by_level[lv])
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
            if kind in ("target", "carried") and value not in l0:
                flag(
                    lv,
                    "signature",
                    f"the hidden {kind} '{value}' is not stated at Execute, so the level below "
                    "does not show what this level hides",
                )
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
