"""What a judge is shown about one answer: a `JudgeCase`, built from the task, the world and the episode.

The case carries the ask, the governing skill, the data the task makes available (the rows the reference's own
calls retrieve, replayed through the simulator), the exemplar and its calls, what the agent did (its calls and
the rows it actually retrieved) and its answer. Everything is bounded — rows per result, results, characters
per cell, calls listed, the answer's length — so one verbose task or agent cannot blow the judge's context or
its cost. The model judge renders the case through the template; the rubric judge reads the same case, so both
judge the same evidence.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from simulator import World

from ..episode import FINAL_ANSWER, ByObject, Episode, TraceEvent, reference_calls, replay
from ..task import KeyPoint, Task
from .template import ANSWER_BEGIN, ANSWER_END, TRACE_BEGIN, TRACE_END, USER, deface

MAX_ROWS = 20
MAX_RESULTS = 12
MAX_CELL_CHARS = 160
MAX_TEXT_CHARS = 2400
MAX_CALLS = 40
MAX_ARGS_CHARS = 240
MAX_ANSWER_CHARS = 6000
# Tools whose results are data an answer can draw on (rows, documents); the rest only change or show layout.
DATA_TOOLS = (
    "get_widget_data",
    "read_widget",
    "get_skill_content",
    "read_workspace_resource",
    "get_workspace_prompt",
)
IMPLICIT_POINT = (
    "The answer addresses the ask as the reference answer does: the same facts, correct, drawn from the data."
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CallLine(_Strict):
    index: int
    tool: str
    args: str
    ok: bool


class DataBlock(_Strict):
    """One result an answer can draw on: rows (capped) or a document's text (capped)."""

    source: str
    rows: list[dict[str, Any]] = Field(default_factory=list)
    total_rows: int = 0
    text: str | None = None
    truncated: bool = False


class JudgeCase(_Strict):
    task_id: str
    ask: str
    skill: str | None = None
    skill_text: str | None = None
    key_points: list[KeyPoint] = Field(default_factory=list)
    required_elements: list[str] = Field(default_factory=list)
    reference_answer: str
    reference_calls: list[str] = Field(default_factory=list)
    available: list[DataBlock] = Field(default_factory=list)
    agent_calls: list[CallLine] = Field(default_factory=list)
    agent_calls_total: int = 0
    agent_data: list[DataBlock] = Field(default_factory=list)
    answer: str | None = None
    answer_chars: int = 0

    def points(self) -> list[str]:
        """The points a verdict labels, in order: the key points, then the skill's required elements (or, for a
        task that names none, the one implicit point of matching the reference)."""
        out = [k.point for k in self.key_points]
        out += [f"The answer includes {e!r}, as the skill requires." for e in self.required_elements]
        return out or [IMPLICIT_POINT]

    def sha256(self) -> str:
        """The judge's input without the answer: what the task and the trace gave it. The audit records the
        exemplar's, and certify compares it with the current one, so a changed task, world or reference makes
        a recorded audit stale."""
        payload = self.model_dump(exclude={"answer", "answer_chars"})
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def render(self) -> str:
        """The user message of the template, every slot filled; untrusted text fenced and defaced."""
        answer = self.answer if self.answer is not None else "(no final answer was submitted)"
        return USER.format(
            ask=self.ask,
            skill_name=f" ({self.skill})" if self.skill else "",
            skill=self.skill_text or "(the task names no governing skill)",
            available=_blocks(self.available) or "(the reference retrieves no data)",
            reference_calls="; ".join(self.reference_calls) or "(none)",
            reference_answer=self.reference_answer,
            trace_begin=TRACE_BEGIN,
            agent_trace=deface(self._trace()),
            trace_end=TRACE_END,
            answer_begin=ANSWER_BEGIN,
            answer=deface(answer)
            + (
                f"\n[the answer was cut here: {len(answer)} of {self.answer_chars} characters shown]"
                if self.answer is not None and self.answer_chars > len(answer)
                else ""
            ),
            answer_end=ANSWER_END,
            count=len(self.points()),
            points="\n".join(f"{i}. {p}" for i, p in enumerate(self.points(), start=1)),
        )

    def _trace(self) -> str:
        calls = "\n".join(
            f"#{c.index} {c.tool} {c.args}{'' if c.ok else '  (failed)'}" for c in self.agent_calls
        )
        if self.agent_calls_total > len(self.agent_calls):
            calls += f"\n({self.agent_calls_total - len(self.agent_calls)} more call(s) not shown)"
        data = _blocks(self.agent_data)
        return f"Calls:\n{calls or '(none)'}\nRetrieved:\n{data or '(nothing)'}"


def build_case(
    world: World,
    task: Task,
    events: list[TraceEvent],
    final_answer: str | None,
    available: list[DataBlock] | None = None,
) -> JudgeCase:
    """The case of an answer to `task` after `events`. `available` (the reference's data) is computed (once
    per task and world) when not given."""
    spec = task.eval.judged
    if spec is None:
        raise ValueError(f"task '{task.id}' is not judged (no eval.judge_evaluation)")
    skill_text = None
    if spec.skill is not None:
        skill = world.skills.get(spec.skill)
        skill_text = _clip(skill.content, MAX_TEXT_CHARS) if skill is not None else None
    calls = [e for e in events if e.tool != FINAL_ANSWER]
    return JudgeCase(
        task_id=task.id,
        ask=task.prompt,
        skill=spec.skill,
        skill_text=skill_text,
        key_points=spec.key_points,
        required_elements=spec.required_elements,
        reference_answer=task.eval.reference_answer or "",
        reference_calls=list(_reference_lines(task)),
        available=reference_data(world, task) if available is None else available,
        agent_calls=[_call(e) for e in calls[:MAX_CALLS]],
        agent_calls_total=len(calls),
        agent_data=data_blocks(events),
        answer=None if final_answer is None else final_answer[:MAX_ANSWER_CHARS],
        answer_chars=len(final_answer or ""),
    )


