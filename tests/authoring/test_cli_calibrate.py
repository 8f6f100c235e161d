"""`taskforge calibrate`: the ladder family's 5×5 matrix and pooled staircase, the insufficient verdict's exit code,
and deterministic agents run once whatever --repeats says."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from authoring.cli import app
from tests.certify.ladder_tasks import ladder_raw, ladder_world

runner = CliRunner()


def ladder_taskset(root):
    ts = root / "ts"
    (ts / "desk").mkdir(parents=True)
    (ts / "taskset.json").write_text(json.dumps({"taskset_id": "t", "task_defaults": {}}))
    for level in range(5):
        raw = ladder_raw(level)
        (ts / "desk" / f"{raw['id']}.json").write_text(json.dumps(raw))
    return ts, ladder_world(root / "world")


def calibrate(ts, world, tmp_path, *extra):
    return runner.invoke(
        app,
        [
            "calibrate",
            "--taskset",
            str(ts),
            "--world",
            str(world),
            "--out",
            str(tmp_path / "out"),
            "--runs-dir",
            str(tmp_path / "runs"),
            *extra,
        ],
    )


def test_ladder_prints_the_matrix_and_its_fairness_verdicts_not_pooled_rates(tmp_path):
    ts, world = ladder_taskset(tmp_path)
    result = calibrate(ts, world, tmp_path, "--persona", "desk", "--agent", "ladder", "--min-attempts", "1")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "capability ladder ladder-0…ladder-4 (agent × level below): fair at every level" in " ".join(
        out.split()
    )
    rows = [line for line in out.splitlines() if line.startswith("| ladder-")]
    assert len(rows) == 5
    assert rows[0] == "| ladder-0 | 1/1 (100%) | 0/1 (0%) | 0/1 (0%) | 0/1 (0%) | 0/1 (0%) |"
    assert rows[4] == "| ladder-4 | 1/1 (100%) | 1/1 (100%) | 1/1 (100%) | 1/1 (100%) | 1/1 (100%) |"
    assert "| criterion | fair | fair | fair | fair | fair |" in out
    pooled = [line for line in out.splitlines() if line.startswith(("level0 ", "level1 ", "level4 "))]
    assert pooled == [], "the ladder's 100/80/60/40/20 says its levels are ordered by capability: not shown"
    assert "Wilson" not in out
    record = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert record["agent"] == "ladder" and record["ladder"]["agents"] == [
        "ladder-0",
        "ladder-1",
        "ladder-2",
        "ladder-3",
        "ladder-4",
    ]


def test_too_few_attempts_is_insufficient_and_fails_the_gate(tmp_path):
    ts, world = ladder_taskset(tmp_path)
    result = calibrate(ts, world, tmp_path, "--agent", "heuristic", "--repeats", "3", "--json")
    assert result.exit_code == 1, result.output
    record = json.loads(result.stdout)
    assert record["verdict"] == "insufficient" and record["holds"] is False
    assert record["deterministic"] is True and record["repeats"] == 1 and record["trials"] == 5


def test_unknown_reference_agent_is_a_usage_error(tmp_path):
    ts, world = ladder_taskset(tmp_path)
    result = calibrate(ts, world, tmp_path, "--agent", "wizard")
    assert result.exit_code == 2 and "unknown agent 'wizard'" in result.output


def test_a_model_reference_whose_endpoint_is_unreachable_stops_before_any_episode(tmp_path, monkeypatch):
    from tests.model_server import closed_port_url

    monkeypatch.setenv("OPENAI_BASE_URL", closed_port_url())
    ts, world = ladder_taskset(tmp_path)
    result = calibrate(ts, world, tmp_path, "--persona", "desk", "--agent", "openai:m")
    assert result.exit_code == 2, result.output
    assert "cannot reach the model endpoint" in " ".join(result.output.split())
    assert not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()
