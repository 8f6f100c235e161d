"""The ladder-fairness role: the five levels of one story side by side (and the persona's prompts as a set).

Checks that only a set can show: the graded core stays constant across levels, each level's signature is
present at its level and absent below, budgets grow with the work, and prompts are not copies of each other.
"""

from __future__ import annotations

from typing import Protocol

from certify.task import Task

from ..factcheck import SOURCE_READS
from ..flags import Flag, make_flag
from ..variety import TARGET, jaccard, same_level_similarity

KNOWLEDGE_TOOLS = tuple(tool for tool, _ in SOURCE_READS.values())


class FairnessDriver(Protocol):
    name: str

    def review(self, story: str, levels: list[Task], persona_tasks: list[Task], persona: str) -> list[Flag]: ...


def _graded_core(task: Task) -> set[tuple[str, str, str]]:
    core = set()
    for req in task.eval.required_widgets:
        core.add((req.origin, req.widget_id, repr(sorted(req.data_args.items()))))
    for step in task.eval.required_tools:
        if not step.optional and step.tool == "get_widget_data":
            args = step.args
            core.add((str(args.get("origin")), str(args.get("widget_id")),
                      repr(sorted((args.get("data_args") or {}).items()))))
    return core


def _required(task: Task, tool: str, operation: str | None = None) -> bool:
    return any(not s.optional and s.tool == tool and (operation is None or s.args.get("operation") == operation)
               for s in task.eval.required_tools)


class RuleFairness:
    name = "rules"

    def review(self, story: str, levels: list[Task], persona_tasks: list[Task], persona: str) -> list[Flag]:
        flags: list[Flag] = []
        by_level = {t.level: t for t in levels}

        def flag(level: int | None, check: str, reason: str, evidence: str = "", severity: str = "blocker") -> None:
            task = by_level.get(level) if level is not None else None
            flags.append(make_flag(role="fairness", kind="fairness", persona=persona, story=story,
                                   task_id=task.id if task else None, level=level, check=check, severity=severity,
                                   reason=reason, evidence=evidence))

        if sorted(by_level) != [0, 1, 2, 3, 4]:
            flag(None, "complete_ladder", f"the story has levels {sorted(by_level)}, not 0-4")
            return flags
        names = {lv: t.eval.required_dashboard_name_contains for lv, t in by_level.items()}
        if len(set(names.values())) != 1 or None in names.values():
            odd = [lv for lv, n in names.items() if n != names[0] or n is None]
            for lv in odd:
                flag(lv, "constant_core", "the dashboard name is not graded like the other levels",
                     f"level{lv}: {names[lv]!r} vs level0: {names[0]!r}")
        base = _graded_core(by_level[0])
        for lv in range(1, 5):
            missing = base - _graded_core(by_level[lv])
            if missing:
                flag(lv, "constant_core", "graded targets or values differ from Execute", f"missing {sorted(missing)}")

        l0 = by_level[0].prompt
        for lv, kind in ((1, "target"), (2, "carried"), (3, "planted")):
            task = by_level[lv]
            hidden = [h for h in (task.meta.hidden if task.meta else []) if h.kind == kind]
            if not hidden:
                flag(lv, "signature", f"level{lv} declares no hidden {kind} value")
                continue
            value = hidden[0].value
            if kind in ("target", "carried") and value not in l0:
                flag(lv, "signature", f"the hidden {kind} '{value}' is not stated at Execute, so the level below "
                     "does not show what this level hides")
        for lv in range(5):
            knows = any(_required(by_level[lv], tool) for tool in KNOWLEDGE_TOOLS)
            builds = _required(by_level[lv], "manage_backends", "add")
            if (lv >= 3) != knows:
                flag(lv, "signature", "a knowledge read is graded " + ("below Ground" if knows else "missing at "
                                                                       "Ground and above"))
            if (lv == 4) != builds:
                flag(lv, "signature", "a backend build is graded " + ("below Compose" if builds else "missing at "
                                                                      "Compose"))
        budgets = {lv: t.eval.turn_budget or 0 for lv, t in by_level.items()}
        if not (budgets[0] <= min(budgets[1], budgets[2]) and max(budgets[1], budgets[2]) <= budgets[3] < budgets[4]):
            flag(None, "budgets", "turn budgets do not grow with the work", f"{budgets}")
        for lv in range(1, 5):
            if jaccard(l0, by_level[lv].prompt) > 0.9:
                flag(lv, "copy_paste", "the prompt is nearly a copy of Execute's", severity="minor")

        others = [(t.meta.story if t.meta else t.id, t.difficulty, t.prompt) for t in persona_tasks]
        scores = same_level_similarity(others)
        for level, score in scores.items():
            if level != "all" and score > TARGET and any(t.difficulty == level for t in levels):
                lv = int(level[-1])
                flag(lv, "variety", f"same-level prompts across the persona's stories are too alike "
                     f"(trigram Jaccard {score:.3f} > {TARGET})", severity="minor")
        return flags
