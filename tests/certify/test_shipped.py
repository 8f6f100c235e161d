"""The shipped taskset certifies with every gate: 6 personas x 4 stories x 5 levels, valid variants passing and
shortcut agents failing, and its certificate lock agrees with what the gates say now, verdict by verdict."""

from __future__ import annotations

from certify.gates import GATE_NAMES, certify_file, collect
from certify.lock import CertificateLock
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def test_the_shipped_taskset_passes_every_gate():
    world = World.load(DEFAULT_WORLD)
    results = [certify_file(world, path, taskset) for path, taskset in collect([SHIPPED])]
    assert len(results) == 120
    assert {r.id: [g for g in GATE_NAMES if not r.gates[g].ok] for r in results if not r.certified} == {}
    assert all(list(r.gates) == list(GATE_NAMES) for r in results)
    lock = CertificateLock.load(SHIPPED)
    assert lock is not None and set(lock.tasks) == {r.id for r in results}
    assert all(set(c.gates) == set(GATE_NAMES) and c.certified for c in lock.tasks.values())
    # every verdict and its reason as on record: a change meant to be only faster (a call tree, a fork, a
    # memo) moves none of the 1,440; one that means to move some re-certifies (`recertify --commit`)
    moved = [
        f"{r.id} {name}: on record {lock.tasks[r.id].gates[name]} -> now {gate.to_dict()}"
        for r in results
        for name, gate in r.gates.items()
        if gate.to_dict() != {k: lock.tasks[r.id].gates[name][k] for k in ("ok", "detail")}
    ]
    assert moved == []


def test_no_fixed_position_predicts_the_target():
    """Seeded boards are drawn per task: on every level but Find, the target of a repair is the first placed widget
    on some tasks and not on others (seeded in a fixed order it was first on every one); at Find, which hides the
    target, it never takes the salient first place."""
    from certify.shortcuts.positions import first_placed_share
    from certify.task import TaskSet, load_task

    taskset = TaskSet.load(SHIPPED)
    shares = first_placed_share(load_task(p, taskset) for p in taskset.task_files())
    assert set(shares) == {"level0", "level1", "level2", "level3", "level4"}
    assert shares.pop("level1")[0] == 0
    assert all(0 < hits < n for hits, n in shares.values()), shares


def test_no_line_of_a_planted_pointer_predicts_the_target():
    """A Find pointer lists the target among up to five entries in an order drawn per story: neither its first
    nor its last line holds the entry asked for on more than a tenth of a level's tasks (with two entries sorted
    by label the first held it on 6 of 10 pointer tasks, and a reader of the first line passed 3/24 at Find)."""
    from certify.shortcuts.positions import pointer_line_share
    from certify.task import TaskSet, load_task

    taskset = TaskSet.load(SHIPPED)
    tasks = [load_task(p, taskset) for p in taskset.task_files()]
    per_level: dict[str, int] = {}
    for t in tasks:
        per_level[t.difficulty] = per_level.get(t.difficulty, 0) + 1
    for line in (0, -1):
        shares = pointer_line_share(tasks, line)
        assert shares.get("level1", (0, 0))[1] >= 5, (
            shares
        )  # not vacuous: the shipped Find levels plant pointers
        for level, (hits, _) in shares.items():
            assert hits <= 0.10 * per_level[level], (line, shares)
