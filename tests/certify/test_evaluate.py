"""Evaluation runs: task selection, aggregation (invalid trials apart), the run folder written as trials finish,
an interrupted run keeping its finished trials, and the `taskforge eval` command."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from certify.agents import Action, Usage, resolve_agent
from certify.agents.oracle import NoopAgent, OracleAgent
from certify.evaluate import (
    REPORT_FILE,
    RUN_FILE,
    TRIALS_FILE,
    RunRecord,
    aggregate,
    choose_tasks,
    current,
    evaluate,
    load_record,
    load_run,
    reliability,
    select_tasks,
    to_retry,
)
from certify.task import TaskFileError, load_task
from certify.trial import Trial, regrade_trial
from tests.certify.helpers import raw


@pytest.fixture
def taskset_dir(tmp_path: Path) -> Path:
    root = tmp_path / "mini-set"
    (root / "desk").mkdir(parents=True)
    (root / "ops").mkdir()
    (root / "taskset.json").write_text(json.dumps({"taskset_id": "mini-set"}))
    (root / "desk" / "desk_fix_level0.json").write_text(json.dumps(raw()))
    (root / "desk" / "desk_fix_level1.json").write_text(
        json.dumps(raw(id="desk_fix_level1", difficulty="level1"))
    )
    (root / "ops" / "ops_fix_level0.json").write_text(json.dumps(raw(id="ops_fix_level0")))
    (root / "loose_level2.json").write_text(
        json.dumps(raw(id="loose_level2", difficulty="level2", persona="desk"))
    )
    return root


def make_trial(
    level: str,
    passed: bool | None,
    *,
    valid: bool = True,
    codes=(),
    turns=3,
    tokens=(10, 5),
    cost=0.01,
    parses=(1, 0, 0),
) -> Trial:
    return Trial(
        task_id=f"t_{level}",
        level=level,
        agent="fake",
        valid=valid,
        passed=passed,
        invalid_reason=None if valid else "rate_limited",
        failure_codes=list(codes),
        turns=turns,
        tool_calls=max(0, turns - 1),
        tokens_in=tokens[0],
        tokens_out=tokens[1],
        cost=cost,
        strict_parses=parses[0],
        lenient_parses=parses[1],
        failed_parses=parses[2],
    )


def test_aggregate_excludes_invalid_trials_from_rates():
    trials = [
        make_trial("level0", True),
        make_trial("level0", True),
        make_trial("level0", None, valid=False),
        make_trial("level1", False, codes=["missing_widget", "layout_overlap"], turns=7),
        make_trial("level1", True, turns=5),
        make_trial("level1", False, codes=["missing_widget"], turns=9),
        make_trial(
            "level3", None, valid=False, codes=["ignored"], tokens=(1000, 100), cost=1.0, parses=(0, 0, 9)
        ),
    ]
    report = aggregate(trials)
    assert list(report) == [
        "levels",
        "invalid",
        "failure_codes",
        "tokens",
        "cost",
        "turns",
        "tool_calls",
        "parse",
        "trials",
        "tasks",
        "pass_k",
        "consistency",
    ]
    level0, level1, level3 = report["levels"]
    assert level0 == {"level": "level0", "attempts": 2, "passes": 2, "rate": 1.0, "ci": [0.3424, 1.0]}
    assert (level1["attempts"], level1["passes"], level1["rate"]) == (3, 1, 0.3333)
    assert level3 == {"level": "level3", "attempts": 0, "passes": 0, "rate": None, "ci": [0.0, 0.0]}
    assert report["invalid"] == 2 and report["trials"] == 7
    assert report["failure_codes"] == {"missing_widget": 2, "layout_overlap": 1}
    assert report["tokens"] == {"in": 1060, "out": 130, "cached": 0} and report["cost"] == pytest.approx(1.06)
    assert report["turns"] == {"min": 3, "median": 5, "p90": 9, "max": 9, "mean": 5.4}
    assert report["parse"] == {"strict": 5, "lenient": 0, "failed": 0}


def test_select_tasks_and_persona_filter(taskset_dir):
    assert sorted(t.id for t in select_tasks(taskset_dir)) == [
        "desk_fix_level0",
        "desk_fix_level1",
        "loose_level2",
        "ops_fix_level0",
    ]
    assert sorted(t.id for t in select_tasks(taskset_dir, "desk")) == [
        "desk_fix_level0",
        "desk_fix_level1",
        "loose_level2",
    ]
    assert [t.id for t in select_tasks(taskset_dir, "ops")] == ["ops_fix_level0"]
    with pytest.raises(TaskFileError, match=r"no task belongs to persona 'nobody'.*desk, ops"):
        select_tasks(taskset_dir, "nobody")
    (taskset_dir / "ops" / "broken_level0.json").write_text(json.dumps(raw(id="broken_level0", extra_key=1)))
    with pytest.raises(TaskFileError, match=r"broken_level0\.json: extra_key: unknown key"):
        select_tasks(taskset_dir)


def test_run_folder_is_complete(mini_world, taskset_dir, tmp_path):
    tasks = select_tasks(taskset_dir)
    run = asyncio.run(
        evaluate(
            mini_world,
            tasks,
            OracleAgent(),
            repeats=2,
            concurrency=3,
            runs_dir=tmp_path / "runs",
            run_id="r1",
            taskset="mini-set",
            options={"persona": None},
        )
    )
    assert run.run_dir == tmp_path / "runs" / "r1"
    record = load_record(run.run_dir)
    assert (record.status, record.completed_trials, record.planned_trials) == ("complete", 8, 8)
    assert record.agent == "oracle" and record.options["concurrency"] == 3 and record.finished_at
    assert record.task_ids == [t.id for t in tasks]
    trials = load_run(run.run_dir)
    assert len(trials) == 8 and all(t.valid and t.passed for t in trials)
    assert sorted((t.task_id, t.repeat) for t in trials) == sorted((t.id, r) for t in tasks for r in (0, 1))
    report = json.loads((run.run_dir / REPORT_FILE).read_text())
    assert report == run.report and report["trials"] == 8
    assert [(lv["level"], lv["attempts"], lv["rate"]) for lv in report["levels"]] == [
        ("level0", 4, 1.0),
        ("level1", 2, 1.0),
        ("level2", 2, 1.0),
    ]
    with pytest.raises(FileExistsError):
        asyncio.run(evaluate(mini_world, tasks, NoopAgent(), runs_dir=tmp_path / "runs", run_id="r1"))


def test_stored_trials_regrade_without_the_agent(mini_world, taskset_dir, tmp_path):
    tasks = {t.id: t for t in select_tasks(taskset_dir)}
    run = asyncio.run(evaluate(mini_world, list(tasks.values()), OracleAgent(), runs_dir=tmp_path))
    for trial in load_run(run.run_dir):
        again = regrade_trial(mini_world, tasks[trial.task_id], trial)
        assert (again.passed, again.fingerprint) == (trial.passed, trial.fingerprint)


class _Agent:
    """A minimal agent: answers after a short pause, with a transcript, tracking how many run at once."""

    privileged = False

    def __init__(self, pause: float = 0.01) -> None:
        self.name = "scripted"
        self.pause = pause
        self.active = 0
        self.peak = 0

    def session(self, view, task=None):
        return _Session(self, view)


class _Session:
    def __init__(self, agent: _Agent, view) -> None:
        self.agent, self.view, self.usage, self.answered = agent, view, Usage(), False

    async def next_action(self, observation):
        if self.answered:
            return None
        self.agent.active += 1
        self.agent.peak = max(self.agent.peak, self.agent.active)
        try:
            await asyncio.sleep(self.agent.pause)
        finally:
            self.agent.active -= 1
        self.answered = True
        self.usage.requests += 1
        return Action("final_answer", {"text": f"answer for {self.view.task_id}"})

    def transcript(self):
        return [{"role": "assistant", "content": f"answer for {self.view.task_id}"}]


def test_concurrency_is_bounded(mini_world, taskset_dir, tmp_path):
    agent = _Agent(pause=0.02)
    run = asyncio.run(
        evaluate(mini_world, select_tasks(taskset_dir), agent, repeats=3, concurrency=3, runs_dir=tmp_path)
    )
    assert len(run.trials) == 12 and agent.peak == 3


def test_an_interrupted_run_keeps_its_finished_trials(mini_world, taskset_dir, tmp_path):
    tasks = select_tasks(taskset_dir)
    on_disk: list[int] = []

    async def main() -> None:
        three_done = asyncio.Event()

        def progress(trial: Trial, done: int, total: int) -> None:
            lines = (tmp_path / "killed" / TRIALS_FILE).read_text().splitlines()
            on_disk.append(len(lines))
            if done == 3:
                three_done.set()

        job = asyncio.create_task(
            evaluate(
                mini_world,
                tasks,
                _Agent(),
                repeats=4,
                concurrency=1,
                runs_dir=tmp_path,
                run_id="killed",
                progress=progress,
            )
        )
        await three_done.wait()
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(main())
    assert on_disk == [1, 2, 3], "each trial is on disk before the next one is reported"
    trials = load_run(tmp_path / "killed")
    assert len(trials) == 3 and all(t.transcript and t.final_answer for t in trials)
    assert [t.transcript[0]["content"] for t in trials] == [f"answer for {t.id}" for t in tasks[:3]]
    record = load_record(tmp_path / "killed")
    assert (record.status, record.completed_trials, record.planned_trials) == ("interrupted", 3, 16)
    assert json.loads((tmp_path / "killed" / REPORT_FILE).read_text())["trials"] == 3


def test_load_run_tolerates_only_a_cut_last_line(tmp_path, taskset_dir):
    good = make_trial("level0", True).model_dump_json()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / TRIALS_FILE).write_text(good + "\n" + good + "\n" + good[:40])
    assert len(load_run(run_dir)) == 2
    (run_dir / TRIALS_FILE).write_text(good + "\n" + '{"task_id": 1}' + "\n" + good + "\n")
    with pytest.raises(ValueError, match=r"trials.jsonl:2: "):
        load_run(run_dir)
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        load_run(tmp_path)


def test_build_agent_refuses_llm_options_for_other_agents():
    assert resolve_agent("noop").name == "noop"
    with pytest.raises(ValueError, match="mode only apply to openai"):
        resolve_agent("oracle", {"mode": "tools"})
    with pytest.raises(ValueError, match="unknown agent"):
        resolve_agent("gpt-4o")


# --- the command ---------------------------------------------------------------------------------------------


@pytest.fixture
def cli():
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_cli_json_report(cli, mini_world_path, taskset_dir, tmp_path):
    result = cli(
        "eval",
        "--taskset",
        str(taskset_dir),
        "--persona",
        "desk",
        "--agent",
        "oracle",
        "--repeats",
        "2",
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["trials"] == 6 and report["invalid"] == 0
    assert [lv["rate"] for lv in report["levels"]] == [1.0, 1.0, 1.0]
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert {p.name for p in run_dir.iterdir()} == {RUN_FILE, TRIALS_FILE, REPORT_FILE}
    assert load_record(run_dir).options["persona"] == "desk"


def test_cli_table(cli, mini_world_path, taskset_dir, tmp_path):
    result = cli(
        "eval",
        "--taskset",
        str(taskset_dir),
        "--agent",
        "noop",
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert (
        "Execute" in out and "Wilson 95% CI" in out and "missing_widget" in out and "invalid trials: 0" in out
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--taskset", "nowhere", "--agent", "oracle"], "no such folder"),
        (["--agent", "gpt-4o"], "unknown agent 'gpt-4o'"),
        (["--agent", "openai:gpt-4o"], "OPENAI_API_KEY"),
        (["--agent", "oracle", "--mode", "tools"], "--mode only apply to openai:<model> agents"),
        (["--agent", "oracle", "--persona", "nobody"], "no task belongs to persona 'nobody'"),
    ],
)
def test_cli_usage_errors_exit_2(cli, taskset_dir, monkeypatch, args, message):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    if "--taskset" not in args:
        args = ["--taskset", str(taskset_dir), *args]
    result = cli("eval", *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())


class _StubHandler(BaseHTTPRequestHandler):
    """Solves the desk task in one batch of tool calls, then calls final_answer."""

    def do_GET(self) -> None:
        payload = json.dumps(
            {
                "object": "list",
                "data": [{"id": "stub-model", "object": "model", "created": 0, "owned_by": "stub"}],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answered = any(m["role"] == "tool" for m in body["messages"])
        if answered:
            calls = [("final_answer", {"text": "Done."})]
        else:
            calls = [
                ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}}),
                ("add_generative_widget", {"widget_type": "note", "name": "Desk Note", "data": "5.24%"}),
            ]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(calls)
            ],
        }
        payload = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stub_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StubHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_cli_openai_against_a_local_endpoint(
    cli, stub_server, mini_world_path, taskset_dir, tmp_path, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = cli(
        "eval",
        "--taskset",
        str(taskset_dir),
        "--agent",
        "openai:stub-model",
        "--base-url",
        stub_server,
        "--mode",
        "tools",
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--concurrency",
        "4",
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["invalid"] == 0 and all(lv["rate"] == 1.0 for lv in report["levels"])
    assert report["tokens"] == {"in": 400, "out": 80, "cached": 0} and report["cost"] == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    record = load_record(run_dir)
    assert record.options["llm"]["mode"] == "tools" and "api_key" not in record.options["llm"]
    assert any("no price for model 'stub-model'" in n for n in record.notes)
    trial = load_run(run_dir)[0]
    assert [m["role"] for m in trial.transcript] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert load_task(taskset_dir / "desk" / "desk_fix_level0.json").id == "desk_fix_level0"


def failing_server():
    """An endpoint that lists its model but answers every completion with a 500 (quickly retried)."""
    from tests.model_server import ModelServer, error

    return ModelServer([error(500, "overloaded", headers={"retry-after-ms": "1"})], models=("m",))


def test_cli_all_invalid_exits_1(cli, mini_world_path, taskset_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with failing_server() as server:
        result = cli(
            "eval",
            "--taskset",
            str(taskset_dir),
            "--persona",
            "ops",
            "--agent",
            "openai:m",
            "--base-url",
            server.base_url,
            "--timeout",
            "0.5",
            "--world",
            str(mini_world_path),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--json",
        )
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["invalid"] == 1
    assert "no valid trial (api_error 1)" in " ".join(result.stderr.split())


def test_cli_an_unreachable_endpoint_is_a_usage_error_before_any_episode(
    cli, mini_world_path, taskset_dir, tmp_path, monkeypatch
):
    from tests.model_server import closed_port_url

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = cli(
        "eval",
        "--taskset",
        str(taskset_dir),
        "--agent",
        "openai:m",
        "--base-url",
        closed_port_url(),
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert result.exit_code == 2, result.output
    assert "cannot reach the model endpoint" in " ".join(result.stderr.split())
    assert "Traceback" not in result.output and not (tmp_path / "runs").exists()


def test_reliability_pass_k_and_consistency():
    def t(task, repeat, passed, valid=True):
        return Trial(task_id=task, level="level0", agent="a", repeat=repeat, passed=passed, valid=valid)

    trials = [
        t("a", 0, True),
        t("a", 1, True),
        t("a", 2, False),
        t("b", 0, True),
        t("b", 1, True),
        t("b", 2, True),
        t("c", 0, False),
        t("c", 1, None, valid=False),
        t("c", 2, False),
    ]
    rel = reliability(trials)
    assert [(r["task_id"], r["trials"], r["passes"], r["invalid"]) for r in rel["tasks"]] == [
        ("a", 3, 2, 0),
        ("b", 3, 3, 0),
        ("c", 2, 0, 1),
    ]
    assert rel["tasks"][2]["results"] == ["fail", "invalid", "fail"]
    assert rel["pass_k"]["1"] == {"value": round((2 / 3 + 1 + 0) / 3, 4), "tasks": 3}
    assert rel["pass_k"]["2"] == {"value": round((1 / 3 + 1 + 0) / 3, 4), "tasks": 3}
    assert rel["pass_k"]["3"] == {"value": 0.5, "tasks": 2}
    assert rel["consistency"] == {"value": round(2 / 3, 4), "agree": 2, "tasks": 3}


def test_current_keeps_the_latest_trial_of_each_repeat():
    first = Trial(task_id="a", level="level0", agent="x", repeat=0, valid=False, invalid_reason="timeout")
    again = Trial(task_id="a", level="level0", agent="x", repeat=0, passed=True)
    other = Trial(task_id="a", level="level0", agent="x", repeat=1, passed=False)
    assert current([first, other, again]) == [other, again]
    broken = Trial(task_id="b", level="level0", agent="x", repeat=0, valid=False, invalid_reason="api_error")
    record = RunRecord(
        run_id="r",
        agent="x",
        tasks=2,
        task_ids=["a", "b"],
        repeats=2,
        planned_trials=4,
        started_at="2025-01-01T00:00:00+00:00",
    )
    assert to_retry(record, [first, other, again, broken]) == [("b", 0), ("b", 1)]


def test_choose_tasks_by_id_and_limit(taskset_dir):
    tasks = select_tasks(taskset_dir)
    assert [t.id for t in choose_tasks(tasks, ["ops_fix_level0", "desk_fix_level0"])] == [
        "ops_fix_level0",
        "desk_fix_level0",
    ]
    assert len(choose_tasks(tasks, None, 2)) == 2
    with pytest.raises(
        ValueError, match="no task 'desk_fix_levl0' in the selection \\(did you mean 'desk_fix_level0'"
    ):
        choose_tasks(tasks, ["desk_fix_levl0"])


def test_cli_task_and_limit_and_per_task_table(cli, mini_world_path, taskset_dir, tmp_path):
    result = cli(
        "eval",
        "--taskset",
        str(taskset_dir),
        "--agent",
        "oracle",
        "--task",
        "ops_fix_level0",
        "--task",
        "loose_level2",
        "--repeats",
        "2",
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "r"),
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ops_fix_level0" in out and "loose_level2" in out and "desk_fix_level0" not in out
    assert "✓ ✓" in out and "2/2" in out
    assert "pass^k: k=1 1.00  k=2 1.00" in out and "consistency: 2/2 tasks" in out
    limited = cli(
        "eval",
        "--taskset",
        str(taskset_dir),
        "--agent",
        "noop",
        "--limit",
        "1",
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "r2"),
        "--json",
    )
    assert [r["task_id"] for r in json.loads(limited.stdout)["tasks"]] == ["desk_fix_level0"]
    bad = cli("eval", "--taskset", str(taskset_dir), "--agent", "noop", "--task", "nope")
    assert bad.exit_code == 2 and "no task 'nope'" in bad.stderr


def test_cli_retry_reruns_only_the_invalid_trials(
    cli, stub_server, mini_world_path, taskset_dir, tmp_path, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    runs = tmp_path / "runs"
    with failing_server() as server:
        first = cli(
            "eval",
            "--taskset",
            str(taskset_dir),
            "--persona",
            "desk",
            "--agent",
            "openai:m",
            "--mode",
            "tools",
            "--base-url",
            server.base_url,
            "--timeout",
            "0.5",
            "--world",
            str(mini_world_path),
            "--runs-dir",
            str(runs),
            "--json",
        )
    assert first.exit_code == 1 and json.loads(first.stdout)["invalid"] == 3
    (run_dir,) = runs.iterdir()
    record = load_record(run_dir)
    assert len(to_retry(record, load_run(run_dir))) == 3
    again = cli("eval", "--retry", run_dir.name, "--runs-dir", str(runs), "--base-url", stub_server, "--json")
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["invalid"] == 0 and report["trials"] == 3
    assert [lv["rate"] for lv in report["levels"]] == [1.0, 1.0, 1.0]
    assert len(load_run(run_dir)) == 6 and list(runs.iterdir()) == [run_dir]
    record = load_record(run_dir)
    assert record.retries[0]["planned"] == 3 and record.retries[0]["still_invalid"] == 0
    assert record.status == "complete" and record.completed_trials == 3
    nothing = cli("eval", "--retry", str(run_dir), "--json")
    assert nothing.exit_code == 0 and "no invalid or unfinished trial" in nothing.stderr
    assert len(load_run(run_dir)) == 6
    wrong = cli("eval", "--retry", str(run_dir), "--agent", "oracle")
    assert wrong.exit_code == 2 and "measured 'openai:m'" in wrong.stderr
