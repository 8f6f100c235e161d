"""Messages that say what is true (issue 23 items 6-7): each one the issue found contradicting itself or
overstating, held to what it must say now."""

from __future__ import annotations

import json
from types import SimpleNamespace

from typer.testing import CliRunner

from authoring.cli import app
from authoring.cli.review import _show_transcript, call_args
from tests.authoring.killing import new_repo, taskforge
from tests.authoring.test_cli_destination import author, desk  # noqa: F401  (a fixture)
from tests.authoring.test_run_state import LOCK, run


def test_failing_call_arguments_keep_every_value_whole():
    args = {
        "widget_name": "Positions by fund and book with the quarter-to-date returns beside them",
        "currency": "EUR",
        "params": {"fund": "Gamma"},
    }
    shown = call_args(args)
    assert '"currency": "EUR"' in shown and '"fund": "Gamma"' in shown, shown
    assert "…" in shown, "only the long text is shortened"
    assert shown.count('"') % 2 == 0, "no string is left open"


def _trial(agent: str, passed: bool, tool: str) -> SimpleNamespace:
    event = {"index": 1, "tool": tool, "args": {}, "ok": False, "envelope": {"message": "nope"}}
    return SimpleNamespace(
        task_id="s_level1",
        agent=agent,
        repeat=0,
        valid=True,
        passed=passed,
        failure_codes=["x"],
        events=[event],
    )


def test_the_attempt_shown_under_a_ladder_item_is_its_rungs(capsys):
    state = {
        "calibration_trials": [
            _trial("ladder-1", False, "by_rung_one"),
            _trial("ladder-4", False, "by_rung_four"),
        ]
    }
    _show_transcript(state, "s_level1", 1)
    out = capsys.readouterr().out
    assert "ladder-1" in out and "by_rung_one" in out
    assert "ladder-4" not in out and "by_rung_four" not in out
    _show_transcript({"calibration_trials": [_trial("ladder-4", False, "by_rung_four")]}, "s_level1", 1)
    assert "last failing attempt" not in capsys.readouterr().out, "another rung's attempt is not shown"


def test_the_announced_repeats_are_the_repeats_run(desk, tmp_path):  # noqa: F811
    new_repo(tmp_path / "dest", True)
    args = author("--no-commit")
    args[args.index("--repeats") + 1] = "3"
    done = taskforge(args, desk)
    assert done.returncode == 0, done.stderr
    flat = " ".join(done.stderr.split())
    assert "calibrating with heuristic x1 (deterministic: --repeats 3 would be copies)" in flat
    assert "calibration with heuristic x1" in flat and "x3" not in flat.replace("--repeats 3", "")


