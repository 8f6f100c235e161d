"""The staircase gate on synthetic trials: monotone, ties, inversions (defect vs noise), dead rungs, probes;
honesty (too few attempts is "insufficient", deterministic repeats are not attempts, intervals count tasks);
the capability ladder's matrix and findings; the calibration service on the ladder family."""

from __future__ import annotations

import asyncio

import pytest

from certify.agents import resolve_agents
from certify.calibration import (
    TrialMemo,
    analyse,
    calibrate,
    compact,
    load_record,
    load_trials,
    probe_dead_rungs,
    rehearse,
    render_markdown,
    write_record,
)
from certify.calibration.plot import png, staircase_figure
from certify.calibration.stats import wilson
from certify.trial import Trial
from simulator import World
from tests.certify.helpers import task
from tests.certify.ladder_tasks import ladder_task, ladder_world


def trial(
    task_id: str,
    level: int,
    passed: bool,
    repeat: int = 0,
    codes: tuple[str, ...] = ("missing_widget",),
    valid: bool = True,
    agent: str = "ref",
) -> Trial:
    return Trial(
        task_id=task_id,
        level=f"level{level}",
        agent=agent,
        repeat=repeat,
        valid=valid,
        passed=passed if valid else None,
        failure_codes=[] if passed else list(codes),
        fingerprint=[] if passed else [f"{c}:x" for c in codes],
        share=1.0 if passed else 0.5,
    )


def grid(rates: dict[int, list[bool]], repeats: int = 1) -> list[Trial]:
    out = []
    for level, outcomes in rates.items():
        for r in range(repeats):
            out += [trial(f"s{i}_level{level}", level, ok, r) for i, ok in enumerate(outcomes)]
    return out


def record(trials, repeats=1, **kw):
    """The shape tests below use a handful of tasks per level: they measure a level on one attempt."""
    kw.setdefault("min_attempts", 1)
    return analyse(trials, persona="p", taskset="t", agent=kw.pop("agent", "ref"), repeats=repeats, **kw)


def test_monotone_staircase_holds():
    r = record(
        grid(
            {
                0: [True] * 4,
                1: [True, True, True, False],
                2: [True, False, False, False],
                3: [False] * 4,
                4: [False] * 4,
            }
        )
    )
    assert r.holds and not r.inversions
    assert [s.pass_rate for s in r.levels] == [1.0, 0.75, 0.25, 0.0, 0.0]
    assert r.levels[1].ci[0] < 0.75 < r.levels[1].ci[1]


def test_ties_are_allowed():
    r = record(
        grid({0: [True, False], 1: [True, False], 2: [True, False], 3: [False, False], 4: [False, False]})
    )
    assert r.holds


def test_inversion_with_a_defect_fingerprint():
    trials = grid({0: [True] * 4, 1: [True] * 4, 3: [True, True, False, False], 4: [False] * 4}, repeats=3)
    trials += [trial(f"s{i}_level2", 2, False, r, ("missing_tool_call",)) for i in range(4) for r in range(3)]
    r = record(trials, repeats=3)
    assert not r.holds
    assert [(i.lower, i.upper) for i in r.inversions] == [("level2", "level3")]
    assert sorted(d.task_id for d in r.defects) == [f"s{i}_level2" for i in range(4)]
    assert r.defects[0].fingerprint == ["missing_tool_call:x"] and r.defects[0].repeats == [0, 1, 2]
    assert r.noise == []


def test_inversion_that_is_noise():
    trials = grid({0: [True] * 2, 2: [True, True], 3: [False, False]}, repeats=1)
    trials += [
        trial("a_level1", 1, False, 0, ("missing_widget",)),
        trial("a_level1", 1, True, 1),
        trial("a_level1", 1, False, 2, ("layout_overlap",)),
        trial("b_level1", 1, False, 0),
        trial("b_level1", 1, False, 1, ("dashboard_name",)),
        trial("b_level1", 1, True, 2),
    ]
    r = record(trials, repeats=3)
    assert not r.holds and r.defects == []
    assert sorted(n.task_id for n in r.noise) == ["a_level1", "b_level1"]


def test_invalid_trials_are_excluded():
    trials = grid({0: [True, True], 1: [False, False]})
    trials += [trial("x_level0", 0, False, valid=False)] * 3
    r = record(trials)
    assert r.levels[0].attempts == 2 and r.levels[0].pass_rate == 1.0 and r.invalid == 3


def test_dead_rungs_unprobed_without_a_frontier_agent():
    r = record(grid({0: [True], 1: [False], 2: [False]}))
    assert [(p.level, p.status) for p in r.probes] == [("level1", "unprobed"), ("level2", "unprobed")]


