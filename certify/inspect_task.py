"""Tasksets as inspect_ai tasks, so any model inspect supports runs them, with inspect's log viewer:

    inspect eval certify/inspect_task.py@workspace_tasks --model openai/gpt-4.1-mini
    inspect eval certify/inspect_task.py@taskforge_taskset -T path=DIR [-T world=DIR] [-T persona=P] --model ...

Each task file is one Sample whose input is the request and the episode's rules, as our harness's first message
(the eval block and meta stay here; the level is sample metadata, which inspect never shows the model). The
setup step, which inspect runs even when `--solver` replaces ours, opens the sample's episode under our harness's rules (`open_episode`) and gives the model the
task's allowed tools and `final_answer` as inspect tools over that episode: our names, descriptions and schemas
(with `$ref`s inlined and a name-derived description on parameters that have none, both of which inspect
requires), our envelopes as results. It also sets the sample's message limit from the task's turn budget; the
episode itself enforces the exact budget, as in our harness. The scorer grades the episode with our grader: the
strict verdict is the score, the share and the failing codes are its metadata. A sample scored without its live
episode (`inspect score` on a stored log, after a grader or simulator change) is rebuilt by replaying its tool
calls through the deterministic simulator, as `regrade_trial` does for our own runs.

Nothing else in the codebase imports this module; it needs the `inspect` extra.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, grouped, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams

# absolute imports: `inspect eval certify/inspect_task.py@...` loads this file as a module of its own
from certify.agents.base import TaskView
from certify.agents.llm import LLMConfig, first_message, system_prompt
from certify.episode import FINAL_ANSWER, NUDGE, Episode
from certify.evaluate import select_tasks
from certify.grader import grade
from certify.task import Task as ForgeTask
from certify.task import TaskSet
from certify.trial import end_if_lost, end_if_out_of_turns, open_episode, record_unparseable

# Replies without a tool call in a row that are nudged, as in our harness's tools mode; one more ends the session.
MAX_IDLE_REPLIES = LLMConfig.model_fields["max_idle_replies"].default
SHIPPED = Path(__file__).resolve().parents[1] / "tasksets" / "workspace_tasks"


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every local `$ref` replaced by its definition (and `$defs` and titles dropped)."""
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                name = ref.removeprefix("#/$defs/")
                if name not in defs:
                    raise ValueError(f"unresolvable $ref {ref!r} in a tool schema")
                return resolve(
                    {**copy.deepcopy(defs[name]), **{k: v for k, v in node.items() if k != "$ref"}}
                )
            return {k: resolve(v) for k, v in node.items() if k not in ("$defs", "title")}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


def tool_params(schema: dict[str, Any]) -> ToolParams:
    """Our schema as inspect's ToolParams. Inspect refuses a parameter without a description, and some of ours
    have none (their name and type say it): those get their name, spelled out, as the description."""
    params = ToolParams.model_validate(inline_refs(schema))
    for name, param in params.properties.items():
        if not param.description:
            param.description = name.replace("_", " ")
    return params


def episode_tools(view: TaskView, episode: Episode) -> list[ToolDef]:
    """The task's tools as inspect tools acting on `episode`; each returns the envelope as JSON text."""

    def bind(name: str) -> Any:
        async def execute(**kwargs: Any) -> str:
            envelope = episode.act(name, kwargs)
            end_if_out_of_turns(episode)
            return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), default=str)

        return execute

    return [
        ToolDef(
            bind(t["name"]),
            name=t["name"],
            description=t["description"],
            parameters=tool_params(t["parameters"]),
        )
        for t in view.tools
    ]


class SampleEpisode:
    """A sample's episode, and the tool calls inspect refused before they reached it. Our harness counts such a
    call (bad arguments, unknown tool) as an invalid turn, so it is recorded into the episode too: by our loop
    as it happens, by the scorer for any other solver. (A plain class: inspect loads this file outside
    sys.modules, where dataclasses cannot resolve their annotations.)"""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.recorded: set[str] = set()
        self.driven = False  # by our loop (workspace_agent), which nudges plain replies as its prompt says

    @classmethod
    def replayed(cls, episode: Episode, messages: list[Any]) -> SampleEpisode:
        """The episode a stored conversation produced: its tool calls, in order, through `episode`."""
        calls = {c.id: c for m in messages if isinstance(m, ChatMessageAssistant) for c in m.tool_calls or ()}
        sample = cls(episode)
        for message in messages:
            if not isinstance(message, ChatMessageTool) or episode.done:
                continue
            call = calls.get(message.tool_call_id or "")
            if message.error is not None or call is None:
                sample.record_refusals([message])
            else:
                episode.act(call.function, call.arguments)
                end_if_out_of_turns(episode)
        return sample

    def record_refusals(self, messages: list[Any]) -> None:
        for message in messages:
            if isinstance(message, ChatMessageTool) and message.error is not None:
                key = message.tool_call_id or str(id(message))
                if key not in self.recorded:
                    self.recorded.add(key)
                    record_unparseable(self.episode, message.function, message.error.message)
                    end_if_out_of_turns(self.episode)


