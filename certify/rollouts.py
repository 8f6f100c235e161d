"""Rollouts for training: the trials of `eval`, `serve`, OpenEnv and calibration runs as chat transcripts with
their rewards (`taskforge export rollouts`).

One record per valid trial (an invalid one does not describe the agent, so it is never training data): the task,
its level and persona, the model, the messages in the OpenAI chat format with tool calls and results, the rewards
of `certify/rewards.py` (strict and shaped), the failing codes and the tokens spent.

Where the messages come from. A model agent's trial keeps its conversation (`Trial.transcript`): that is exported
as it was, since it is what the model saw and said (its text, its tool calls, results cut where the harness cut
them). Every other trial (the ladder, the oracle, an agent in another harness over `serve` or OpenEnv) keeps only
its calls; its messages are built from them the way our harness's tools mode would have shown them: the system
prompt that states the episode's rules, the request, then per call an assistant tool call and the tool's result
(the envelope, replayed through the deterministic simulator where the trial stored a compact one). A reply that
called no tool is an assistant message followed by the harness's nudge; one that was not an action at all is an
assistant message followed by the harness's error.

`replay_messages` reads a record's messages back into an episode: exported rollouts, replayed through our
episode, give the trial's verdict (the round-trip the tests check), so what a trainer reads is what was graded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from simulator import World

from .agents.base import TaskView
from .agents.llm import first_message, system_prompt
from .agents.parsing import ParseMode, parse_arguments, parse_reply
from .episode import NO_ACTION, NUDGE, Episode
from .grader import CheckFn, GradeResult, grade
from .judge import StaleJudgment, rejudged, with_judgment
from .rewards import Reward, outstanding_checks, score, turn_budget
from .task import Task
from .trial import UNPARSEABLE, Trial, end_if_out_of_turns, open_episode, record_unparseable, replay_trial

HarnessMode = Literal["tools", "json"]


class RolloutFormat(StrEnum):
    openai = "openai"
    sharegpt = "sharegpt"


class RolloutFilter(StrEnum):
    passed = "pass"
    failed = "fail"
    all = "all"


class Rollout(BaseModel):
    """One trial as training data (the `openai` format; `sharegpt` is derived from it)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    level: str
    level_name: str | None = None
    persona: str | None = None
    story: str | None = None
    model: str
    run: str
    repeat: int = 0
    source: Literal["transcript", "calls"]
    harness_mode: HarnessMode = "tools"
    parse: ParseMode = "lenient"
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    reward: float
    rewards: Reward
    passed: bool
    failure_codes: list[str] = Field(default_factory=list)
    ended_by: str | None = None
    turns: int = 0
    tokens: dict[str, int] = Field(default_factory=dict)


class RolloutSource(BaseModel):
    """Where a run's trials are and how they were produced (the harness mode and parser of model agents)."""

    model_config = ConfigDict(extra="forbid")

    label: str
    trials_file: Path
    taskset_dir: Path | None = None
    world: Path | None = None
    harness_mode: HarnessMode = "tools"
    parse: ParseMode = "lenient"


def openai_tools(task: Task) -> list[dict[str, Any]]:
    """The task's tools as OpenAI function specs (what our harness's tools mode sends)."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]},
        }
        for t in TaskView.of(task).tools
    ]


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def messages_from_calls(task: Task, episode: Episode) -> list[dict[str, Any]]:
    """The conversation our harness's tools mode would have had for the calls of `episode`."""
    view = TaskView.of(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(view, "tools")},
        {"role": "user", "content": first_message(view)},
    ]
    for event in episode.events:
        if event.tool == NO_ACTION:
            messages.append({"role": "assistant", "content": (event.args or {}).get("text") or ""})
            messages.append({"role": "user", "content": NUDGE})
        elif event.tool == UNPARSEABLE:
            messages.append({"role": "assistant", "content": (event.args or {}).get("raw") or ""})
            messages.append({"role": "user", "content": str(event.envelope.get("message") or "")})
        else:
            call_id = f"call_{event.index}"
            arguments = _dump(event.args if event.args is not None else {})
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": event.tool, "arguments": arguments},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": _dump(event.envelope)})
    return messages