def test_a_dead_execute_rung_is_not_a_probe_item():
    r = record(grid({0: [False], 1: [False]}))
    assert [p.level for p in r.probes] == ["level1"]


def test_dead_rung_probe_passes_and_fails(mini_world):
    good, hard = task(id="good_level1", difficulty="level1"), task(id="hard_level2", difficulty="level2")
    hard.eval.required_generated_widgets[0].data_contains = [
        "0.9999"
    ]  # not even the reference can write this
    trials = [trial("good_level1", 1, False), trial("hard_level2", 2, False), trial("x_level0", 0, True)]
    r = record(trials)
    from certify.agents import resolve_agent

    asyncio.run(probe_dead_rungs(mini_world, r, [good, hard], trials, resolve_agent("oracle")))
    assert {p.level: p.status for p in r.probes} == {"level1": "honest_floor", "level2": "flagged"}
    assert r.probes[0].agent == "oracle" and r.probes[1].failure_codes == ["missing_generated_widget"]


def test_shortcuts_are_reported_for_the_heuristic_baseline_from_level_one():
    r = record(grid({0: [True], 1: [True], 2: [True], 3: [False]}), agent="heuristic")
    assert [s.task_id for s in r.shortcuts] == ["s0_level1", "s0_level2"]


# ---------------------------------------------------------------------------------------------- verdicts
def test_verdict_holds_with_enough_attempts_per_level():
    r = analyse(
        grid({0: [True] * 4, 1: [True, True, False, False], 2: [False] * 4}),
        persona="p",
        taskset="t",
        agent="ref",
        repeats=1,
    )
    assert (r.verdict, r.holds, r.min_attempts) == ("holds", True, 3)
    assert [s.status for s in r.levels] == ["measured"] * 3


def test_verdict_inverted():
    r = analyse(
        grid({0: [True] * 3, 1: [False] * 3, 2: [True] * 3}), persona="p", taskset="t", agent="ref", repeats=1
    )
    assert (r.verdict, r.holds) == ("inverted", False)
    assert [(i.lower, i.upper) for i in r.inversions] == [("level1", "level2")]


def test_verdict_insufficient_is_never_holds():
    r = analyse(
        grid({0: [True] * 3, 1: [True, False], 2: [False] * 3}),
        persona="p",
        taskset="t",
        agent="ref",
        repeats=1,
    )
    assert (r.verdict, r.holds) == ("insufficient", False)
    assert r.insufficient == ["level1"] and r.levels[1].status == "insufficient"
    assert r.inversions == [], "an unmeasured rung takes no part in the staircase"
    assert "INSUFFICIENT" in render_markdown(r) and "fewer than 3 valid attempts" in render_markdown(r)


def test_a_calibration_whose_trials_are_all_invalid_does_not_hold():
    trials = [trial(f"s{i}_level{lv}", lv, False, valid=False) for lv in range(5) for i in range(4)]
    r = analyse(trials, persona="p", taskset="t", agent="ref", repeats=1)
    assert (r.verdict, r.holds, r.invalid) == ("insufficient", False, 20)
    assert all(s.status == "insufficient" and s.attempts == 0 for s in r.levels) and r.probes == []


def test_verdict_probed_dead_rung(mini_world):
    trials = [trial(f"s{i}_level0", 0, True) for i in range(3)] + [
        trial(f"g{i}_level1", 1, False) for i in range(3)
    ]
    r = analyse(trials, persona="p", taskset="t", agent="ref", repeats=1)
    assert [(p.level, p.status) for p in r.probes] == [("level1", "unprobed")]
    tasks = [task(id=f"g{i}_level1", difficulty="level1") for i in range(3)]
    from certify.agents import resolve_agent

    asyncio.run(probe_dead_rungs(mini_world, r, tasks, trials, resolve_agent("oracle")))
    assert [(p.level, p.status, p.passed) for p in r.probes] == [("level1", "honest_floor", True)]


# ---------------------------------------------------------------------------------------------- honesty
def test_deterministic_repeats_are_one_attempt_and_intervals_count_tasks():
    trials = grid({0: [True, True, True, False]}, repeats=3)
    r = analyse(
        [t.model_copy(update={"agent": "heuristic"}) for t in trials],
        persona="p",
        taskset="t",
        agent="heuristic",
        repeats=3,
    )
    assert r.deterministic and r.repeats == 1
    assert (r.levels[0].attempts, r.levels[0].tasks, r.levels[0].passes) == (4, 4, 3)
    assert r.levels[0].ci == [round(x, 4) for x in wilson(3, 4)]


