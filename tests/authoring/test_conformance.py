"""Conformance of the LLM roles over HTTP, through the real client, against scripted role-players on a loopback
server: a competent script is certified and committed by the real `run_persona`; adversarial scripts (never
submits, malformed JSON, wrong schema, 400/429/500, timeouts, slow) end in role failures carrying evidence, or
succeed where a retry or patience is enough; an unreachable endpoint is a one-line error before any work.
A role failure inside a real run becomes a review item with the last reply as evidence, and the other stories go
on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from authoring.failures import EndpointError, RoleFailure, RoleUnavailable
from authoring.options import RunOptions
from authoring.roles.drivers import llm_drivers
from authoring.roles.llm import DEFAULT_SKILLS_DIR, LLMConfig
from authoring.run import run_persona
from authoring.taskset import STANDARD_DEFAULTS
from certify.calibration import Defect
from certify.gates import certify_task
from certify.task import parse_task
from certify.trial import Trial
from tests.authoring.conftest import git
from tests.authoring.role_player import RolePlayer, asked_task_id, contexts, rule_levels
from tests.model_server import ModelServer, Reply, closed_port_url, completion, error

ROOT = Path(__file__).resolve().parents[2]


def options(sources: Path, repo: Path, world: Path, **kw: Any) -> RunOptions:
    return RunOptions(
        persona="desk_head",
        tasksets_dir=str(repo / "tasksets"),
        sources_root=str(sources),
        skills_dir=str(repo / "skills"),
        world=str(world),
        **{"baseline": "lived", "repeats": 1, "min_attempts": 2, **kw},
    )


@pytest.fixture
def run_options(sources, repo, mini_world_path) -> RunOptions:
    return options(sources, repo, mini_world_path)


@pytest.fixture
def levels(run_options) -> dict[str, dict[str, Any]]:
    return rule_levels(run_options)


@pytest.fixture
def drivers(tmp_path):
    """LLM drivers pointed at a model server: `drivers(server, **config)`; progress lands in `.messages`."""
    skills = Path(shutil.copytree(DEFAULT_SKILLS_DIR, tmp_path / "llm-skills"))
    made = []

    def build(server: ModelServer, **config: Any):
        cfg = LLMConfig(
            model="stub-model",
            base_url=server.base_url,
            api_key="k",
            skills_dir=skills,
            **{"cache_dir": None, "timeout_s": 5.0, "max_retries": 2, **config},
        )
        messages: list[str] = []
        built = llm_drivers(cfg, messages.append, preflight=True)
        built.messages = messages
        made.append(built)
        return built

    yield build
    for built in made:
        built.author.endpoint.close()


def author_argv(sources: Path, repo: Path, world: Path, *extra: str) -> list[str]:
    return [
        "author",
        "--persona",
        "desk_head",
        "--world",
        str(world),
        "--sources",
        str(sources),
        "--tasksets-dir",
        str(repo / "tasksets"),
        "--baseline",
        "lived",
        *extra,
    ]


def run_llm(
    run_options: RunOptions,
    player: RolePlayer,
    drivers,
    tmp_path: Path,
    *,
    force: bool = False,
    **config: Any,
) -> tuple[Any, ModelServer]:
    """`run_persona` with LLM drivers against a model server playing `player`; the outcome and the server."""
    with ModelServer(player) as server:
        outcome = run_persona(
            run_options,
            drivers(server, **config),
            driver_name="llm",
            checkpoint_path=tmp_path / "cp.sqlite",
            force=force,
        )
    return outcome, server


def ctx_of(run_options: RunOptions, story: str = "morning_positions"):
    return contexts(run_options)[story]


def parsed(raw: dict[str, Any]):
    return parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS)


# ------------------------------------------------------------------------------------------------ competent
def test_a_competent_model_is_certified_and_committed(run_options, levels, drivers, repo, tmp_path):
    player = RolePlayer(levels)
    outcome, server = run_llm(run_options, player, drivers, tmp_path)
    assert outcome.status == "committed", outcome.summary
    assert player.calls == {"author": 10, "validator": 10, "fairness": 2}
    written = {
        p.stem: json.loads(p.read_text())
        for p in (repo / "tasksets" / "workspace_tasks" / "desk_head").glob("*.json")
    }
    assert written.keys() == levels.keys() and all(
        written[k]["prompt"] == levels[k]["prompt"] for k in levels
    )
    assert "certificates.json" in git(repo, "show", "--stat", "--format=%s", "HEAD")
    assert server.paths[0] == "/v1/models"


def test_a_competent_fixer_patch_certifies(run_options, levels, drivers):
    task = json.loads(json.dumps(levels["morning_positions_level0"]))
    task["eval"]["max_turns"] = 2
    trial = Trial(
        task_id=task["id"],
        level="level0",
        agent="heuristic",
        passed=False,
        ended_by="max_turns",
        failure_codes=["missing_widget"],
        fingerprint=["missing_widget: Positions"],
    )
    defect = Defect(
        task_id=task["id"], level="level0", fingerprint=trial.fingerprint, attempts=1, repeats=[0]
    )
    with ModelServer(RolePlayer(levels)) as server:
        result = drivers(server).fixer.repair(task, defect, [trial], ctx_of(run_options).world)
    assert result.escalate is None and result.patch[0].path == "/eval/max_turns"
    assert certify_task(ctx_of(run_options).world, parsed(result.task)).certified


# ------------------------------------------------------------------------------------------------ adversarial
def test_a_model_that_never_submits_is_a_role_failure_after_a_bounded_number_of_requests(
    run_options, drivers
):
    with (
        ModelServer(["The level looks clear to me; nothing to hand in yet."]) as server,
        pytest.raises(RoleFailure) as caught,
    ):
        drivers(server).author.draft(ctx_of(run_options), 0, [], [])
    assert caught.value.role == "author" and "no level was submitted" in caught.value.reason
    assert caught.value.evidence == "The level looks clear to me; nothing to hand in yet."
    assert len(server.requests) == 3
    assert server.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "submit_level"}}


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("Looks fine to me!", "not a JSON object"),
        ('{"verdict": "approve", "flags": [', "not a JSON object"),
        (json.dumps({"ok": True}), "verdict: Field required"),
        (
            json.dumps(
                {"verdict": "approve", "flags": [{"check": "vibes", "severity": "blocker", "reason": "x"}]}
            ),
            "flags.0.check: Input should be",
        ),
    ],
)
def test_replies_that_never_validate_are_a_role_failure_with_the_last_reply(
    run_options, levels, drivers, reply, problem
):
    task = parsed(levels["morning_positions_level1"])
    with ModelServer([reply]) as server, pytest.raises(RoleFailure) as caught:
        drivers(server, max_repairs=1).validator.review(task, ctx_of(run_options).world, "desk_head")
    assert type(caught.value) is RoleFailure and problem in caught.value.reason
    assert caught.value.evidence == reply and len(server.requests) == 2
    assert "could not be used" in server.requests[1]["messages"][-1]["content"]


def test_a_refused_request_is_a_role_failure_at_once(run_options, levels, drivers):
    with (
        ModelServer([error(400, "messages: too many tool definitions")]) as server,
        pytest.raises(RoleFailure) as caught,
    ):
        drivers(server).fairness.review(
            "morning_positions",
            [parsed(levels[f"morning_positions_level{n}"]) for n in range(5)],
            [],
            "desk_head",
        )
    assert type(caught.value) is RoleFailure and "bad_request" in caught.value.reason
    assert "too many tool definitions" in caught.value.evidence and len(server.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [
        error(429, "rate limited", headers={"retry-after-ms": "5"}),
        error(500, "internal error", headers={"retry-after-ms": "5"}),
        Reply(**{**completion("too late").__dict__, "delay": 1.0}),
    ],
)
def test_an_endpoint_that_keeps_failing_is_role_unavailable(run_options, levels, drivers, failure):
    task = parsed(levels["morning_positions_level0"])
    with ModelServer([failure]) as server, pytest.raises(RoleUnavailable) as caught:
        drivers(server, timeout_s=0.3, max_retries=1).validator.review(
            task, ctx_of(run_options).world, "desk_head"
        )
    assert len(server.requests) == 2 and caught.value.evidence


def test_transient_failures_and_a_slow_model_are_waited_out(run_options, levels, drivers):
    task = parsed(levels["morning_positions_level0"])
    approve = json.dumps({"verdict": "approve", "flags": []})
    script = [
        error(429, "rate limited", headers={"retry-after-ms": "5"}),
        error(503, "overloaded", headers={"retry-after-ms": "5"}),
        Reply(**{**completion(approve).__dict__, "delay": 0.4}),
    ]
    with ModelServer(script) as server:
        built = drivers(server, timeout_s=3.0)
        assert built.validator.review(task, ctx_of(run_options).world, "desk_head") == []
    assert len(server.requests) == 3 and built.validator.endpoint.usage.retries == 2


def test_an_empty_ladder_is_flagged_without_asking_the_model(drivers):
    with ModelServer(["unused"]) as server:
        flags = drivers(server).fairness.review("morning_positions", [], [], "desk_head")
    assert [(f.check, f.severity) for f in flags] == [
        ("complete_ladder", "blocker")
    ] and server.requests == []


def test_a_story_whose_author_never_submits_becomes_a_review_item(run_options, levels, drivers, tmp_path):
    player = RolePlayer(levels)
    competent = player.answers["author"]
    player.answers["author"] = lambda body: (
        "I would rather not." if asked_task_id(body).startswith("risk_repair") else competent(body)
    )
    outcome, _ = run_llm(run_options, player, drivers, tmp_path)
    assert outcome.status == "needs_review"
    items = [i for i in outcome.items if i.get("story") == "risk_repair"]
    assert items and any("I would rather not." in i.get("evidence", "") for i in items)
    assert (
        sum(1 for role, subject in player.log if role == "author" and subject.startswith("risk_repair")) <= 3
    )
    assert any(
        subject.startswith("morning_positions_level4") for role, subject in player.log if role == "author"
    )


def test_a_level_0_author_failure_is_one_item_per_cause_not_its_echoes(
    run_options, levels, drivers, tmp_path
):
    """Every story's author fails at level 0 (issue 24): the queue holds one item per story, the author's
    failure with its evidence; nothing that only follows from it (the fairness of a ladder that was never
    written, the calibration of no task) becomes an item of its own."""
    player = RolePlayer(levels, author=lambda body: "I would rather not.")
    outcome, _ = run_llm(run_options, player, drivers, tmp_path)
    assert outcome.status == "needs_review"
    stories = {i.get("story") for i in outcome.items}
    assert len(outcome.items) == len(stories), [
        (i["kind"], i.get("story"), i["reason"]) for i in outcome.items
    ]
    assert all(i["kind"] == "role_failure" and "I would rather not." in i["evidence"] for i in outcome.items)
    reasons = " ".join(i["reason"] for i in outcome.items)
    assert "the story has levels" not in reasons and "calibration measured too little" not in reasons


def test_a_validator_that_never_validates_becomes_a_review_item(run_options, levels, drivers, tmp_path):
    player = RolePlayer(levels, validator=lambda body: "APPROVE")
    outcome, _ = run_llm(run_options, player, drivers, tmp_path, max_repairs=0)
    assert outcome.status == "needs_review"
    assert any(i.get("evidence") == "APPROVE" for i in outcome.items)


# ------------------------------------------------------------------------------------------------ endpoint
def test_preflight_raises_endpoint_error_for_an_unusable_endpoint(tmp_path):
    config = LLMConfig(
        model="stub-model", base_url=closed_port_url(), api_key="k", cache_dir=None, max_retries=0
    )
    with pytest.raises(EndpointError, match="cannot reach the model endpoint"):
        llm_drivers(config, lambda m: None, preflight=True)
    with ModelServer([error(404, "model 'nope' not found", code="model_not_found")]) as server:
        config = LLMConfig(model="nope", base_url=server.base_url, api_key="k", cache_dir=None)
        with pytest.raises(EndpointError, match="does not know the model 'nope'"):
            llm_drivers(config, lambda m: None, preflight=True)


def test_an_unreachable_endpoint_is_a_one_line_error_before_any_work(
    sources, repo, mini_world_path, tmp_path
):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_BASE_URL": closed_port_url(),
        "TASKFORGE_MODEL": "m",
        "COLUMNS": "300",
    }
    env.pop("OPENAI_API_KEY", None)
    skills = shutil.copytree(DEFAULT_SKILLS_DIR, tmp_path / "skills")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "authoring",
            *author_argv(sources, repo, mini_world_path, "--driver", "llm", "--skills-dir", str(skills)),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot reach the model endpoint http://127.0.0.1:")
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / ".taskforge").exists() and not (repo / "tasksets").exists()


def test_a_model_reference_agent_is_checked_before_authoring(
    sources, repo, mini_world_path, tmp_path, monkeypatch
):
    from typer.testing import CliRunner

    from authoring.cli import app

    monkeypatch.setenv("OPENAI_BASE_URL", closed_port_url())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app,
        author_argv(sources, repo, mini_world_path, "--reference-agent", "openai:m"),
    )
    assert result.exit_code == 2, result.output
    assert "cannot reach the model endpoint" in " ".join(result.output.split())
    assert not (repo / "tasksets").exists() and not (tmp_path / ".taskforge").exists()


def test_a_rerun_is_answered_from_the_response_cache(run_options, levels, drivers, tmp_path):
    player = RolePlayer(levels)
    cache = tmp_path / "model-cache"
    with ModelServer(player) as server:
        first = run_persona(
            run_options,
            drivers(server, cache_dir=cache),
            driver_name="llm",
            checkpoint_path=tmp_path / "cp.sqlite",
        )
        paid = len(server.requests)
        again = run_persona(
            run_options,
            drivers(server, cache_dir=cache),
            driver_name="llm",
            checkpoint_path=tmp_path / "cp.sqlite",
            force=True,
        )
    assert first.status == again.status == "committed"
    assert paid == 22 and len(server.requests) == paid
