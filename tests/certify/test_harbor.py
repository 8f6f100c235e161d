"""`taskforge export harbor`: the exported tasks as Harbor reads them (its own TaskConfig, task loader and lint
rules), and their scripts run here without Docker against a local `taskforge serve`. The suite exports one task
per level and runs two of them; the whole shipped taskset (120 tasks, oracle and do-nothing each) is
`taskforge export harbor --taskset tasksets/workspace_tasks --out DIR --check`, measured once (README)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from certify.agents.base import TaskView
from certify.agents.llm import first_message, system_prompt
from certify.evaluate import select_tasks
from certify.task import TaskSet

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"

if sys.version_info < (3, 12):
    pytest.skip(
        "Harbor (the harbor extra) needs Python >= 3.12; this is " + sys.version.split()[0],
        allow_module_level=True,
    )
pytest.importorskip(
    "harbor.models.task.config", reason="the harbor extra is not installed (pip install -e '.[harbor]')"
)

from harbor.models.task.config import TaskConfig  # noqa: E402
from harbor.models.task.task import Task as HarborTask  # noqa: E402
from harbor.models.verifier.result import VerifierResult  # noqa: E402

from certify.harbor import run_locally, validate  # noqa: E402


def said(result) -> str:
    return " ".join(result.output.split())


@pytest.fixture(scope="module")
def shipped():
    return select_tasks(SHIPPED)


@pytest.fixture(scope="module")
def exported(shipped, tmp_path_factory):
    """One task per level, exported through the CLI as a user types it."""
    chosen = list({t.difficulty: t for t in shipped}.values())
    out = tmp_path_factory.mktemp("harbor") / "datasets" / "workspace"
    args = ["export", "harbor", "--taskset", str(SHIPPED), "--out", str(out)]
    for task in chosen:
        args += ["--task", task.id]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{len(chosen)}/{len(chosen)} valid" in said(result)
    return out, chosen


def test_every_exported_task_is_valid_by_harbors_own_models(exported):
    out, chosen = exported
    assert sorted(p.name for p in out.iterdir()) == sorted(t.id for t in chosen)
    for task in chosen:
        root = out / task.id
        config = TaskConfig.model_validate_toml((root / "task.toml").read_text(encoding="utf-8"))
        loaded = HarborTask(root)
        assert validate(root) == []
        assert loaded.name == f"taskforge/{task.id}" and config.task.keywords[-1] == task.meta.level_name
        assert config.metadata["level"] == task.difficulty and config.metadata["persona"] == task.meta.persona
        assert config.metadata["story"] == task.meta.story and config.metadata["certified"] is True
        assert len(config.metadata["certificate_sha256"]) == 64
        budget = task.eval.turn_budget
        assert config.agent.timeout_sec == 60 * budget and config.verifier.timeout_sec == 30 + budget
        (server,) = config.environment.mcp_servers
        assert (
            server.transport == "streamable-http"
            and server.url == f"http://workspace:8000/tasks/{task.id}/mcp"
        )
        assert "workspace:8000" in config.environment.healthcheck.command
        assert config.verifier.environment_mode.value == "separate"
        assert config.verifier.environment.network_mode.value == "no-network"
        assert [(h.service, h.command) for h in config.verifier.collect] == [
            ("workspace", "sh /srv/collect.sh")
        ]
        assert [(a.source, a.service) for a in config.artifacts] == [("/srv/runs", "workspace")]


def test_the_instruction_states_the_request_and_the_harness_rules_and_the_agent_sees_no_answer(exported):
    out, chosen = exported
    for task in chosen:
        root = out / task.id
        text = (root / "instruction.md").read_text(encoding="utf-8")
        view = TaskView.of(task)
        assert text.startswith(first_message(view).strip()) and system_prompt(view, "tools").strip() in text
        assert all(rule in text for rule in view.rules)
        agent_side = (root / "environment" / "Dockerfile").read_text(encoding="utf-8")
        assert "COPY" not in agent_side and "ADD" not in agent_side, (
            "the agent's image holds nothing of the task"
        )
        served = json.loads((root / "environment" / "workspace" / "taskset" / f"{task.id}.json").read_text())
        assert served["id"] == task.id and "eval" in served, "the eval block lives in the sidecar only"
        assert "required_" not in text and (task.eval.reference_answer or "\0") not in text
        reference = json.loads((root / "solution" / "reference.json").read_text())
        assert [s["tool"] for s in reference["steps"]] == [s.tool for s in task.eval.reference_steps()]


def test_the_sidecar_is_this_package_pip_can_install_and_the_export_is_reproducible(exported, tmp_path):
    out, chosen = exported
    side = out / chosen[0].id / "environment" / "workspace"
    (archive,) = side.glob("taskforge-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    top = archive.name.removesuffix(".tar.gz")
    assert {f"{top}/pyproject.toml", f"{top}/README.md", f"{top}/certify/mcp_server.py"} <= names
    assert f"{top}/simulator/worlds/default/world.json" in names or any(
        n.startswith(f"{top}/simulator/worlds/default/") for n in names
    )
    assert not any("__pycache__" in n for n in names)
    assert (
        f'pip install --no-cache-dir "/opt/taskforge/{archive.name}[mcp]"'
        in (side / "Dockerfile").read_text()
    )
    again = tmp_path / "again"
    result = CliRunner().invoke(
        app, ["export", "harbor", "--taskset", str(SHIPPED), "--out", str(again), "--task", chosen[0].id]
    )
    assert result.exit_code == 0, result.output
    first, second = out / chosen[0].id, again / chosen[0].id
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)


def test_the_oracle_earns_1_and_doing_nothing_0_running_the_tasks_scripts_here(exported, tmp_path):
    out, chosen = exported
    task = chosen[-1]  # the Compose level: the longest reference
    oracle = run_locally(out / task.id, agent="oracle", scratch=tmp_path / "oracle")
    nothing = run_locally(out / task.id, agent="noop", scratch=tmp_path / "noop")
    assert (
        oracle.reward == 1 and oracle.verdict["passed"] and oracle.verdict["agent"] == "mcp:taskforge-oracle"
    )
    assert oracle.verdict["ended_by"] == "final_answer" and oracle.verdict["episodes"] == 1
    assert nothing.reward == 0 and nothing.verdict["failure_codes"] == ["no_episode"]
    rewards = json.loads((tmp_path / "oracle" / "verifier" / "reward.json").read_text())
    assert VerifierResult(rewards=rewards).rewards == {"reward": 1, "share": 1.0}


def test_an_episode_left_open_is_graded_when_the_collect_hook_stops_the_sidecar(exported, tmp_path):
    """An agent that makes a call and never finishes: collect.sh stops the server, which grades the open episode,
    and the verifier scores it (a failure, not a missing episode)."""
    from mcp import Client

    out, chosen = exported
    task = chosen[0]
    root = out / task.id
    home = tmp_path / "srv"
    import shutil

    shutil.copytree(root / "environment" / "workspace" / "taskset", home / "taskset")
    for name in ("serve.sh", "collect.sh"):
        shutil.copy(root / "environment" / "workspace" / name, home / name)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "TASKFORGE_HOME": str(home),
        "TASKFORGE_BIND": "127.0.0.1",
        "TASKFORGE_PORT": "0",
        "TASKFORGE_KEEPALIVE": "0",
        "TASKFORGE_RUNS_DIR": str(home / "runs"),
        "TASKFORGE_VERIFIER_DIR": str(tmp_path / "verifier"),
        "COLUMNS": "300",
    }
    server = subprocess.Popen(["sh", str(home / "serve.sh")], env=env, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in server.stderr:
            found = re.search(r"serving \S+ at (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url, "serve.sh announced no address"
        threading.Thread(target=server.stderr.read, daemon=True).start()
        opened: list[Client] = []

        async def call_and_leave() -> None:
            client = Client(url, mode="legacy")
            await client.__aenter__()
            opened.append(client)
            await client.call_tool("get_workspace_snapshot", {})

        asyncio.run(call_and_leave())
        subprocess.run(["sh", str(home / "collect.sh")], env=env, check=True, capture_output=True, timeout=60)
        server.wait(timeout=60)
        subprocess.run(
            ["sh", str(root / "tests" / "test.sh")], env=env, check=True, capture_output=True, timeout=60
        )
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    verdict = json.loads((tmp_path / "verifier" / "verdict.json").read_text())
    assert (tmp_path / "verifier" / "reward.txt").read_text() == "0\n"
    assert verdict["ended_by"] == "session_closed" and verdict["turns"] == 1 and verdict["episodes"] == 1
    assert verdict["failure_codes"] and "no_episode" not in verdict["failure_codes"]


def load_verdict_script():
    spec = importlib.util.spec_from_file_location("verdict", ROOT / "certify" / "harbor_task" / "verdict.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_verifier_counts_the_first_session_that_acted_and_fails_a_second():
    judge = load_verdict_script().judge
    probe = {"task_id": "t", "repeat": 0, "turns": 0, "passed": False, "failure_codes": ["missing_widget"]}
    good = {"task_id": "t", "repeat": 1, "turns": 5, "passed": True, "share": 1.0, "failure_codes": []}
    retry = {"task_id": "t", "repeat": 2, "turns": 3, "passed": True, "share": 1.0, "failure_codes": []}
    other = {"task_id": "u", "repeat": 0, "turns": 3, "passed": True, "share": 1.0, "failure_codes": []}
    assert judge("t", [probe, good])["passed"] is True, "a session that only listed tools is no episode"
    twice = judge("t", [good, retry])
    assert twice["passed"] is False and twice["failure_codes"][0] == "more_than_one_episode"
    assert judge("t", [other])["failure_codes"] == ["no_episode"]
    broken = judge("t", [{**good, "valid": False, "invalid_reason": "harness_fault"}])
    assert broken["passed"] is False and broken["failure_codes"] == ["harness_fault"]


def test_bad_input_is_a_one_line_error_and_nothing_foreign_is_replaced(tmp_path, shipped):
    runner = CliRunner()
    missing = runner.invoke(
        app, ["export", "harbor", "--taskset", str(tmp_path), "--out", str(tmp_path / "o")]
    )
    assert missing.exit_code == 2 and "no taskset.json" in said(missing)
    unknown = runner.invoke(
        app, ["export", "harbor", "--taskset", str(SHIPPED), "--out", str(tmp_path / "o"), "--task", "nope"]
    )
    assert unknown.exit_code == 2 and "no task 'nope'" in said(unknown)
    org = runner.invoke(
        app,
        [
            "export",
            "harbor",
            "--taskset",
            str(SHIPPED),
            "--out",
            str(tmp_path / "o"),
            "--task",
            shipped[0].id,
            "--org",
            "a/b",
        ],
    )
    assert org.exit_code == 2 and "--org 'a/b'" in said(org)
    mine = tmp_path / "o" / shipped[0].id
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("keep me")
    refused = runner.invoke(
        app,
        [
            "export",
            "harbor",
            "--taskset",
            str(SHIPPED),
            "--out",
            str(tmp_path / "o"),
            "--task",
            shipped[0].id,
        ],
    )
    assert refused.exit_code == 2 and "refusing to replace it" in said(refused)
    assert (mine / "notes.txt").read_text() == "keep me"


def test_the_world_of_a_taskset_that_names_one_goes_into_the_sidecar(tmp_path):
    compat = ROOT / "compat" / "workspacebench"
    taskset = compat / "tasksets" / "workspace_tasks"
    assert (taskset / "taskset.json").is_file(), f"the vendored corpus is missing at {compat}"
    task = select_tasks(taskset)[0]
    result = CliRunner().invoke(
        app,
        [
            "export",
            "harbor",
            "--taskset",
            str(taskset),
            "--world",
            str(compat / "world"),
            "--out",
            str(tmp_path),
            "--task",
            task.id,
        ],
    )
    assert result.exit_code == 0, result.output
    side = tmp_path / task.id / "environment" / "workspace"
    assert (side / "world").is_dir() and "COPY world /srv/world" in (side / "Dockerfile").read_text()
    assert TaskSet.load(side / "taskset").manifest.world is None
    assert validate(tmp_path / task.id) == []