def test_a_stochastic_agents_repeats_are_attempts_but_the_interval_counts_tasks():
    trials = grid({0: [True, True, True, False]}, repeats=3)
    r = analyse(trials, persona="p", taskset="t", agent="openai:some-model", repeats=3)
    level = r.levels[0]
    assert not r.deterministic and (level.attempts, level.tasks, level.passes) == (12, 4, 9)
    assert level.ci == [round(x, 4) for x in wilson(3, 4)]
    assert level.ci[1] - level.ci[0] > wilson(9, 12)[1] - wilson(9, 12)[0]


# ---------------------------------------------------------------------------------------------- the ladder
def ladder_grid(passes: dict[int, set[int]]) -> list[Trial]:
    """Three tasks per level; `passes[k]` is the set of rungs that pass level k."""
    return [
        trial(f"s{i}_level{lv}", lv, rung in passes[lv], agent=f"ladder-{rung}")
        for lv in passes
        for i in range(3)
        for rung in range(5)
    ]


def test_a_fair_ladder_gives_a_strictly_decreasing_pooled_staircase():
    r = analyse(
        ladder_grid({lv: set(range(lv, 5)) for lv in range(5)}),
        persona="p",
        taskset="t",
        agent="ladder",
        repeats=3,
    )
    assert r.verdict == "holds" and r.deterministic and r.repeats == 1
    assert [s.pass_rate for s in r.levels] == [1.0, 0.8, 0.6, 0.4, 0.2]
    assert r.ladder is not None and r.ladder.findings == [] and all(r.ladder.fair.values())
    assert r.ladder.cell("ladder-2", "level3").passes == 0 and r.ladder.cell("ladder-3", "level3").passes == 3
    assert r.summary()["ladder"]["matrix"]["ladder-1"] == {
        "level0": 1.0,
        "level1": 1.0,
        "level2": 0.0,
        "level3": 0.0,
        "level4": 0.0,
    }


def test_ladder_violations_are_findings_with_their_transcript():
    trials = ladder_grid({0: set(range(5)), 1: set(range(5)), 2: {3, 4}, 3: {3, 4}, 4: {4}})
    for t in trials:
        t.events = [{"index": 1, "tool": "get_workspace_snapshot", "args": {}, "ok": True, "envelope": {}}]
    r = analyse(trials, persona="p", taskset="t", agent="ladder", repeats=1)
    kinds = {(f.level, f.kind, f.agent) for f in r.ladder.findings}
    assert kinds == {("level1", "solved_below", "ladder-0"), ("level2", "unsolved_at", "ladder-2")}
    assert len(r.ladder.findings) == 6
    assert r.ladder.fair == {"level0": True, "level1": False, "level2": False, "level3": True, "level4": True}
    assert all(f.events[0]["tool"] == "get_workspace_snapshot" for f in r.ladder.findings)
    md = render_markdown(r)
    assert "## Capability ladder" in md and "| ladder-0 | 3/3 (100%) | 3/3 (100%) | 0/3 (0%)" in md
    assert "| criterion | fair | VIOLATED | VIOLATED | fair | fair |" in md


def test_the_calibration_service_runs_the_ladder_family_once_per_task(tmp_path):
    world = World.load(ladder_world(tmp_path / "world"))
    tasks = [ladder_task(lv) for lv in range(5)]
    r, trials = asyncio.run(
        calibrate(world, tasks, "ladder", persona="p", taskset="t", repeats=3, min_attempts=1)
    )
    assert len(trials) == 25 and {t.repeat for t in trials} == {0}
    assert r.verdict == "holds" and r.ladder is not None and r.ladder.findings == []
    assert [s.pass_rate for s in r.levels] == [1.0, 0.8, 0.6, 0.4, 0.2]
    with pytest.raises(ValueError, match="unknown agent"):
        asyncio.run(calibrate(world, tasks, "wizard", persona="p", taskset="t"))


def test_records_round_trip_with_compact_transcripts(tmp_path, mini_world):
    from certify.agents import resolve_agent
    from certify.trial import run_trial

    real = asyncio.run(run_trial(mini_world, task(), resolve_agent("oracle")))
    r = record([real, trial("s_level1", 1, False)])
    paths = write_record(tmp_path, r, [real])
    assert [p.name for p in paths] == ["calibration.json", "calibration.md", "trials.jsonl", "staircase.png"]
    assert load_record(tmp_path) == r
    stored = load_trials(tmp_path)
    assert stored[0].transcript == [] and "data" not in stored[0].events[0]["envelope"]
    assert compact(real).events[1]["tool"] == real.events[1]["tool"]
    assert "| level0 | Execute |" in (tmp_path / "calibration.md").read_text()
    assert (tmp_path / "staircase.png").read_bytes()[:4] == b"\x89PNG"