def message_limit(budget: int) -> int:
    """Messages for `budget` turns: the system and user messages, then an assistant call and its result per
    turn. A backstop only: the episode refuses calls past the budget itself."""
    return 2 + 2 * budget


def taskset_task(path: str | Path, world: str | Path | None = None, persona: str | None = None) -> Task:
    """One inspect Task over a taskset folder (optionally one persona's tasks)."""
    root = Path(path)
    loaded = TaskSet.load(root)
    tasks = {t.id: t for t in select_tasks(root, persona)}
    w = loaded.world(Path(world) if world else None)
    live: dict[str, SampleEpisode] = {}  # by TaskState.uuid: one episode per sample run (epochs included)

    def forge_task(state: TaskState) -> ForgeTask:
        return tasks[str(state.sample_id)]

    @solver
    def open_sample_episode() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            episode = open_episode(w, forge_task(state))
            live[state.uuid] = SampleEpisode(episode)
            state.tools = episode_tools(TaskView.of(forge_task(state)), episode)
            state.message_limit = message_limit(episode.budget or 0)
            return state

        return solve

    @solver
    def workspace_agent() -> Solver:
        """Our harness's loop in inspect, doing what its system prompt says: one model turn at a time until the
        episode ends (final_answer, the turn budget, the task lost to invalid calls); a reply without a tool call
        is a turn answered with the harness's nudge, not the end, and after MAX_IDLE_REPLIES such replies in a
        row one more stops the session (inspect's own loop would end on the first one)."""

        async def solve(state: TaskState, generate: Generate) -> TaskState:
            ftask = forge_task(state)
            state.messages.insert(0, ChatMessageSystem(content=system_prompt(TaskView.of(ftask))))
            sample = live[state.uuid]
            sample.driven = True
            idle = 0
            while not sample.episode.done:
                state = await generate(state, tool_calls="single")
                sample.record_refusals(state.messages)
                end_if_lost(sample.episode, ftask)
                if state.output.message.tool_calls:
                    idle = 0
                    continue
                if sample.episode.done:
                    break
                sample.episode.idle(state.output.message.text)
                idle += 1
                end_if_lost(sample.episode, ftask)
                if idle > MAX_IDLE_REPLIES:
                    sample.episode.stop("agent_stopped")
                    break
                state.messages.append(ChatMessageUser(content=NUDGE))
            return state

        return solve

    @scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), "level")])
    def episode_verdict() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            sample = live.pop(state.uuid, None)
            if sample is None:
                sample = SampleEpisode.replayed(open_episode(w, forge_task(state)), state.messages)
            episode = sample.episode
            sample.record_refusals(state.messages)
            reply = state.output.message
            # inspect's own solvers end on a plain reply and mean it as the answer; ours asked for final_answer
            if not sample.driven and not episode.done and not reply.tool_calls and reply.text.strip():
                episode.act(FINAL_ANSWER, {"text": reply.text})
            episode.stop("agent_stopped")
            result = grade(forge_task(state), episode)
            codes = result.failure_codes
            return Score(
                value=CORRECT if result.passed else INCORRECT,
                answer=episode.final_answer,
                explanation="every check holds" if result.passed else "failing: " + ", ".join(codes),
                metadata={
                    "share": round(result.share, 4),
                    "failure_codes": codes,
                    "turns": episode.turns,
                    "invalid_calls": episode.invalid_calls,
                    "ended_by": episode.ended_by,
                },
            )

        return score

    return Task(
        dataset=[
            Sample(id=t.id, input=first_message(TaskView.of(t)), metadata={"level": t.difficulty})
            for t in tasks.values()
        ],
        setup=open_sample_episode(),
        solver=workspace_agent(),
        scorer=episode_verdict(),
    )


@task
def workspace_tasks(world: str | None = None, persona: str | None = None) -> Task:
    """The shipped taskset (tasksets/workspace_tasks)."""
    return taskset_task(SHIPPED, world, persona)


@task
def taskforge_taskset(path: str, world: str | None = None, persona: str | None = None) -> Task:
    """Any taskset folder: -T path=DIR."""
    return taskset_task(path, world, persona)
