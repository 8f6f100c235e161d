"""Forking an episode (`Workspace.fork`, `Episode.fork`) and the call tree built on it (`CallTree`): a run that
goes on from calls made before ends in exactly the episode a replay on a fresh episode gives — the same trace,
envelopes, state, call log and grade — so the gates that share the tree give the verdicts they gave without it
(scripts/gate_outcomes.py compares all of them on the shipped taskset; tests/certify/test_shipped.py holds every
verdict to the certificate lock)."""

from __future__ import annotations

from typing import Any

import pytest

from certify.episode import CallTree, Episode, replay, start_episode
from certify.equivalence import probe, variants
from certify.gates import Subject, collect
from certify.grader import grade
from certify.shortcuts import SHORTCUTS, Tree, run_shortcut
from certify.task import Task, load_task
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def _seen(episode: Episode) -> dict[str, Any]:
    """Everything of an episode a grade or a gate can read."""
    ws = episode.workspace
    return {
        "events": [e.to_dict() for e in episode.events],
        "final_answer": episode.final_answer,
        "ended_by": episode.ended_by,
        "state": ws.state_hash(),
        "snapshot": ws.snapshot(),
        "calls": [(c.tool, c.args, c.ok, c.code) for c in ws.calls],
        "invalid": ws.invalid_calls,
        "counters": vars(ws.counters),
        "initial": (sorted(ws.initial_dashboards), ws.initial_custom, ws.initial_current),
    }


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    # one persona's 20 tasks: every level, repairs, adds, reads, notes, apps and judged answers
    return [load_task(p, ts) for p, ts in collect([SHIPPED / "portfolio_manager"])]


def _runs(world: World, task: Task) -> list[tuple[list[tuple[str, Any]], str | None]]:
    """The call lists the gates replay on a task: the reference, each mutant dropping one step, each valid
    variant."""
    steps = [(s.tool, s.args) for s in task.eval.reference_steps()]
    answer = task.eval.reference_answer
    out = [(steps, answer), ([], None), (steps, None)]
    out += [([c for j, c in enumerate(steps) if j != i], answer) for i in range(len(steps))]
    out += [(v.steps, v.answer) for v in variants(probe(world, task, steps, answer))]
    return out


def test_a_fork_goes_on_apart_from_the_episode_it_was_forked_from(world, tasks):
    for task in tasks:
        steps = [(s.tool, s.args) for s in task.eval.reference_steps()]
        for cut in range(len(steps) + 1):
            episode = start_episode(world, task)
            for call in steps[:cut]:
                episode.act(*call)
            before = _seen(episode)
            fork = episode.fork()
            for call in steps[cut:]:
                fork.act(*call)
            assert _seen(episode) == before, f"{task.id}: acting on a fork at {cut} changed the original"
            for call in steps[cut:]:
                episode.act(*call)
            assert _seen(episode) == _seen(fork), f"{task.id}: fork at {cut} and original went apart"


def test_every_replay_along_the_tree_is_the_replay_on_a_fresh_episode(world, tasks):
    compared = 0
    for task in tasks:
        tree = CallTree(world, task)
        for steps, answer in _runs(world, task):
            along, fresh = tree.replay(steps, answer), replay(world, task, steps, answer)
            assert _seen(along) == _seen(fresh), f"{task.id}: {len(steps)} steps"
            assert grade(task, along).to_dict() == grade(task, fresh).to_dict()
            compared += 1
    assert compared > 20 * 10


def test_shortcut_agents_along_the_tree_end_where_they_end_alone(world, tasks):
    """The battery shares its tree with the gates' replays (`Subject.calls`): each agent's episode is the one it
    plays on its own."""
    for task in tasks[1::3]:
        subject = Subject(task.id, world, task)
        for steps, answer in _runs(world, task):
            subject.run(steps, answer)  # the gates' replays first, as a certification makes them
        tree = Tree(world, task, calls=subject.calls)
        for name in SHORTCUTS:
            alone = run_shortcut(name, world, task)
            run = tree.run(name)
            assert _seen(run.episode) == _seen(alone), f"{task.id}: {name}"
            assert run.result.to_dict() == grade(task, alone).to_dict()
