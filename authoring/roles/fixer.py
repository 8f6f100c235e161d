"""The fixer role: repairs a task whose calibration failures repeat with one fingerprint (a defect).

It may only edit the task — never the grader, the simulator, the world or another story — and every repair is
recorded as a lesson in the skill whose rule would have prevented it. The rule driver knows a few defect
fingerprints and their repairs and escalates everything else to a person.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from certify.calibrate import Defect
from certify.trial import Trial
from simulator import World

SLACK = 3


@dataclass
class FixResult:
    task: dict[str, Any] | None
    repaired: str | None = None
    lesson: str | None = None
    skill: str | None = None
    escalate: str | None = None


class FixerDriver(Protocol):
    name: str

    def repair(self, task: dict[str, Any], defect: Defect, trials: list[Trial], world: World) -> FixResult: ...


class RuleFixer:
    name = "rules"

    def repair(self, task: dict[str, Any], defect: Defect, trials: list[Trial], world: World) -> FixResult:
        failing = [t for t in trials if t.task_id == defect.task_id and t.valid and not t.passed]
        steps = task.get("eval", {}).get("required_tools", [])
        budget = task.get("eval", {}).get("max_turns")
        if failing and all(t.ended_by == "max_turns" for t in failing) and budget is not None and \
                budget < len(steps) + SLACK:
            patched = copy.deepcopy(task)
            patched["eval"]["max_turns"] = len(steps) + SLACK
            return FixResult(patched, repaired=f"max_turns {budget} -> {len(steps) + SLACK}",
                             lesson=f"a turn budget below the reference length + {SLACK} ran every attempt out of "
                                    "turns; keep max_turns = reference length (optional steps included) + 3",
                             skill="task-author")
        return FixResult(None, escalate=(
            f"{defect.task_id} fails the same way on all {defect.attempts} attempts "
            f"({'; '.join(defect.fingerprint[:3])}); no known repair applies, a person should decide"))


def with_lesson(text: str | None, skill: str, story: str, level: str, lesson: str, day: str) -> str:
    """The skill's text with one bullet added under its `## Lessons` section (created if missing); a bullet
    already there is not added twice."""
    text = text if text is not None else f"# {skill}\n\n## Lessons\n"
    if "## Lessons" not in text:
        text = text.rstrip("\n") + "\n\n## Lessons\n"
    bullet = f"- {day} {story}/{level}: {lesson}"
    if bullet not in text:
        text = text.rstrip("\n") + "\n" + bullet + "\n"
    return text


def append_lesson(skills_dir: Path, skill: str, story: str, level: str, lesson: str) -> Path:
    path = skills_dir / f"{skill}.md"
    before = path.read_text(encoding="utf-8") if path.is_file() else None
    path.write_text(with_lesson(before, skill, story, level, lesson, datetime.now(UTC).date().isoformat()),
                    encoding="utf-8")
    return path
