"""One episode: a task's workspace, the calls made in it, and the rules of the harness around them.

The turn budget, the end of an episode on a final answer, a reply that calls no tool, and the shape of the
recorded trace are enforced here, in one place, for every kind of actor (oracle replay, gates' mutants,
heuristic and LLM agents); and the rules are stated here, as the agent under test is told them.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from simulator import Setup, Workspace, World

from .task import Task

FINAL_ANSWER = "final_answer"
# A reply that calls no tool: recorded as a turn (never an invalid call) and answered with NUDGE.
NO_ACTION = "__no_action__"
NUDGE = (
    "Your reply called no tool, so nothing was done. Continue with a tool call, or call final_answer with your "
    "answer if the work is done."
)
# A task without a turn budget still gets one: an agent that never stops must not hold a trial forever.
DEFAULT_MAX_TURNS = 100


@dataclass(slots=True)
class TraceEvent:
    """One recorded call. `ok` false means it counts as invalid."""

    index: int
    tool: str
    args: Any
    ok: bool
    envelope: dict[str, Any]

    @property
    def code(self) -> str | None:
        error = self.envelope.get("error")
        return error.get("code") if isinstance(error, dict) else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "tool": self.tool,
            "args": self.args,
            "ok": self.ok,
            "envelope": self.envelope,
        }


@dataclass
class Episode:
    task_id: str
    workspace: Workspace
    budget: int | None
    events: list[TraceEvent] = field(default_factory=list)
    final_answer: str | None = None
    ended_by: str | None = None

    @property
    def done(self) -> bool:
        return self.ended_by is not None

    @property
    def invalid_calls(self) -> int:
        return sum(1 for e in self.events if not e.ok)

    @property
    def turns(self) -> int:
        return len(self.events)

    def act(self, tool: str, args: Any = None) -> dict[str, Any]:
        """Run one action and return the envelope the actor sees.

        Calls after the episode ended or past the turn budget are refused and not recorded; the budget
        refusal ends the episode.
        """
        if self.done:
            return _harness_refusal(
                tool, "episode_completed", "The episode is complete; the call was not executed."
            )
        if self.budget is not None and self.budget > 0 and len(self.events) >= self.budget:
            self.ended_by = "max_turns"
            return _harness_refusal(
                tool,
                "turn_budget_exhausted",
                "The episode's turn budget is exhausted; the call was not executed.",
            )
        index = len(self.events) + 1
        if tool == FINAL_ANSWER:
            text = args.get("text") if isinstance(args, dict) else None
            if not isinstance(text, str) or not text.strip():
                envelope = _harness_refusal(
                    tool, "invalid_arguments", "final_answer requires non-empty text.", retryable=True
                )
                self.events.append(TraceEvent(index, tool, args, False, envelope))
                return envelope
            envelope = {
                "ok": True,
                "command": tool,
                "request_id": None,
                "message": "Final answer recorded; the episode is complete.",
                "data": None,
                "error": None,
            }
            self.events.append(TraceEvent(index, tool, args, True, envelope))
            self.final_answer = text
            self.ended_by = "final_answer"
            return envelope
        envelope = self.workspace.answer(tool, args)
        self.events.append(TraceEvent(index, tool, args, envelope["ok"], envelope))
        return envelope

    def idle(self, text: str | None) -> dict[str, Any]:
        """A reply that called no tool: a turn (the budget counts it), not a call; the envelope carries the
        nudge to continue or finish."""
        if self.done:
            return _harness_refusal(NO_ACTION, "episode_completed", "The episode is complete.")
        if self.budget is not None and self.budget > 0 and len(self.events) >= self.budget:
            self.ended_by = "max_turns"
            return _harness_refusal(
                NO_ACTION, "turn_budget_exhausted", "The episode's turn budget is exhausted."
            )
        envelope = {
            "ok": True,
            "command": NO_ACTION,
            "request_id": None,
            "message": NUDGE,
            "data": None,
            "error": None,
        }
        self.events.append(TraceEvent(len(self.events) + 1, NO_ACTION, {"text": text or ""}, True, envelope))
        return envelope

    def fork(self) -> Episode:
        """This episode as it is now, twice (`Workspace.fork`): the copy goes on as a replay of the same calls
        on a fresh episode would. The recorded events are shared, never changed once recorded."""
        return Episode(
            self.task_id,
            self.workspace.fork(),
            self.budget,
            list(self.events),
            self.final_answer,
            self.ended_by,
        )

    def stop(self, reason: str = "agent_stopped") -> None:
        if not self.done:
            self.ended_by = reason


def _harness_refusal(tool: str, code: str, message: str, retryable: bool = False) -> dict[str, Any]:
    return {
        "ok": False,
        "command": tool,
        "request_id": None,
        "message": message,
        "data": None,
        "error": {"code": code, "message": message, "retryable": retryable},
    }


def episode_rules(task: Task) -> list[str]:
    """The episode's rules as the agent under test is told them: its turn and invalid-call budgets and the
    standing checks (list before use, schema before create, other dashboards untouched). Never the eval block's
    expectations, and never a hidden value."""
    ev = task.eval
    budget = ev.turn_budget or DEFAULT_MAX_TURNS
    invalid = ev.trace_checks.max_invalid_tool_calls
    rules = [
        f"You have at most {budget} turns: every tool call is one, and so is a reply that calls no tool. The "
        "episode ends when they run out.",
        "Every call must succeed: one failed call (an unknown tool, arguments that do not fit its schema, an "
        "error result) fails the task."
        if invalid == 0
        else f"At most {invalid} of your calls may fail (an unknown tool, arguments that do not fit its schema, an "
        "error result); one more fails the task.",
    ]
    if ev.trace_checks.forbid_invented_widget_ids:
        rules.append(
            "Use only widget ids you have seen listed (list_available_widgets, a widget schema or the "
            "workspace snapshot); never guess an id."
        )
    if ev.trace_checks.must_call_schema_before_create:
        rules.append("Read a widget's schema (get_widget_schema) before you create it.")
    if ev.workspace_checks.preserve_other_dashboards:
        rules.append(
            "Leave every other dashboard that exists when you start exactly as it is; change only the "
            "one the request is about."
        )
    # What every request of a capped or lived-in task would otherwise repeat: said once here, as a standing
    # rule, so the requests stay as short as the source benchmark's and the agent is still told.
    cap = ev.max_unrequested_widgets
    if cap is not None:
        rules.append(
            "Add no widget to the dashboard that the request does not ask for."
            if cap == 0
            else f"Add at most {cap} widget{'s' if cap != 1 else ''} to the dashboard that the request does not "
            "ask for."
        )
    if ev.required_layouts:
        rules.append(
            "Widgets and notes already on the dashboard keep their place, size and settings unless the request "
            "asks you to change them."
        )
    rules.append("When the work is done, call final_answer with your answer; that ends the episode.")
    return rules


# A task's setup as the simulator keys its started workspaces, by the setup object: tasks are never edited in
# place (a changed task is a new model), and a certification starts hundreds of episodes of each.
_SETUPS: dict[int, tuple[weakref.ref[Setup], str]] = {}
_SETUPS_SIZE = 4096


def start_episode(world: World, task: Task) -> Episode:
    setup = task.setup
    held = _SETUPS.get(id(setup))
    if held is None or held[0]() is not setup:
        if len(_SETUPS) >= _SETUPS_SIZE:
            _SETUPS.clear()
        held = _SETUPS[id(setup)] = (weakref.ref(setup), setup.model_dump_json())
    return Episode(task.id, Workspace.start(world, setup, content=held[1]), task.eval.turn_budget)


def replay(
    world: World, task: Task, steps: list[tuple[str, Any]], final_answer: str | None = None
) -> Episode:
    """Run a fixed list of calls (a reference, a mutant of it, or nothing at all)."""
    episode = start_episode(world, task)
    for tool, args in steps:
        if episode.done:
            break
        episode.act(tool, args)
    if final_answer is not None and not episode.done:
        episode.act(FINAL_ANSWER, {"text": final_answer})
    episode.stop("replay_end")
    return episode


def said(call: tuple[str, Any]) -> tuple[str, str]:
    """A call by its tool and its arguments as written (key order and 1 vs 1.0 kept apart: a grade may see
    them). The arguments' `repr`: it tells apart all that their JSON did (and more: a tuple from a list, an int
    key from a str one, an object from the text of its repr), in half the time; every call an agent makes along
    a call tree is looked up by it."""
    return call[0], repr(call[1])


@dataclass(eq=False, slots=True)
class CallNode:
    """A point of the calls made so far on one task in one world (`CallTree`): the call that led here and what
    it was answered, where each next call leads, whether the episode was over here, and, at a point more than
    one run went on from, the episode as it is here (kept to fork, never acted on). A node knows no parent (a
    walker keeps its trail): a tree without cycles is freed as soon as its task is done with, never left to the
    cyclic collector."""

    call: tuple[str, Any] | None = None
    envelope: dict[str, Any] = field(default_factory=dict)  # the root, reached by no call, holds none
    done: bool = False
    next: dict[tuple[str, str], CallNode] = field(default_factory=dict)
    at: Episode | None = None
    end: Any = None  # what a caller keeps of a run that stopped here (the shortcut agents: episode and grade)


class CallTree:
    """The calls made so far on one task in one world, by every actor that shares them: the reference and the
    gates' variants of it (`replay`), the shortcut agents (certify/shortcuts). The simulator is deterministic,
    so a run that makes the calls an earlier one made is answered as that one was and reaches the same state:
    a call made before is never made again. A run that leaves the calls made so far goes on from an episode
    forked where it leaves them (`Episode.fork`); such a point keeps its episode for the next run leaving
    there, and reaching it the first time replays the calls from the nearest point on the way that kept one.
    Keep one tree per (world, task) pair: a counterfactual copy has the same ids with other content."""

    def __init__(self, world: World, task: Task) -> None:
        self.world, self.task = world, task
        self.root = CallNode()
        # the text of each call's arguments by the object (held beside it, so its id stays its own): the
        # reference's steps are the same objects in every variant of it that keeps them
        self._said: dict[int, tuple[Any, tuple[str, str]]] = {}

    def key(self, call: tuple[str, Any]) -> tuple[str, str]:
        held = self._said.get(id(call[1]))
        if held is not None and held[0] is call[1] and held[1][0] == call[0]:
            return held[1]
        text = said(call)
        self._said[id(call[1])] = (call[1], text)
        return text

    def episode_at(self, trail: list[CallNode]) -> Episode:
        """A new episode, to act on, in the state the last node of `trail` stands for (`trail`: the nodes from
        the root to it, as a walker went down)."""
        last = len(trail) - 1
        base = last
        while base > 0 and trail[base].at is None:
            base -= 1
        if trail[base].at is None:
            trail[base].at = start_episode(self.world, self.task)
        episode = trail[base].at.fork()  # type: ignore[union-attr]
        for node in trail[base + 1 :]:
            assert node.call is not None
            episode.act(*node.call)
        if base < last:
            trail[last].at = episode.fork()  # a second run goes on from here: the next one forks
        return episode

    def act(self, node: CallNode, episode: Episode, call: tuple[str, Any]) -> CallNode:
        """Make `call` on `episode` (in the state of `node`) and record where it leads."""
        envelope = episode.act(*call)
        child = CallNode(call, envelope, episode.done)
        node.next[self.key(call)] = child
        return child

    def replay(self, steps: list[tuple[str, Any]], final_answer: str | None = None) -> Episode:
        """`replay(world, task, steps, final_answer)`: the same episode, made of the calls made before as far as
        `steps` follow them."""
        trail, episode = [self.root], None
        node = self.root
        for call in steps:
            if episode is None:
                if node.done:
                    break
                known = node.next.get(self.key(call))
                if known is not None:
                    node = known
                    trail.append(node)
                    continue
                episode = self.episode_at(trail)
            if episode.done:
                break
            node = self.act(node, episode, call)
        if episode is None:
            episode = self.episode_at(trail)
        if final_answer is not None and not episode.done:
            episode.act(FINAL_ANSWER, {"text": final_answer})
        episode.stop("replay_end")
        return episode


class ByObject:
    """Values worked out from objects never changed once made (a recorded event, a call's arguments), remembered
    by the object: the runs along one task's calls (`CallTree`) share them, and each would be worked out again
    in every grade there. Each object is held beside its value (so its id stays its own); at most `size` are
    held (an event holds its result: keep it small for those)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._held: dict[int, tuple[Any, Any]] = {}

    def get(self, obj: Any, make: Any) -> Any:
        """`make(obj)`, remembered."""
        held = self._held.get(id(obj))
        if held is not None and held[0] is obj:
            return held[1]
        value = make(obj)
        if len(self._held) >= self.size:
            self._held.clear()
        self._held[id(obj)] = (obj, value)
        return value


def reference_calls(task: Task) -> list[tuple[str, Any]]:
    return [(s.tool, s.args) for s in task.eval.reference_steps()]