def replay_messages(
    world: World,
    task: Task,
    messages: list[dict[str, Any]],
    *,
    mode: HarnessMode = "tools",
    parse: ParseMode = "lenient",
) -> Episode:
    """The episode a conversation's actions make, under the harness's rules (as `run_trial` drives an agent).

    tools mode: every tool call of an assistant message is an action (its arguments parsed as the harness parses
    them); an assistant message without one is an idle turn when the nudge follows it, an unparseable reply when
    the harness's error follows it, and nothing when nothing follows (the session stopped there). json mode:
    every assistant message is one action, parsed from its text."""
    episode = open_episode(world, task)
    for n, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        following = messages[n + 1] if n + 1 < len(messages) else None
        calls = message.get("tool_calls") or []
        if mode == "tools" and calls:
            for call in calls:
                end_if_out_of_turns(episode)
                if episode.done:
                    break
                function = call.get("function") or {}
                parsed = parse_arguments(
                    str(function.get("name") or ""), function.get("arguments"), parse
                ).action
                if parsed.parse_error is not None:
                    record_unparseable(episode, parsed.raw, parsed.parse_error)
                else:
                    episode.act(parsed.tool, parsed.args)
        elif mode == "json":
            end_if_out_of_turns(episode)
            if episode.done:
                break
            parsed = parse_reply(message.get("content"), parse).action
            if parsed.parse_error is not None:
                record_unparseable(episode, parsed.raw, parsed.parse_error)
            else:
                episode.act(parsed.tool, parsed.args)
        elif following is not None:
            end_if_out_of_turns(episode)
            if episode.done:
                break
            text = message.get("content")
            if following.get("role") == "user" and following.get("content") == NUDGE:
                episode.idle(text)
            else:
                record_unparseable(episode, text, str(following.get("content") or ""))
        if episode.done:
            break
    return episode


def verdict(task: Task, episode: Episode, trial: Trial, registry: dict[str, CheckFn] | None = None) -> Trial:
    """`episode` graded as `trial` was recorded (its end, including a model's refusal), for comparison."""
    episode.stop(trial.ended_by or "replay_end")
    out = Trial(task_id=trial.task_id, level=trial.level, agent=trial.agent, repeat=trial.repeat)
    out.ended_by = trial.ended_by
    out.apply_grade(_graded(episode.workspace.world, task, episode, trial, registry))
    return out


def _graded(
    world: World, task: Task, episode: Episode, trial: Trial, registry: dict[str, CheckFn] | None
) -> GradeResult:
    """The replayed episode graded as the trial was: a judged answer by its recorded verdict (the judge asked
    only once the deterministic checks hold, as the harness asks it), never by a judge the trial did not see."""
    if task.eval.judged is None:
        return grade(task, episode, registry)
    try:
        return rejudged(world, task, episode, trial.judge, registry)[0]
    except StaleJudgment:
        # StaleJudgment is raised only for a stored judgment, so `trial.judge` is set here
        return with_judgment(task, episode, trial.judge, registry)  # type: ignore[arg-type]


def rollout(
    world: World,
    task: Task,
    trial: Trial,
    source: RolloutSource,
    *,
    outstanding: frozenset[str] | None = None,
    registry: dict[str, CheckFn] | None = None,
) -> Rollout:
    """One valid trial as a rollout, graded by the current grader on its replayed calls."""
    episode = replay_trial(world, task, trial)
    result: GradeResult = _graded(world, task, episode, trial, registry)
    regraded = Trial(task_id=trial.task_id, level=trial.level, agent=trial.agent, ended_by=trial.ended_by)
    regraded.apply_grade(result)
    rewards = score(
        result,
        turns=episode.turns,
        budget=turn_budget(task),
        outstanding=outstanding if outstanding is not None else outstanding_checks(world, task, registry),
        passed=bool(regraded.passed),
    )
    chat = [dict(m) for m in trial.transcript if isinstance(m, dict) and "role" in m]
    meta = task.meta
    return Rollout(
        task_id=task.id,
        level=task.difficulty,
        level_name=meta.level_name if meta else None,
        persona=(meta.persona if meta else None) or task.persona,
        story=meta.story if meta else None,
        model=trial.agent,
        run=source.label,
        repeat=trial.repeat,
        source="transcript" if chat else "calls",
        harness_mode=source.harness_mode if chat else "tools",
        parse=source.parse,
        messages=chat or messages_from_calls(task, episode),
        tools=openai_tools(task),
        reward=rewards.strict,
        rewards=rewards,
        passed=bool(regraded.passed),
        failure_codes=regraded.failure_codes,
        ended_by=trial.ended_by,
        turns=trial.turns,
        tokens={"in": trial.tokens_in, "out": trial.tokens_out, "cached": trial.tokens_cached},
    )


def keep(trial: Trial, which: RolloutFilter) -> bool:
    if not trial.valid:
        return False
    if which is RolloutFilter.passed:
        return bool(trial.passed)
    if which is RolloutFilter.failed:
        return trial.passed is False
    return True