def test_recertify_says_what_changed(sources, repo, mini_world_path, tmp_path):
    assert run(sources, repo, mini_world_path, tmp_path / "cp.sqlite", commit=False).status == "certified"
    lock = repo / LOCK
    raw = json.loads(lock.read_text())
    cert = raw["tasks"]["risk_repair_level0"]
    cert["fingerprints"]["grader"] = "0" * 64
    cert["gates"]["oracle"]["detail"] = "an older grader's words"
    lock.write_text(json.dumps(raw))
    result = CliRunner().invoke(
        app,
        ["recertify", "--tasksets-dir", str(repo / "tasksets"), "--world", str(mini_world_path)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "changed" in flat and "what changed" in flat
    assert "risk_repair_level0: oracle: ok (an older grader's words) → ok (" in flat, flat


def _record(**kw):
    from certify.calibration import CalibrationRecord

    levels = [
        {
            "level": f"level{i}",
            "attempts": kw.get("attempts", 4),
            "tasks": 4,
            "passes": 4 - i,
            "pass_rate": (4 - i) / 4,
            "fail_rate": i / 4,
            "ci": [max(0.0, (4 - i) / 4 - 0.25), (4 - i) / 4],
        }
        for i in range(5)
    ]
    base = {
        "persona": "p",
        "taskset": "t",
        "agent": kw.get("agent", "ladder"),
        "repeats": kw.get("repeats", 1),
        "created_at": "2026-01-01T00:00:00+00:00",
        "trials": 20,
        "invalid": 0,
        "levels": levels,
        "holds": True,
        "verdict": "holds",
        "deterministic": kw.get("deterministic", True),
    }
    if kw.get("ladder"):
        agents = [f"ladder-{k}" for k in range(5)]
        lv = [f"level{k}" for k in range(5)]
        base["ladder"] = {
            "agents": agents,
            "levels": lv,
            "cells": [
                {"agent": a, "level": v, "tasks": 4, "passes": 4 if int(a[-1]) >= int(v[-1]) else 0}
                for a in agents
                for v in lv
            ],
            "fair": {v: v != "level2" for v in lv},
        }
    return CalibrationRecord.model_validate(base)


def test_the_ladder_is_given_by_its_fairness_verdict_not_a_staircase_of_rates():
    from authoring.render import headline

    line = headline(_record(ladder=True), open_blockers=2)
    assert "criterion VIOLATED at level2" in line and "2 blocker(s) open" in line
    assert "HOLDS" not in line and "%" not in line, "no pass rate, no interval for the ladder"


def test_a_deterministic_reference_shows_counts_and_a_sampled_agent_intervals_over_its_tasks():
    from authoring.render import headline

    counts = headline(_record(agent="heuristic"))
    assert "heuristic, deterministic" in counts and "level1: 3/4 tasks" in counts and "[" not in counts
    sampled = headline(_record(agent="openai:m", repeats=5, attempts=20, deterministic=False))
    assert "openai:m x5" in sampled and "level1: 75% [50%-75%] n=4 tasks (20 attempts)" in sampled
    assert "n=20" not in sampled, "n is what the interval counts: the unique tasks"


def test_the_plot_labels_n_as_the_tasks_its_interval_counts():
    from certify.calibration.plot import staircase_figure

    figure = staircase_figure(_record(agent="openai:m", repeats=5, attempts=20, deterministic=False))
    labels = [t.get_text() for ax in figure.axes for t in ax.texts]
    assert any(label.startswith("n=4 tasks") and "20 attempts" in label for label in labels), labels
    assert not any(label.startswith("n=20") for label in labels)


def _drawn(figure) -> tuple[list[str], list[str], int]:
    """What a figure says: its texts, its axes' titles and tick labels, and how many interval bars it draws."""
    texts = [t.get_text() for ax in figure.axes for t in ax.texts]
    titles = [ax.get_title() for ax in figure.axes]
    titles += [t.get_text() for ax in figure.axes for t in (*ax.get_yticklabels(), *ax.get_xticklabels())]
    intervals = sum(
        1 for ax in figure.axes for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"
    )
    return texts, titles, intervals


def test_the_plot_draws_the_ladder_as_its_matrix_with_fairness_verdicts_and_no_intervals():
    from certify.calibration.plot import staircase_figure

    record = _record(ladder=True)
    texts, titles, intervals = _drawn(staircase_figure(record))
    assert intervals == 0, "no interval for a deterministic ladder"
    assert not any("%" in t or t.startswith("n=") for t in texts), texts
    # every cell as passes/tasks, row by row (agents) and column by column (levels), then the criterion row
    cells = [f"{4 if a >= v else 0}/4" for a in range(5) for v in range(5)]
    verdicts = ["fair", "fair", "VIOLATED", "fair", "fair"]
    assert texts == cells + verdicts
    assert [f"ladder-{k}" for k in range(5)] + ["criterion"] == [
        t for t in titles if t.startswith(("ladder", "crit"))
    ]
    assert any("capability ladder" in t and "4/5 levels fair" in t for t in titles), titles
    assert not any("pass rate" in t for t in titles)


def test_the_plot_gives_a_sampled_agent_intervals_labelled_with_the_agent_and_a_deterministic_one_counts():
    from certify.calibration.plot import staircase_figure

    texts, titles, intervals = _drawn(
        staircase_figure(_record(agent="openai:m", repeats=5, attempts=20, deterministic=False))
    )
    assert intervals == 5 and any("pass rate of openai:m x5" in t for t in titles), titles
    assert not any("capability ladder" in t for t in titles)
    texts, titles, intervals = _drawn(staircase_figure(_record(agent="heuristic")))
    assert intervals == 0 and any("pass rate of heuristic, deterministic" in t for t in titles)
    assert texts[:2] == ["4/4 tasks", "3/4 tasks"], texts
