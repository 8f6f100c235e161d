"""The staircase gate on synthetic trials: monotone, ties, inversions (defect vs noise), dead rungs, probes."""

from __future__ import annotations

import asyncio

from certify.calibrate import (
    analyse,
    compact,
    load_record,
    load_trials,
    probe_dead_rungs,
    staircase_figure,
    write_record,
)
from certify.trial import Trial
from tests.certify.helpers import task


def trial(task_id: str, level: int, passed: bool, repeat: int = 0, codes: tuple[str, ...] = ("missing_widget",),
          valid: bool = True) -> Trial:
    return Trial(task_id=task_id, level=f"level{level}", agent="ref", repeat=repeat, valid=valid,
                 passed=passed if valid else None, failure_codes=[] if passed else list(codes),
                 fingerprint=[] if passed else [f"{c}:x" for c in codes], share=1.0 if passed else 0.5)


def grid(rates: dict[int, list[bool]], repeats: int = 1) -> list[Trial]:
    out = []
    for level, outcomes in rates.items():
        for r in range(repeats):
            out += [trial(f"s{i}_level{level}", level, ok, r) for i, ok in enumerate(outcomes)]
    return out


def record(trials, repeats=1, **kw):
    return analyse(trials, persona="p", taskset="t", agent=kw.pop("agent", "ref"), repeats=repeats, **kw)


def test_monotone_staircase_holds():
    r = record(grid({0: [True] * 4, 1: [True, True, True, False], 2: [True, False, False, False],
                     3: [False] * 4, 4: [False] * 4}))
    assert r.holds and not r.inversions
    assert [s.pass_rate for s in r.levels] == [1.0, 0.75, 0.25, 0.0, 0.0]
    assert r.levels[1].ci[0] < 0.75 < r.levels[1].ci[1]


def test_ties_are_allowed():
    r = record(grid({0: [True, False], 1: [True, False], 2: [True, False], 3: [False, False], 4: [False, False]}))
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
    trials += [trial("a_level1", 1, False, 0, ("missing_widget",)), trial("a_level1", 1, True, 1),
               trial("a_level1", 1, False, 2, ("layout_overlap",)), trial("b_level1", 1, False, 0),
               trial("b_level1", 1, False, 1, ("dashboard_name",)), trial("b_level1", 1, True, 2)]
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


def test_dead_rung_probe_passes_and_fails(mini_world):
    good, hard = task(id="good_level1", difficulty="level1"), task(id="hard_level2", difficulty="level2")
    hard.eval.required_generated_widgets[0].data_contains = ["0.9999"]  # not even the reference can write this
    trials = [trial("good_level1", 1, False), trial("hard_level2", 2, False), trial("x_level0", 0, True)]
    r = record(trials)
    from certify.agents import make_agent

    asyncio.run(probe_dead_rungs(mini_world, r, [good, hard], trials, make_agent("oracle")))
    assert {p.level: p.status for p in r.probes} == {"level1": "honest_floor", "level2": "flagged"}
    assert r.probes[0].agent == "oracle" and r.probes[1].failure_codes == ["missing_generated_widget"]


def test_shortcuts_are_reported_for_the_heuristic_baseline():
    r = record(grid({0: [True], 1: [False], 2: [True], 3: [False]}), agent="heuristic")
    assert [s.task_id for s in r.shortcuts] == ["s0_level2"]


def test_records_round_trip_with_compact_transcripts(tmp_path, mini_world):
    from certify.agents import make_agent
    from certify.trial import run_trial

    real = asyncio.run(run_trial(mini_world, task(), make_agent("oracle")))
    r = record([real, trial("s_level1", 1, False)])
    paths = write_record(tmp_path, r, [real])
    assert [p.name for p in paths] == ["calibration.json", "calibration.md", "trials.jsonl", "staircase.png"]
    assert load_record(tmp_path) == r
    stored = load_trials(tmp_path)
    assert stored[0].transcript == [] and "data" not in stored[0].events[0]["envelope"]
    assert compact(real).events[1]["tool"] == real.events[1]["tool"]
    assert "| level0 | Execute |" in (tmp_path / "calibration.md").read_text()
    assert (tmp_path / "staircase.png").read_bytes()[:4] == b"\x89PNG"


def test_the_plot_shows_intervals_n_and_dead_rungs():
    import matplotlib.pyplot as plt

    r = record(grid({0: [True, True, False, True], 1: [True, False, False, False], 2: [False, False, False, False]},
                    repeats=2), repeats=2)
    fig = staircase_figure(r)
    try:
        (ax,) = fig.axes
        labels = [t.get_text() for t in ax.texts]
        assert labels[:2] == ["n=8", "n=8"] and labels[2] == "n=8\ndead (unprobed)"
        bars = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
        assert len(bars) == 3
        segments = bars[0].lines[2][0].get_segments()
        (_, lo), (_, hi) = segments[0]
        assert (round(lo, 4), round(hi, 4)) == tuple(r.levels[0].ci)
        assert "dead" not in labels[0] and "holds" in ax.get_title()
    finally:
        plt.close(fig)