def rollouts(
    world: World,
    tasks: dict[str, Task],
    trials: Iterable[Trial],
    source: RolloutSource,
    which: RolloutFilter = RolloutFilter.all,
    registry: dict[str, CheckFn] | None = None,
) -> Iterator[Rollout]:
    """The rollouts of `trials` that pass the filter (judged by the recorded verdict), in their order."""
    cache: dict[str, frozenset[str]] = {}
    for trial in trials:
        if not keep(trial, which):
            continue
        task = tasks[trial.task_id]
        if task.id not in cache:
            cache[task.id] = outstanding_checks(world, task, registry)
        yield rollout(world, task, trial, source, outstanding=cache[task.id], registry=registry)


def sharegpt(record: Rollout) -> dict[str, Any]:
    """A rollout in the ShareGPT layout trainers such as LLaMA-Factory read: `conversations` alternating
    human/gpt turns, a tool call as `function_call` followed by its `observation`, the system prompt and the tools
    beside them, and the rollout's metadata. An assistant's text beside its tool calls is not kept (the layout has
    no place for both)."""
    system = ""
    turns: list[dict[str, str]] = []
    results: dict[str, str] = {}
    for message in record.messages:
        if message.get("role") == "tool":
            results[str(message.get("tool_call_id"))] = str(message.get("content") or "")
    for message in record.messages:
        role, content = message.get("role"), message.get("content")
        if role == "system":
            system = str(content or "")
        elif role == "user":
            turns.append({"from": "human", "value": str(content or "")})
        elif role == "assistant" and message.get("tool_calls"):
            for call in message["tool_calls"]:
                function = call.get("function") or {}
                try:
                    arguments: Any = json.loads(function.get("arguments") or "{}")
                except json.JSONDecodeError:
                    arguments = function.get("arguments")
                turns.append(
                    {
                        "from": "function_call",
                        "value": _dump({"name": function.get("name"), "arguments": arguments}),
                    }
                )
                if str(call.get("id")) in results:
                    turns.append({"from": "observation", "value": results[str(call.get("id"))]})
        elif role == "assistant":
            turns.append({"from": "gpt", "value": str(content or "")})
    meta = record.model_dump(mode="json", exclude={"messages", "tools"})
    return {
        "conversations": turns,
        "system": system,
        "tools": _dump([t["function"] for t in record.tools]),
        **meta,
    }


def serialise(record: Rollout, fmt: RolloutFormat) -> str:
    if fmt is RolloutFormat.sharegpt:
        return _dump(sharegpt(record))
    return record.model_dump_json()


class RolloutSourceError(Exception):
    """A RUN argument that names no run, or a run whose taskset cannot be found; one line for the user."""


def resolve_source(arg: str, *, runs_dir: Path, taskset: Path | None = None) -> RolloutSource:
    """A RUN argument as a source: a run folder (`eval`, `serve`, OpenEnv), a run id under `runs_dir`, a
    trials.jsonl file, or a calibration record folder (`<taskset>/calibration/<persona>`). Its taskset is
    `taskset` if given, else the one the run recorded, else the taskset folder the path lies in; its world the
    one the run recorded, if any."""
    from .evaluate import RUN_FILE, TRIALS_FILE, load_record

    path = Path(arg)
    if not path.exists() and (runs_dir / arg).is_dir():
        path = runs_dir / arg
    trials_file = path if path.is_file() else path / TRIALS_FILE
    if not trials_file.is_file():
        raise RolloutSourceError(
            f"{arg}: not a run (no {TRIALS_FILE} there, and no run '{arg}' in {runs_dir})"
        )
    folder = trials_file.parent
    recorded: dict[str, Any] = {}
    if (folder / RUN_FILE).is_file():
        try:
            recorded = load_record(folder).options
        except ValueError as exc:
            raise RolloutSourceError(f"{folder / RUN_FILE}: unreadable run record ({exc})") from exc
    if taskset is None and recorded.get("taskset_dir"):
        taskset = Path(recorded["taskset_dir"])
    if taskset is None:
        from .task import TaskSet

        found = TaskSet.find(folder)
        taskset = found.root if found is not None else None
    if taskset is None or not (taskset / "taskset.json").is_file():
        raise RolloutSourceError(f"{arg}: the run does not say which taskset it ran; pass --taskset DIR")
    raw_llm = recorded.get("llm")
    llm: dict[str, Any] = raw_llm if isinstance(raw_llm, dict) else {}
    mode = llm.get("mode") if llm.get("mode") in ("tools", "json") else "tools"
    parse = llm.get("parse") if llm.get("parse") in ("strict", "lenient") else "lenient"
    here, root = folder.resolve(), taskset.resolve()
    label = here.relative_to(root).as_posix() if here.is_relative_to(root) else folder.name
    world = recorded.get("world")
    return RolloutSource(
        label=label,
        trials_file=trials_file,
        taskset_dir=taskset,
        world=Path(world) if isinstance(world, str) and world else None,
        harness_mode=mode,
        parse=parse,
    )
