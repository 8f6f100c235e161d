"""The fixer role: repairs a task whose calibration failures repeat with one fingerprint (a defect).

It may only edit the task — never the grader, the simulator, the world or another story — and every repair is
recorded as a lesson in the skill whose rule would have prevented it. A repair is a JSON Patch (RFC 6902) on the
task file, restricted to an allowlist of task paths (the prompt, the seeded state, the graded expectations, the
turn budget, the hidden values) and validated: it must apply, parse, keep the id and the level, and weaken no
check. The rule driver knows a few defect fingerprints and their repairs and escalates everything else to a
person; the LLM driver reads the fixer skill and answers with a `FixerReply`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

import jsonpatch
from pydantic import ConfigDict, Field, model_validator

from certify import Defect, Task, TaskFileError, Trial, parse_task
from simulator import World

from ..requires import needs
from .llm import Endpoint, RejectedReply, RoleReply, clip, standard_defaults
from .prompts import render_prompt

SLACK = 3
MAX_TRIALS = 3
MAX_EVENTS = 40
# What a repair may change (JSON pointers into the task file, each with everything below it). Never the id, the
# level, the story or persona, the setup's backends, skills, baseline or tools, nor the standing rules
# (trace_checks, workspace_checks, layout): changing those is not a repair of the task but of the benchmark.
PATCHABLE = (
    "/prompt",
    "/setup/initial_state",
    "/eval/required_tools",
    "/eval/required_widgets",
    "/eval/required_generated_widgets",
    "/eval/required_tabs",
    "/eval/required_tab_names",
    "/eval/required_dashboard_name_contains",
    "/eval/required_layouts",
    "/eval/required_widget_defs",
    "/eval/required_app_defs",
    "/eval/required_tool_results",
    "/eval/required_values_in_answer",
    "/eval/reference_answer",
    "/eval/max_turns",
    "/meta/hidden",
)


class JsonPatchOp(RoleReply):
    """One RFC 6902 operation; `from` is the source of a move or copy."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    op: Literal["add", "remove", "replace", "move", "copy", "test"]
    path: str
    value: Any = None
    from_: str | None = Field(default=None, alias="from")

    @model_validator(mode="after")
    def _complete(self) -> JsonPatchOp:
        if self.op in ("move", "copy") and self.from_ is None:
            raise ValueError(f"a {self.op} needs 'from'")
        if self.op in ("add", "replace", "test") and "value" not in self.model_fields_set:
            raise ValueError(f"a {self.op} needs 'value'")
        return self

    def rfc(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op in ("add", "replace", "test"):
            out["value"] = self.value
        if self.from_ is not None:
            out["from"] = self.from_
        return out


class PatchRejected(ValueError):
    """A patch that is not an acceptable repair; the message says why (it goes back to the model)."""


@dataclass
class FixResult:
    """A repair (`task` is the patched task, `patch` what changed) or an escalation (`task` is None)."""

    task: dict[str, Any] | None
    repaired: str | None = None
    lesson: str | None = None
    skill: str | None = None
    escalate: str | None = None
    patch: list[JsonPatchOp] = field(default_factory=list)


def patchable(path: str) -> bool:
    return any(path == allowed or path.startswith(allowed + "/") for allowed in PATCHABLE)


def apply_patch(task: dict[str, Any], patch: list[JsonPatchOp]) -> dict[str, Any]:
    """The task with the patch applied (the input is left alone); PatchRejected when an operation leaves the
    allowlist or does not apply."""
    if not patch:
        raise PatchRejected("the patch is empty; a repair changes at least one path")
    for n, op in enumerate(patch):
        for where in (op.path, op.from_):
            if where is not None and not patchable(where):
                raise PatchRejected(
                    f"operation {n} ({op.op} {where}) is outside what a repair may change; the "
                    f"patchable paths are {', '.join(PATCHABLE)}"
                )
    try:
        return jsonpatch.apply_patch(task, [op.rfc() for op in patch], in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise PatchRejected(f"the patch does not apply to the task: {exc}") from exc


class FixerDriver(Protocol):
    name: str

    def repair(
        self, task: dict[str, Any], defect: Defect, trials: list[Trial], world: World
    ) -> FixResult: ...


class RuleFixer:
    name = "rules"

    def repair(self, task: dict[str, Any], defect: Defect, trials: list[Trial], world: World) -> FixResult:
        failing = [t for t in trials if t.task_id == defect.task_id and t.valid and not t.passed]
        steps = task.get("eval", {}).get("required_tools", [])
        budget = task.get("eval", {}).get("max_turns")
        if (
            failing
            and all(t.ended_by == "max_turns" for t in failing)
            and budget is not None
            and budget < len(steps) + SLACK
        ):
            patch = [JsonPatchOp(op="replace", path="/eval/max_turns", value=len(steps) + SLACK)]
            return FixResult(
                apply_patch(task, patch),
                repaired=f"max_turns {budget} -> {len(steps) + SLACK}",
                lesson=f"a turn budget below the reference length + {SLACK} ran every attempt out of "
                "turns; keep max_turns = reference length (optional steps included) + 3",
                skill="task-author",
                patch=patch,
            )
        return FixResult(
            None,
            escalate=(
                f"{defect.task_id} fails the same way on all {defect.attempts} attempts "
                f"({'; '.join(defect.fingerprint[:3])}); no known repair applies, a person should decide"
            ),
        )


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
    path.write_text(
        with_lesson(before, skill, story, level, lesson, datetime.now(UTC).date().isoformat()),
        encoding="utf-8",
    )
    return path


# -------------------------------------------------------------------------------------------- LLM driver
SkillName = Literal["task-author", "task-validator", "task-level-fairness", "task-fixer"]


class FixerReply(RoleReply):
    action: Literal["patch", "escalate"]
    patch: list[JsonPatchOp] = Field(default_factory=list, description="with patch: the RFC 6902 operations")
    repaired: str | None = Field(default=None, description="with patch: what changed, one line")
    lesson: str | None = Field(default=None, description="with patch: <defect> → <rule for future authors>")
    skill: SkillName | None = Field(
        default=None, description="with patch: the skill the lesson is appended to"
    )
    reason: str | None = Field(default=None, description="with escalate: why no patch can repair the defect")

    @model_validator(mode="after")
    def _complete(self) -> FixerReply:
        if self.action == "patch":
            needs(self, "a patch", ("patch", "repaired", "lesson", "skill"))
        elif not self.reason:
            raise ValueError("an escalation needs a reason")
        return self


def _graded_strength(task: Task) -> dict[str, int]:
    """Counts a repair may not lower: removing any of these weakens what the task checks."""
    ev = task.eval
    return {
        "graded (non-optional) required_tools steps": sum(1 for s in ev.required_tools if not s.optional),
        "required_widgets entries": len(ev.required_widgets),
        "required_widgets with max_count": sum(1 for r in ev.required_widgets if r.max_count is not None),
        "required_generated_widgets entries": len(ev.required_generated_widgets),
        "data_contains values": sum(len(r.data_contains) for r in ev.required_generated_widgets),
        "required_layouts entries": len(ev.required_layouts),
        "required_widget_defs entries": len(ev.required_widget_defs),
        "required_app_defs entries": len(ev.required_app_defs),
        "required_tool_results entries": len(ev.required_tool_results),
        "hidden values": len(task.meta.hidden) if task.meta else 0,
    }


def check_patch(before: dict[str, Any], after: dict[str, Any], defaults: dict[str, Any]) -> Task:
    """The patched task, or PatchRejected saying why it is not an acceptable repair of `before`."""
    if after.get("id") != before.get("id"):
        raise PatchRejected(
            f"the patch changes the task id to {after.get('id')!r}; keep {before.get('id')!r}"
        )
    if after.get("difficulty") != before.get("difficulty"):
        raise PatchRejected(
            f"the patch changes difficulty to {after.get('difficulty')!r}; keep "
            f"{before.get('difficulty')!r} (never lower the level's dial)"
        )
    file = f"{before.get('id')}.json"
    try:
        patched = parse_task(after, file, defaults)
    except TaskFileError as exc:
        raise PatchRejected(f"the patched task does not parse: {exc.field}: {exc.message}") from exc
    try:
        original = parse_task(before, file, defaults)
    except TaskFileError:
        return patched
    if patched.eval.trace_checks.max_invalid_tool_calls > original.eval.trace_checks.max_invalid_tool_calls:
        raise PatchRejected("the patch raises the invalid-call budget; never weaken a check")
    old, new = _graded_strength(original), _graded_strength(patched)
    weaker = [f"{k} {old[k]} -> {new[k]}" for k in old if new[k] < old[k]]
    if weaker:
        raise PatchRejected(
            f"the patch weakens the task ({'; '.join(weaker)}); repair the cause without removing "
            "checks, or escalate"
        )
    return patched


def trial_digest(trial: Trial) -> dict[str, Any]:
    events = []
    for event in trial.events[:MAX_EVENTS]:
        envelope = event.get("envelope") or {}
        error = envelope.get("error") if isinstance(envelope, dict) else None
        item: dict[str, Any] = {
            "tool": event.get("tool"),
            "args": clip(event.get("args"), 300),
            "ok": event.get("ok"),
        }
        if not event.get("ok"):
            item["error"] = clip((error or {}).get("message") or envelope.get("message") or "", 300)
        events.append(item)
    return {
        "repeat": trial.repeat,
        "ended_by": trial.ended_by,
        "failure_codes": trial.failure_codes,
        "fingerprint": trial.fingerprint,
        "turns": trial.turns,
        "events": events,
        "events_omitted": max(0, len(trial.events) - MAX_EVENTS),
        "final_answer": clip(trial.final_answer or "", 300),
    }


class LLMFixer:
    """Repairs a defect by patching the task alone; the pipeline re-certifies and appends the lesson."""

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def repair(self, task: dict[str, Any], defect: Defect, trials: list[Trial], world: World) -> FixResult:
        failing = [t for t in trials if t.task_id == defect.task_id and t.valid and not t.passed][:MAX_TRIALS]
        user = render_prompt(
            "fixer",
            task=json.dumps(task, indent=1, ensure_ascii=False),
            defect=json.dumps(defect.model_dump(mode="json"), indent=1, ensure_ascii=False),
            trials=json.dumps([trial_digest(t) for t in failing], indent=1, ensure_ascii=False),
            patchable=", ".join(PATCHABLE),
        )
        patched: dict[str, Any] = {}

        def check(reply: FixerReply) -> None:
            if reply.action == "patch":
                after = apply_patch(task, reply.patch)
                check_patch(task, after, standard_defaults())
                patched["task"] = after

        try:
            reply = self.endpoint.ask(
                "fixer", defect.task_id, self.endpoint.skill("task-fixer"), user, FixerReply, check
            )
        except RejectedReply as exc:
            self.endpoint.progress(f"llm fixer {defect.task_id}: patch rejected, escalating")
            return FixResult(
                None,
                escalate=f"the LLM fixer's patch was rejected: {exc.reason} (last reply: "
                f"{clip(exc.evidence, 300)})",
            )
        if reply.action == "escalate":
            self.endpoint.progress(f"llm fixer {defect.task_id}: escalated")
            return FixResult(None, escalate=reply.reason)
        self.endpoint.progress(f"llm fixer {defect.task_id}: {reply.repaired}")
        return FixResult(
            patched["task"],
            repaired=reply.repaired,
            lesson=reply.lesson,
            skill=reply.skill,
            patch=reply.patch,
        )
