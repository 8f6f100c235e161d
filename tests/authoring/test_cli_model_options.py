"""One set of model options for every command that talks to a model (issue 24): each command accepts
--model, --base-url, --mode/--parse where an agent acts, --timeout, --max-tokens and --concurrency, and what was
given reaches the request the scripted server receives (the output cap on every request, under the name the
server takes). The environment variables stand in for a flag that is not given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from authoring.cli import app
from authoring.cli.options import ModelFlags
from tests.authoring.conftest import author_args
from tests.certify.helpers import raw
from tests.model_server import ModelServer, completion

runner = CliRunner()
MODEL_FLAGS = ("--model", "--base-url", "--timeout", "--max-tokens", "--concurrency")


def invoke(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})


def final_answer(body, index):
    """Every request answered with a final answer, in the format the request asks for."""
    if body.get("tools"):
        return completion(tool_calls=[("final_answer", {"text": "done"})])
    return completion(json.dumps({"tool": "final_answer", "args": {"text": "done"}}))


def taskset(root: Path, world: Path) -> Path:
    (root / "desk").mkdir(parents=True)
    (root / "taskset.json").write_text(json.dumps({"taskset_id": root.name, "world": str(world)}))
    (root / "desk" / "desk_fix_level0.json").write_text(json.dumps(raw()))
    return root


def chat_requests(server: ModelServer) -> list[dict]:
    return [r for r in server.requests if r.get("messages", [{}])[0].get("content") != "ping"]


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch):
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "TASKFORGE_MODEL",
        "TASKFORGE_MODE",
        "TASKFORGE_PARSE",
        "TASKFORGE_TIMEOUT",
        "TASKFORGE_MAX_TOKENS",
        "TASKFORGE_CONCURRENCY",
    ):
        monkeypatch.delenv(var, raising=False)


def test_every_command_that_talks_to_a_model_has_the_same_model_options():
    from tests.authoring.test_cli_options import commands

    by_name = dict(commands(typer.main.get_command(app)))
    for name in ("eval", "calibrate", "author", "review fix", "judge audit"):
        flags = {o for p in by_name[name].params for o in getattr(p, "opts", [])}
        assert set(MODEL_FLAGS) <= flags, f"{name} lacks {set(MODEL_FLAGS) - flags}"
    for name in ("eval", "calibrate", "author", "review fix"):
        flags = {o for p in by_name[name].params for o in getattr(p, "opts", [])}
        assert {"--mode", "--parse"} <= flags, name
    helps = {
        flag: {p.help for _, c in by_name.items() for p in c.params if flag in getattr(p, "opts", [])}
        for flag in MODEL_FLAGS
    }
    # --concurrency of a command with no model (serve, rollouts) may mean something else; these mean one thing
    for flag in ("--model", "--base-url", "--timeout", "--max-tokens"):
        assert len(helps[flag]) == 1, f"{flag}: {helps[flag]}"
    assert "author" in by_name and any(
        "--max-tokens-per-run" in getattr(p, "opts", []) for p in by_name["author"].params
    ), "the authoring run's token budget is --max-tokens-per-run"


def test_eval_sends_the_output_cap_and_mode_it_was_given(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "ts", mini_world_path)
    with ModelServer(final_answer) as server:
        result = invoke(
            "eval",
            "--taskset",
            str(ts),
            "--agent",
            "openai",
            "--model",
            "stub-model",
            "--base-url",
            server.base_url,
            "--mode",
            "tools",
            "--parse",
            "strict",
            "--timeout",
            "7",
            "--max-tokens",
            "333",
            "--concurrency",
            "1",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--json",
        )
        assert result.exit_code in (0, 1), result.output
        sent = chat_requests(server)
    assert sent and all(r["max_completion_tokens"] == 333 and r["model"] == "stub-model" for r in sent)
    assert all(r.get("tools") for r in sent), "--mode tools sends the tool schemas"
    (run_dir,) = (tmp_path / "runs").iterdir()
    llm = json.loads((run_dir / "run.json").read_text())["options"]["llm"]
    assert llm["request_timeout_s"] == 7 and llm["parse"] == "strict" and llm["max_tokens"] == 333


def test_eval_reads_the_environment_and_caps_output_by_default(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "ts", mini_world_path)
    with ModelServer(final_answer) as server:
        result = invoke(
            "eval",
            "--taskset",
            str(ts),
            "--agent",
            "openai",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--json",
            env={
                "OPENAI_BASE_URL": server.base_url,
                "TASKFORGE_MODEL": "stub-model",
                "TASKFORGE_MODE": "json",
            },
        )
        assert result.exit_code in (0, 1), result.output
        sent = chat_requests(server)
    assert sent and all(r["max_completion_tokens"] == 4096 and not r.get("tools") for r in sent)
    bad = invoke("eval", "--taskset", str(ts), "--agent", "openai:m", env={"TASKFORGE_MAX_TOKENS": "lots"})
    assert bad.exit_code == 2 and "$TASKFORGE_MAX_TOKENS='lots'" in bad.output


def test_eval_refuses_model_options_for_an_agent_without_a_model(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "ts", mini_world_path)
    result = invoke("eval", "--taskset", str(ts), "--agent", "oracle", "--max-tokens", "10")
    assert result.exit_code == 2 and "--max-tokens only apply to openai" in " ".join(result.output.split())
    clash = invoke("eval", "--taskset", str(ts), "--agent", "openai:a", "--model", "b")
    assert clash.exit_code == 2 and "name different models" in clash.output


def test_calibrate_takes_the_model_options(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "ts", mini_world_path)
    with ModelServer(final_answer) as server:
        result = invoke(
            "calibrate",
            "--taskset",
            str(ts),
            "--agent",
            "openai",
            "--model",
            "stub-model",
            "--base-url",
            server.base_url,
            "--mode",
            "tools",
            "--timeout",
            "9",
            "--max-tokens",
            "222",
            "--concurrency",
            "2",
            "--repeats",
            "1",
            "--min-attempts",
            "1",
            "--out",
            str(tmp_path / "cal"),
            "--runs-dir",
            str(tmp_path / "runs"),
        )
        assert result.exit_code in (0, 1), result.output
        sent = chat_requests(server)
    assert sent and all(r["max_completion_tokens"] == 222 and r.get("tools") for r in sent)


def test_author_llm_drivers_take_the_model_options(sources, repo, mini_world_path, tmp_path, monkeypatch):
    import shutil

    from authoring.roles.llm import DEFAULT_SKILLS_DIR

    monkeypatch.chdir(tmp_path)
    shutil.copytree(DEFAULT_SKILLS_DIR, repo / "skills", dirs_exist_ok=True)
    with ModelServer(["I would rather not."]) as server:
        result = invoke(
            *author_args(sources, repo, mini_world_path),
            "--driver",
            "llm",
            "--model",
            "stub-model",
            "--base-url",
            server.base_url,
            "--timeout",
            "5",
            "--max-tokens",
            "111",
            "--concurrency",
            "1",
            "--no-model-cache",
            "--max-calls",
            "12",
        )
        sent = chat_requests(server)
    assert "Traceback" not in result.output, result.output
    assert sent, result.output
    assert all(r["max_completion_tokens"] == 111 and r["model"] == "stub-model" for r in sent)


def test_review_fix_and_judge_audit_take_the_model_options(tmp_path):
    # review fix: the LLM fixer is built on the model options (an unreachable endpoint is the one-line
    # preflight error before any decision is recorded)
    from tests.model_server import closed_port_url

    fix = invoke(
        "review",
        "fix",
        "some-item",
        "--driver",
        "llm",
        "--model",
        "m",
        "--base-url",
        closed_port_url(),
        "--timeout",
        "1",
        "--max-tokens",
        "50",
        "--concurrency",
        "1",
        "--tasksets-dir",
        str(tmp_path / "tasksets"),
        "--checkpoints",
        str(tmp_path / "c.sqlite"),
    )
    assert fix.exit_code == 2, fix.output
    assert "cannot reach the model endpoint" in " ".join(fix.output.split())
    # judge audit: mode/parse are how an agent acts; a judge refuses them rather than ignoring them
    audit = invoke("judge", "audit", "--taskset", str(tmp_path), "--judge", "openai:m", "--mode", "tools")
    assert audit.exit_code == 2


def test_model_flags_resolve_from_the_environment():
    flags = ModelFlags(max_tokens=5).resolved(
        {"TASKFORGE_MAX_TOKENS": "9", "TASKFORGE_TIMEOUT": "2.5", "TASKFORGE_MODEL": "x"}
    )
    assert flags.max_tokens == 5 and flags.request_timeout_s == 2.5 and flags.model == "x"
    assert ModelFlags(max_tokens=5, request_timeout_s=3).client_config() == {
        "max_completion_tokens": 5,
        "timeout_s": 3,
    }
    assert ModelFlags(model="m").agent("openai") == "openai:m"
    with pytest.raises(ValueError, match="TASKFORGE_CONCURRENCY"):
        ModelFlags().resolved({"TASKFORGE_CONCURRENCY": "0"})