_LINES: OrderedDict[str, tuple[str, ...]] = OrderedDict()
# The content keys below, by the model object they serialise (tasks and evals are never edited in place — a
# changed task is a new model): serialising a task for the key of what it is remembered by cost as much as
# what is remembered.
_KEYS: dict[tuple[int, str], tuple[weakref.ref[BaseModel], str]] = {}
_REFERENCE = {"required_tools", "reference_trace", "reference"}


def _content_key(model: BaseModel, part: str) -> str:
    """`model` as JSON (`part` "reference": the eval's reference fields only), remembered by the object."""
    with _LOCK:
        held = _KEYS.get((id(model), part))
    if held is not None and held[0]() is model:
        return held[1]
    key = model.model_dump_json(include=_REFERENCE if part == "reference" else None)
    with _LOCK:
        if len(_KEYS) >= _AVAILABLE_SIZE * 4:
            _KEYS.clear()
        _KEYS[(id(model), part)] = (weakref.ref(model), key)
    return key


def _reference_lines(task: Task) -> tuple[str, ...]:
    """The reference's calls as the case lists them: a pure function of the task, remembered by its content
    (every answer graded on a judged task lists them again)."""
    key = _content_key(task.eval, "reference")
    with _LOCK:
        if key in _LINES:
            _LINES.move_to_end(key)
            return _LINES[key]
    lines = tuple(f"{tool} {_args(args)}" for tool, args in reference_calls(task) if tool != FINAL_ANSWER)
    with _LOCK:
        _LINES[key] = lines
        if len(_LINES) > _AVAILABLE_SIZE:
            _LINES.popitem(last=False)
    return lines


def case_of(world: World, task: Task, episode: Episode) -> JudgeCase:
    return build_case(world, task, episode.events, episode.final_answer)


_AVAILABLE: OrderedDict[tuple[str, str], list[DataBlock]] = OrderedDict()
_AVAILABLE_SIZE = 256
_LOCK = threading.Lock()


def reference_data(world: World, task: Task) -> list[DataBlock]:
    """The data the task makes available: what the reference's calls retrieve, replayed. A pure function of
    the world and the task, remembered (every grade of a judged task needs it)."""
    key = (world.fingerprint, _content_key(task, "whole"))
    with _LOCK:
        if key in _AVAILABLE:
            _AVAILABLE.move_to_end(key)
            return _AVAILABLE[key]
    steps = [(t, a) for t, a in reference_calls(task) if t != FINAL_ANSWER]
    blocks = data_blocks(replay(world, task, steps).events)
    with _LOCK:
        _AVAILABLE[key] = blocks
        if len(_AVAILABLE) > _AVAILABLE_SIZE:
            _AVAILABLE.popitem(last=False)
    return blocks


def data_blocks(events: list[TraceEvent]) -> list[DataBlock]:
    blocks = []
    for e in events:
        if e.ok and e.tool in DATA_TOOLS:
            blocks.append(_BLOCKS.get(e, _block))
            if len(blocks) == MAX_RESULTS:
                break
    return blocks


# What a case shows of one recorded data event, by the event (`ByObject`): every answer graded along the call
# tree would otherwise cut the same rows again.
_BLOCKS = ByObject(1024)


def _block(event: TraceEvent) -> DataBlock:
    source = f"{event.tool} {_args(event.args)}"
    data = event.envelope.get("data")
    rows = _rows(data)
    if rows is not None:
        kept = [{str(k): _cell(v) for k, v in row.items()} for row in rows[:MAX_ROWS]]
        return DataBlock(source=source, rows=kept, total_rows=len(rows), truncated=len(rows) > MAX_ROWS)
    if isinstance(data, dict):
        text = next((data[k] for k in ("content", "text") if isinstance(data.get(k), str)), None)
        if text is None:
            text = json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)
    else:
        text = json.dumps(data, ensure_ascii=False, default=str)
    return DataBlock(source=source, text=_clip(text, MAX_TEXT_CHARS), truncated=len(text) > MAX_TEXT_CHARS)


def _rows(data: Any) -> list[dict[str, Any]] | None:
    if isinstance(data, dict):
        data = data.get("data", data.get("rows"))
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        return data
    return None


def _cell(value: Any) -> Any:
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return _clip(text, MAX_CELL_CHARS)


def _call(event: TraceEvent) -> CallLine:
    return CallLine(index=event.index, tool=event.tool, args=_args(event.args), ok=event.ok)


def _args(args: Any) -> str:
    return str(_ARGS.get(args, _args_text))


def _args_text(args: Any) -> str:
    return _clip(json.dumps(args, ensure_ascii=False, sort_keys=True, default=str), MAX_ARGS_CHARS)


# A call's arguments as a case shows them, by the arguments object (`ByObject`): never changed once the call is
# made (`CallTree` keys its calls by them too), and a replay along the tree makes the same call with the same
# object, in a new event.
_ARGS = ByObject(8192)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _blocks(blocks: list[DataBlock]) -> str:
    out = []
    for i, b in enumerate(blocks, start=1):
        if b.text is not None:
            out.append(f"[{i}] {b.source}\n{b.text}")
            continue
        lines = [f"[{i}] {b.source} — {b.total_rows} row(s)"]
        lines += [json.dumps(r, ensure_ascii=False, default=str) for r in b.rows]
        if b.truncated:
            lines.append(f"({b.total_rows - len(b.rows)} more row(s) not shown)")
        out.append("\n".join(lines))
    return "\n\n".join(out)
