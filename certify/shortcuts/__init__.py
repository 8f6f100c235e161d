"""Shortcut agents: generic agents that do not understand a request, run against a task to show it cannot be
passed without the capability its level claims to measure (the `shortcuts` certification gate)."""

from __future__ import annotations

from dataclasses import dataclass

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


def run_shortcut(name: str, world: World, task: Task) -> Episode:
    """One episode of the named shortcut agent (of the battery, or a probe) on `task`; it sees what any agent
    sees and nothing more."""
    agent = (SHORTCUTS.get(name) or PROBES[name])()
    if hasattr(agent, "lexicon"):
        # the jargon a world's desks use is common knowledge there: the guesser knows the world's lexicon
        agent.lexicon = load_lexicon(world.path)
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
class ShortcutRun:
    name: str
    episode: Episode
    result: GradeResult

    @property
    def passed(self) -> bool:
        return self.result.passed


def run_battery(world: World, task: Task, registry: dict[str, CheckFn] | None = None) -> list[ShortcutRun]:
    """Every shortcut agent once on `task`, graded."""
    runs = []
    for name in SHORTCUTS:
        episode = run_shortcut(name, world, task)
        runs.append(ShortcutRun(name, episode, grade(task, episode, registry)))
    return runs


__all__ = ["PROBES", "SHORTCUTS", "Generic", "Plan", "ShortcutRun", "run_battery", "run_shortcut", "shortcut"]