def test_rehearsed_trials_are_not_run_again_and_calibrate_to_the_same_record(tmp_path, monkeypatch):
    """A deterministic reference's trials, rehearsed level by level, are what calibration uses: nothing runs
    twice, and the record is the one a cold calibration gives."""
    import certify.calibration.run as cal

    world = World.load(ladder_world(tmp_path / "world"))
    tasks = [ladder_task(lv) for lv in range(5)]
    cold, cold_trials = asyncio.run(
        calibrate(world, tasks, "ladder", persona="p", taskset="t", repeats=3, min_attempts=1)
    )
    memo, agents = TrialMemo(), resolve_agents("ladder")
    assert sum(asyncio.run(rehearse(world, t, agents, memo)) for t in tasks) == 25
    assert asyncio.run(rehearse(world, tasks[0], agents, memo)) == 0, "a rehearsed task is not run again"

    runs = []
    real = cal.run_trial

    async def counted(*args, **kwargs):
        runs.append(args[1].id)
        return await real(*args, **kwargs)

    monkeypatch.setattr(cal, "run_trial", counted)
    warm, warm_trials = asyncio.run(
        calibrate(
            world,
            tasks,
            "ladder",
            persona="p",
            taskset="t",
            repeats=3,
            min_attempts=1,
            memo=memo,
            built=agents,
        )
    )
    assert runs == []
    assert warm.model_dump(exclude={"created_at"}) == cold.model_dump(exclude={"created_at"})
    assert [(t.task_id, t.agent, t.passed) for t in warm_trials] == [
        (t.task_id, t.agent, t.passed) for t in cold_trials
    ]
    changed = tasks[1].model_copy(update={"prompt": tasks[1].prompt + " Thanks."})
    asyncio.run(
        calibrate(
            world, [changed], "ladder", persona="p", taskset="t", min_attempts=1, memo=memo, built=agents
        )
    )
    assert runs == [changed.id] * 5, "a changed task is a new question"


def test_a_reference_that_is_not_deterministic_is_never_rehearsed(tmp_path):
    class Moody:
        name = "moody"
        deterministic = False

    world = World.load(ladder_world(tmp_path / "world"))
    memo = TrialMemo()
    assert asyncio.run(rehearse(world, ladder_task(0), [Moody()], memo)) == 0  # type: ignore[list-item]
    assert memo.get(TrialMemo.key(world, ladder_task(0), Moody(), 0)) is None  # type: ignore[arg-type]


def test_the_staircase_is_drawn_once_per_record_whatever_its_time_stamp(monkeypatch):
    import certify.calibration.plot as plot_module

    drawn = []
    real = plot_module._draw
    monkeypatch.setattr(plot_module, "_PNGS", type(plot_module._PNGS)())
    monkeypatch.setattr(plot_module, "_draw", lambda r, out: (drawn.append(r.verdict), real(r, out)))
    base = record(grid({0: [True, True], 1: [True, False], 2: [False, True]}))
    first = png(base)
    again = png(base.model_copy(update={"created_at": "2031-01-01T00:00:00+00:00"}))
    other = png(record(grid({0: [True, True], 1: [True, True], 2: [False, False]})))
    assert first[:4] == b"\x89PNG" and again == first and other != first
    assert drawn == [base.verdict, "holds"]


def test_the_plot_shows_intervals_n_and_dead_rungs():
    import matplotlib.pyplot as plt

    r = record(
        grid(
            {0: [True, True, False, True], 1: [True, False, False, False], 2: [False, False, False, False]},
            repeats=2,
        ),
        repeats=2,
    )
    fig = staircase_figure(r)
    try:
        (ax,) = fig.axes
        labels = [t.get_text() for t in ax.texts]
        # n is what the interval counts (the unique tasks); the attempts behind the rate are said apart
        assert labels[:2] == ["n=4 tasks\n8 attempts"] * 2
        assert labels[2] == "n=4 tasks\n8 attempts\ndead (unprobed)"
        bars = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
        assert len(bars) == 3
        segments = bars[0].lines[2][0].get_segments()
        (_, lo), (_, hi) = segments[0]
        assert (round(lo, 4), round(hi, 4)) == tuple(r.levels[0].ci)
        assert "dead" not in labels[0] and "holds" in ax.get_title()
    finally:
        plt.close(fig)


def test_records_written_before_verdicts_load_with_the_verdict_they_meant():
    old = record(grid({0: [True], 1: [False]})).model_dump()
    for key in ("verdict", "deterministic", "min_attempts", "ladder"):
        old.pop(key)
    for level in old["levels"]:
        level.pop("tasks"), level.pop("status")
    from certify.calibration import CalibrationRecord

    assert CalibrationRecord.model_validate({**old, "holds": False}).verdict == "inverted"
    assert CalibrationRecord.model_validate({**old, "holds": True}).verdict == "holds"
