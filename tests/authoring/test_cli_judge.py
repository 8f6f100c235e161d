"""`taskforge judge audit` as a user types it, then `taskforge certify` on what it recorded, and `taskforge eval`
reporting the judge apart from the agent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from certify.judge import TEMPLATE_SHA256
from tests.certify.test_judge import FIXTURE, ScriptedJudge, exemplars
from tests.conftest import COMPAT_TASKS, COMPAT_WORLD, needs_compat
from tests.model_server import ModelServer, closed_port_url

runner = CliRunner()


@pytest.fixture
def taskset(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "judged"
    shutil.copytree(FIXTURE, root)
    return root


def test_audit_with_the_rubric_records_the_result_and_certify_accepts_it(taskset):
    before = runner.invoke(app, ["certify", str(taskset)])
    assert before.exit_code == 1 and "no audit of the judge rubric@1" in " ".join(before.output.split())
    done = runner.invoke(app, ["judge", "audit", "--taskset", str(taskset)])
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert "rubric (the embedded deterministic default; no model)" in text
    assert "3 judged task(s): 3 calibrated, 0 boundary, 0 miscalibrated" in text
    record = json.loads((taskset / "judge-audit.json").read_text())
    audit = record["audits"]["rubric@1"]
    assert audit["template_sha256"] == TEMPLATE_SHA256 and audit["status"] == "calibrated"
    assert set(audit["tasks"]) == {
        "lantern_limit_review_level0",
        "program_trading_outliers_level1",
        "keel_fails_triage_level0",
    }
    assert audit["tasks"]["keel_fails_triage_level0"]["path"] == "analyst/keel_fails_triage_level0.json"
    after = runner.invoke(app, ["certify", "--json", str(taskset)])
    assert after.exit_code == 0, after.output
    report = json.loads(after.stdout)
    assert report["summary"]["certified"] == 3 and report["summary"]["by_gate"]["judge"] == 3


def test_audit_with_a_model_judge_over_http_and_json_output(taskset):
    with ModelServer(ScriptedJudge(exemplars())) as server:
        done = runner.invoke(
            app,
            [
                "judge",
                "audit",
                "--taskset",
                str(taskset),
                "--judge",
                "openai:stub-model",
                "--base-url",
                server.base_url,
                "--json",
            ],
        )
    assert done.exit_code == 0, done.output
    audit = json.loads(done.stdout)
    assert audit["judge"] == "openai:stub-model" and audit["status"] == "calibrated"
    assert audit["spend"]["calls"] == 12 and audit["recorded"].endswith("judge-audit.json")
    assert any(p.endswith("/models") for p in server.paths)  # the preflight ran first
    # the taskset names the rubric as its judge: a model's audit alone does not certify it
    refused = runner.invoke(app, ["certify", str(taskset)])
    assert refused.exit_code == 1
    manifest = json.loads((taskset / "taskset.json").read_text())
    manifest["judge"] = "openai:stub-model"
    (taskset / "taskset.json").write_text(json.dumps(manifest))
    assert runner.invoke(app, ["certify", str(taskset)]).exit_code == 0


def test_an_unreachable_judge_is_one_line_and_exit_2(taskset):
    done = runner.invoke(
        app,
        ["judge", "audit", "--taskset", str(taskset), "--judge", "openai:m", "--base-url", closed_port_url()],
    )
    assert done.exit_code == 2 and "cannot reach the model endpoint" in done.output
    assert not (taskset / "judge-audit.json").exists()
    bad = runner.invoke(app, ["judge", "audit", "--taskset", str(taskset), "--judge", "gpt-4"])
    assert bad.exit_code == 2 and "--judge: 'gpt-4' names no judge" in " ".join(bad.output.split())
    rubric = runner.invoke(app, ["judge", "audit", "--taskset", str(taskset), "--max-cost", "1"])
    assert rubric.exit_code == 2 and "--max-cost: only for a model judge" in rubric.output
    missing = runner.invoke(app, ["judge", "audit", "--taskset", str(taskset / "nope")])
    assert missing.exit_code == 2 and "taskset.json" in missing.output


def test_a_miscalibrated_audit_exits_1_and_says_why(taskset):
    path = taskset / "analyst" / "keel_fails_triage_level0.json"
    raw = json.loads(path.read_text())
    raw["eval"]["judge_evaluation"] = {
        "key_points": [{"point": "The fails are listed.", "figures": ["167.1"]}]
    }
    path.write_text(json.dumps(raw))
    done = runner.invoke(app, ["judge", "audit", "--taskset", str(taskset)])
    assert done.exit_code == 1
    text = " ".join(done.output.split())
    assert (
        "MISCALIBRATED" in text
        and "keel_fails_triage_level0 (MISCALIBRATED): fact_stub expected FAIL" in text
    )
    certified = runner.invoke(app, ["certify", "--json", str(taskset)])
    gates = {t["id"]: t["gates"]["judge"] for t in json.loads(certified.stdout)["tasks"]}
    assert not gates["keel_fails_triage_level0"]["ok"] and gates["lantern_limit_review_level0"]["ok"]


@needs_compat
def test_the_vendored_corpus_has_no_judged_task():
    done = runner.invoke(
        app, ["judge", "audit", "--taskset", str(COMPAT_TASKS), "--world", str(COMPAT_WORLD)]
    )
    # the message names the folder, so where the terminal wraps it depends on the checkout's path
    assert done.exit_code == 0 and "no judged task" in " ".join(done.output.split())
    assert not (COMPAT_TASKS / "judge-audit.json").exists()


def test_eval_reports_the_judge_apart_from_the_agent(taskset):
    with ModelServer(ScriptedJudge(exemplars())) as server:
        done = runner.invoke(
            app,
            [
                "eval",
                "--taskset",
                str(taskset),
                "--agent",
                "oracle",
                "--judge",
                "openai:stub-model",
                "--runs-dir",
                str(taskset.parent / "runs"),
            ],
            env={"OPENAI_BASE_URL": server.base_url, "COLUMNS": "200"},
        )
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    assert "tokens: in 0 out 0 cost $0.0000" in text  # the oracle's own
    assert (
        "judge openai:stub-model: 3 answer(s) judged (PASS 3, FAIL 0); 3 call(s), tokens in 300 out 60"
        in text
    )
