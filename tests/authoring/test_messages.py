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
