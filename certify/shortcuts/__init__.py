"""Shortcut agents: generic agents that do not understand a request, run against a task to show it cannot be
passed without the capability its level claims to measure (the `shortcuts` certification gate)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from simulator import World

from ..agents.base import TaskView
from ..episode import Episode, start_episode
from ..grader import CheckFn, GradeResult, grade
from ..lexicon import load_lexicon
from ..task import Task
from .battery import PROBES, SHORTCUTS, shortcut
from .generic import Generic, Plan

# A shortcut stops by itself; this bounds a task without a turn budget.
MAX_CALLS = 60


def _agent(name: str, world: World) -> Generic:
    agent = (SHORTCUTS.get(name) or PROBES[name])()
    if hasattr(agent, "lexicon"):
        # the jargon a world's desks use is common knowledge there: the guesser knows the world's lexicon
        agent.lexicon = load_lexicon(world.path)
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


@dataclass
class _Node:
    """A point of the calls made so far on one task: what each next call was answered and where it leads, and,
    when an agent stopped here, its episode and grade."""

    next: dict[tuple[str, str], tuple[dict[str, Any], _Node]] = field(default_factory=dict)
    end: tuple[Episode, GradeResult] | None = None


def _said(call: tuple[str, Any]) -> tuple[str, str]:
    # a call by its tool and its arguments as written (key order and 1 vs 1.0 kept apart: a grade may see them)
    return call[0], json.dumps(call[1], default=repr)


def _run_along(
    name: str, world: World, task: Task, root: _Node, registry: dict[str, CheckFn] | None
) -> tuple[Episode, GradeResult]:
    """`run_shortcut` and its grade, for the agents of one battery on one task. The simulator is deterministic:
    an agent that makes the calls an earlier agent made is answered as that one was, and one that makes all of
    them, and stops there, ends in the same episode with the same grade. So an agent follows the calls already
    made (`root`) without a workspace while it can; where it first makes another call, the calls so far are made
    on a fresh episode and it goes on there, adding what it is answered for the agents after it."""
    agent = _agent(name, world)
    play = agent.play(TaskView.of(task))
    node, made = root, []
    episode: Episode | None = None
    try:
        call = next(play)
        for _ in range(MAX_CALLS):
            key = _said(call)
            if episode is None:
                known = node.next.get(key)
                if known is not None:
                    made.append(call)
                    envelope, node = known
                    call = play.send(envelope)
                    continue
                episode = start_episode(world, task)
                for tool, args in made:
                    episode.act(tool, args)
            envelope = episode.act(*call)
            node.next[key] = (envelope, child := _Node())
            node = child
            call = play.send(envelope)
    except StopIteration:
        pass
    finally:
        play.close()
    if episode is None and node.end is not None:
        return node.end
    if episode is None:
        episode = start_episode(world, task)
        for tool, args in made:
            episode.act(tool, args)
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
    """The calls made so far by the shortcut agents on one task in one world (`_run_along`): the battery, the
    probes and a gate asking again share it, so an agent's calls that an earlier one made are not made twice.
    Keep one per (world, task) pair: a counterfactual copy has the same ids with other content."""

    def __init__(self, world: World, task: Task, registry: dict[str, CheckFn] | None = None) -> None:
        self.world, self.task, self.registry = world, task, registry
        self.root = _Node()
        self.runs: dict[str, ShortcutRun] = {}

    def run(self, name: str) -> ShortcutRun:
        """The named agent (of the battery, or a probe) once on the task, graded."""
        if name not in self.runs:
            self.runs[name] = ShortcutRun(
                name, *_run_along(name, self.world, self.task, self.root, self.registry)
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
