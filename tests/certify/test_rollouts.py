"""`taskforge export rollouts`: trials as training records whose messages, replayed through our episode, give the
trial's verdict; on a shipped calibration run (ladder agents: messages built from the calls) and on model
agents' own conversations (a scripted endpoint behind the real openai client, tools and json mode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from certify.evaluate import load_run, select_tasks
from certify.rollouts import Rollout, replay_messages, verdict
from certify.task import TaskSet
from tests.certify.helpers import raw
from tests.model_server import ModelServer, completion

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
CALIBRATION = SHIPPED / "calibration" / "portfolio_manager"
UPDATE = {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}}
NOTE = {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"}


def export(*args: str):
    return CliRunner().invoke(app, ["export", "rollouts", *args])


def said(result) -> str:
    return " ".join(result.output.split())


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def same_verdict(world, tasks, record: dict, trial) -> bool:
    rollout = Rollout.model_validate(record)
    task = tasks[rollout.task_id]
    episode = replay_messages(world, task, rollout.messages, mode=rollout.harness_mode, parse=rollout.parse)
    again = verdict(task, episode, trial)
    return (again.passed, again.share, again.failure_codes) == (
        trial.passed,
        trial.share,
        trial.failure_codes,
    )


def test_a_calibration_run_round_trips_through_the_exported_messages(tmp_path):
    out = tmp_path / "rollouts.jsonl"
    result = export(str(CALIBRATION), "--out", str(out))
    assert result.exit_code == 0, result.output
    records, trials = read(out), load_run(CALIBRATION)
    assert len(records) == len(trials) == 100 and "100 rollout(s)" in said(result)
    world, tasks = TaskSet.load(SHIPPED).world(), {t.id: t for t in select_tasks(SHIPPED)}
    assert all(same_verdict(world, tasks, r, t) for r, t in zip(records, trials, strict=True))
    first = records[0]
    assert (
        first["source"] == "calls"
        and first["model"] == trials[0].agent
        and first["persona"] == "portfolio_manager"
    )
    assert first["level_name"] == "Execute" and first["run"] == "calibration/portfolio_manager"
    assert [m["role"] for m in first["messages"][:3]] == ["system", "user", "assistant"]
    assert "Rules of this episode" in first["messages"][1]["content"]
    assert first["messages"][2]["tool_calls"][0]["function"]["name"] == trials[0].events[0]["tool"]
    tool_result = json.loads(first["messages"][3]["content"])
    assert tool_result["ok"] and "data" in tool_result, "the compact record's envelope is replayed in full"
    assert first["reward"] == first["rewards"]["strict"] == (1.0 if trials[0].passed else 0.0)
    assert first["tools"][-1]["function"]["name"] == "final_answer"
    passes = export(str(CALIBRATION), "--out", str(tmp_path / "pass.jsonl"), "--filter", "pass")
    assert passes.exit_code == 0
    assert len(read(tmp_path / "pass.jsonl")) == sum(1 for t in trials if t.passed)


def test_sharegpt_alternates_calls_and_observations_with_the_tools_beside(tmp_path):
    out = tmp_path / "s.jsonl"
    result = export(str(CALIBRATION), "--out", str(out), "--format", "sharegpt", "--filter", "fail")
    assert result.exit_code == 0, result.output
    record = read(out)[0]
    turns = record["conversations"]
    assert turns[0]["from"] == "human" and record["system"].startswith(
        "You operate a financial analyst workspace"
    )
    calls = [i for i, t in enumerate(turns) if t["from"] == "function_call"]
    assert calls and all(turns[i + 1]["from"] == "observation" for i in calls)
    assert (
        json.loads(turns[calls[0]]["value"])["name"]
        and json.loads(record["tools"])[-1]["name"] == "final_answer"
    )
    assert record["passed"] is False and record["failure_codes"]


@pytest.fixture
def mini_taskset(tmp_path: Path) -> Path:
    root = tmp_path / "mini-set"
    (root / "desk").mkdir(parents=True)
    (root / "taskset.json").write_text(json.dumps({"taskset_id": "mini-set"}))
    (root / "desk" / "desk_fix_level0.json").write_text(json.dumps(raw()))
    return root


def tools_script():
    """An idle reply (nudged), a call with broken arguments (unparseable), the work, the final answer."""
    return [
        completion("Let me think about the board first."),
        completion(tool_calls=[("update_widget", UPDATE)]),
        completion(tool_calls=[("add_generative_widget", '{"widget_type": "note", ')], raw_arguments=True),
        completion("Noted.", tool_calls=[("add_generative_widget", NOTE), ("get_workspace_snapshot", {})]),
        completion(tool_calls=[("final_answer", {"text": "Done: Gamma QTD, weight 5.24%."})]),
    ]


def json_script():
    return [
        completion("I will update the positions view."),
        completion(json.dumps({"tool": "update_widget", "args": UPDATE})),
        completion("Sure! " + json.dumps({"tool": "add_generative_widget", "args": NOTE})),
        completion(json.dumps({"tool": "final_answer", "args": {"text": "Done."}})),
    ]


@pytest.mark.parametrize(("mode", "script"), [("tools", tools_script), ("json", json_script)])
def test_a_model_agents_own_conversation_round_trips(
    mode, script, mini_taskset, mini_world_path, tmp_path, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    runs = tmp_path / "runs"
    with ModelServer(script()) as server:
        ran = CliRunner().invoke(
            app,
            [
                "eval",
                "--taskset",
                str(mini_taskset),
                "--agent",
                "openai:stub-model",
                "--base-url",
                server.base_url,
                "--mode",
                mode,
                "--world",
                str(mini_world_path),
                "--runs-dir",
                str(runs),
                "--json",
            ],
        )
    assert ran.exit_code in (0, 1), ran.output
    (run_dir,) = runs.iterdir()
    (trial,) = load_run(run_dir)
    assert trial.valid and trial.transcript
    out = tmp_path / "model.jsonl"
    result = export(run_dir.name, "--runs-dir", str(runs), "--out", str(out))
    assert result.exit_code == 0, result.output
    (record,) = read(out)
    assert record["source"] == "transcript" and record["harness_mode"] == mode
    assert record["messages"] == trial.transcript and record["model"] == "openai:stub-model"
    assert (
        record["tokens"] == {"in": trial.tokens_in, "out": trial.tokens_out, "cached": 0}
        and trial.tokens_in > 0
    )
    from simulator import World

    world, tasks = World.load(mini_world_path), {t.id: t for t in select_tasks(mini_taskset)}
    rollout = Rollout.model_validate(record)
    episode = replay_messages(
        world, tasks[trial.task_id], rollout.messages, mode=rollout.harness_mode, parse=rollout.parse
    )
    assert [(e.tool, e.ok) for e in episode.events] == [(e["tool"], e["ok"]) for e in trial.events]
    assert same_verdict(world, tasks, record, trial)


def test_bad_runs_and_options_are_one_line_errors(tmp_path):
    missing = export(str(tmp_path / "nope"), "--out", str(tmp_path / "x.jsonl"))
    assert missing.exit_code == 2 and "not a run" in said(missing)
    fmt = export(str(CALIBRATION), "--out", str(tmp_path / "x.jsonl"), "--format", "alpaca")
    assert fmt.exit_code == 2 and "--format alpaca: openai or sharegpt" in said(fmt)
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "trials.jsonl").write_text("")
    orphan = export(str(tmp_path / "loose"), "--out", str(tmp_path / "x.jsonl"))
    assert orphan.exit_code == 2 and "pass --taskset DIR" in said(orphan)
    assert not (tmp_path / "x.jsonl").exists()
