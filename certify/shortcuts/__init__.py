"""Shortcut agents: generic agents that do not understand a request, run against a task to show it cannot be
passed without the capability its level claims to measure (the `shortcuts` certification gate)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from simulator import World

from ..agents.base import TaskView
from ..episode import CallTree, Episode, said, start_episode
from ..grader import CheckFn, GradeResult, grade
from ..lexicon import Lexicon, load_lexicon
from ..task import Task
from .battery import PROBES, SHORTCUTS, shortcut
from .generic import Generic, Plan

# A shortcut stops by itself; this bounds a task without a turn budget.
MAX_CALLS = 60


def _agent(name: str, world: World, lexicon: Callable[[], Lexicon] | None = None) -> Generic:
    agent = (SHORTCUTS.get(name) or PROBES[name])()
    if hasattr(agent, "lexicon"):
        # the jargon a world's desks use is common knowledge there: the guesser knows the world's lexicon
        agent.lexicon = lexicon() if lexicon is not None else load_lexicon(world.path)
    return agent


def run_shortcut(name: str, world: World, task: Task) -> Episode:
    """One episode of the named shortcut agent (of the battery, or a probe) on `task`; it sees what any agent
    sees and nothing more."""
    agent = _agent(name, world)
    episode = start_episode(world, task)
    play = agent.play(TaskView.of(task))
    try:
        call = next(play)
        for _ in range(MAX_CALLS):
            envelope = episode.act(*call)
            call = play.send(envelope)
    except StopIteration:
        pass
    finally:
        play.close()
    episode.stop("agent_stopped")
    return episode


def _run_along(
    name: str,
    world: World,
    task: Task,
    calls: CallTree,
    registry: dict[str, CheckFn] | None,
    lexicon: Callable[[], Lexicon] | None = None,
) -> tuple[Episode, GradeResult]:
    """`run_shortcut` and its grade, for the agents of one battery on one task. The simulator is deterministic:
    an agent that makes the calls an earlier agent made is answered as that one was, and one that makes all of
    them, and stops there, ends in the same episode with the same grade. So an agent follows the calls already
    made (`calls`) without a workspace while it can; where it first makes another call, it goes on from an
    episode forked there (`CallTree.episode_at`), adding what it is answered for the agents after it."""
    agent = _agent(name, world, lexicon)
    play = agent.play(TaskView.of(task))
    node = calls.root
    trail = [node]
    episode: Episode | None = None
    try:
        call = next(play)
        for _ in range(MAX_CALLS):
            if episode is None:
                known = node.next.get(said(call))
                if known is not None:
                    node = known
                    trail.append(node)
                    call = play.send(known.envelope)
                    continue
                episode = calls.episode_at(trail)
            node = calls.act(node, episode, call)
            call = play.send(node.envelope)
    except StopIteration:
        pass
    finally:
        play.close()
    if episode is None and node.end is not None:
        return node.end
    if episode is None:
        episode = calls.episode_at(trail)
    episode.stop("agent_stopped")
    node.end = (episode, grade(task, episode, registry))
    return node.end


@dataclass
class ShortcutRun:
    name: str
    episode: Episode
    result: GradeResult

    @property
    def passed(self) -> bool:
        return self.result.passed


class Tree:
    """The shortcut agents' runs on one task in one world, along the calls made so far there (`_run_along`,
    `calls`: a `CallTree` the gates' replays of the task may share): the battery, the probes and a gate asking
    again share it, so an agent's calls that an earlier one made are not made twice. Keep one per (world, task)
    pair: a counterfactual copy has the same ids with other content."""

    def __init__(
        self,
        world: World,
        task: Task,
        registry: dict[str, CheckFn] | None = None,
        calls: CallTree | None = None,
    ) -> None:
        self.world, self.task, self.registry = world, task, registry
        self.calls = calls or CallTree(world, task)
        self.runs: dict[str, ShortcutRun] = {}
        self._lexicon: list[Lexicon] = []

    def lexicon(self) -> Lexicon:
        """The world's lexicon, loaded once for the agents of this tree (`load_lexicon` looks at its files)."""
        if not self._lexicon:
            self._lexicon.append(load_lexicon(self.world.path))
        return self._lexicon[0]

    def run(self, name: str) -> ShortcutRun:
        """The named agent (of the battery, or a probe) once on the task, graded."""
        if name not in self.runs:
            self.runs[name] = ShortcutRun(
                name, *_run_along(name, self.world, self.task, self.calls, self.registry, self.lexicon)
            )
        return self.runs[name]


def run_battery(
    world: World, task: Task, registry: dict[str, CheckFn] | None = None, tree: Tree | None = None
) -> list[ShortcutRun]:
    """Every shortcut agent once on `task`, graded (the agents' common calls made once: `_run_along`; `tree`:
    the calls already made on this very task and world, to go on from)."""
    tree = tree or Tree(world, task, registry)
    return [tree.run(name) for name in SHORTCUTS]


__all__ = [
    "PROBES",
    "SHORTCUTS",
    "Generic",
    "Plan",
    "ShortcutRun",
    "Tree",
    "run_battery",
    "run_shortcut",
    "shortcut",
]
