"""The LLM authoring drivers against a scripted fake model behind the real openai client (httpx2.MockTransport):
the author's tool loop against the real gates, structured replies for the reviewers, the fixer's JSON Patch,
repairs of malformed replies, role failures with their evidence, budgets, and configuration that fails loudly
instead of falling back to the rule drivers."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from authoring.factcheck import resolve
from authoring.failures import RoleFailure, RoleUnavailable
from authoring.graph import Drivers
from authoring.roles.author import AuthorContext, RuleAuthor
from authoring.roles.drivers import llm_drivers
from authoring.roles.fixer import append_lesson
from authoring.roles.llm import DEFAULT_SKILLS_DIR, LLMConfig
from authoring.sources import load_persona, load_story
from authoring.taskset import STANDARD_DEFAULTS
from certify.calibration import Defect
from certify.gates import certify_task
from certify.task import Task, parse_task
from certify.trial import Trial
from tests.certify.test_llm_agent import FakeModel

PERSONA = """# Desk Lead

Runs the Acme desk's morning risk review. Terse; says "the book" for a fund's positions.
"""

STORY = """---
facts:
  dashboard: Risk Review
  targets:
    - widget: Positions
      app: Desk App
      origin: Acme Data
  params: {fund: Beta, period: QTD}
  find_hint: the holdings book
  policy: {phrase: the quarter-end cut, carries: period, meaning: quarter to date}
  governance: {skill: close-checklist}
  build: {backend: Desk Service, table: Desk Positions}
  kind: add
---
# Risk review

The desk lead wants the Beta book on the Risk Review board before the morning call.
"""

SLUG = "risk_review"


@pytest.fixture
def ctx(mini_world, tmp_path: Path) -> AuthorContext:
    (tmp_path / "personas").mkdir()
    (tmp_path / "stories" / "desk_lead").mkdir(parents=True)
    (tmp_path / "personas" / "desk_lead.md").write_text(PERSONA)
    path = tmp_path / "stories" / "desk_lead" / f"{SLUG}.md"
    path.write_text(STORY)
    persona = load_persona(tmp_path, "desk_lead")
    backends = list(mini_world.default_backends)
    story = resolve(mini_world, load_story(path, "desk_lead"), backends)
    return AuthorContext(mini_world, persona, story, "lived", backends, sorted(mini_world.skills), (SLUG,))


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """A copy of the real skills, so a lesson can be appended without touching the project's files."""
    return Path(shutil.copytree(DEFAULT_SKILLS_DIR, tmp_path / "skills"))


class Harness:
    def __init__(self, model: FakeModel, drivers: Drivers, progress: list[str]) -> None:
        self.model = model
        self.drivers = drivers
        self.progress = progress

    def user(self, request: int) -> str:
        return self.model.requests[request]["messages"][1]["content"]

    def last_message(self, request: int) -> dict[str, Any]:
        return self.model.requests[request]["messages"][-1]


@pytest.fixture
def llm(skills: Path):
    """Drivers over the real openai client whose transport serves a script; `llm(script, **config)`."""
    made: list[Harness] = []

    def build(script: list[Any], **config: Any) -> Harness:
        model = FakeModel(script)
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(model.handler))
        client = openai.AsyncOpenAI(
            api_key="test-key",
            base_url="http://fake.test/v1",
            max_retries=config.get("max_retries", 3),
            http_client=http,
        )
        cfg = LLMConfig(
            model="fake-model",
            base_url="http://fake.test/v1",
            api_key="test-key",
            skills_dir=skills,
            **{"cache_dir": None, **config},
        )
        progress: list[str] = []
        harness = Harness(model, llm_drivers(cfg, progress.append, client=client), progress)
        made.append(harness)
        return harness

    yield build
    for harness in made:
        harness.drivers.author.endpoint.close()


def rule_level(ctx: AuthorContext, level: int) -> dict[str, Any]:
    return RuleAuthor().draft(ctx, level, [], []).task


def parsed(raw: dict[str, Any]) -> Task:
    return parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS)


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


# ------------------------------------------------------------------------------------------------ author
def test_author_sees_the_gate_result_and_fixes_its_submission(llm, ctx, skills):
    good = rule_level(ctx, 1)
    leaky = copy.deepcopy(good)
    leaky["prompt"] = (
        "Risk Review is open: put Positions from Acme Data's Desk App there, fund Beta and period QTD. "
        "Nothing else belongs there."
    )
    h = llm(
        [
            [
                ("search_catalog", {"query": "holdings book positions", "origin": "Acme Data"}),
                (
                    "get_widget_rows",
                    {
                        "origin": "Acme Data",
                        "widget_id": "desk_overview_positions",
                        "data_args": {"fund": "Beta", "period": "QTD"},
                    },
                ),
            ],
            [("submit_level", {"task": leaky})],
            [("submit_level", {"task": good})],
        ]
    )
    history: list[dict[str, Any]] = []
    draft = h.drivers.author.draft(ctx, 1, [], history)

    assert draft.task == good and certify_task(ctx.world, parsed(draft.task)).certified
    assert len(h.model.requests) == 3
    first = h.model.requests[0]
    assert first["messages"][0] == {"role": "system", "content": (skills / "task-author.md").read_text()}
    assert {t["function"]["name"] for t in first["tools"]} == {
        "search_catalog",
        "get_widget_schema",
        "get_widget_rows",
        "read_skill",
        "read_resource",
        "read_prompt",
        "submit_level",
    }
    opening = h.user(0)
    for expected in (
        "Runs the Acme desk",
        "## Story: Risk review",
        "find_hint: the holdings book",
        "Write level 1 (Find)",
        "never named",
        f"{SLUG}_level1",
        "amber ledger stamp",
    ):
        assert expected in opening, expected

    search, rows = tool_results(h.model.requests[1])
    positions = next(m for m in search["matches"] if m["widget_id"] == "desk_overview_positions")
    assert positions["app"] == ["Desk App"] and positions["origin"] == "Acme Data"
    assert rows["data"]["data"][0]["weight"] == 0.0524

    verdict = tool_results(h.model.requests[2])[-1]
    assert verdict["certified"] is False and verdict["gates"]["leak"]["ok"] is False
    assert "Positions" in verdict["gates"]["leak"]["detail"] and verdict["gates"]["oracle"]["ok"] is True
    assert h.progress == [
        f"llm author {SLUG}_level1: round 2: not certified (leak, shortcuts)",
        f"llm author {SLUG}_level1: round 3: certified",
    ]

    json.dumps(history)
    roles = [m.get("role") for m in history]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "tool", None]
    assert history[-1]["draft"]["certified"] is True and history[-1]["draft"]["submissions"] == 2


def test_the_next_level_continues_the_same_session(llm, ctx):
    level1, level2 = rule_level(ctx, 1), rule_level(ctx, 2)
    h = llm([[("submit_level", {"task": level1})], [("submit_level", {"task": level2})]])
    history: list[dict[str, Any]] = []
    h.drivers.author.draft(ctx, 1, [], history)
    history = json.loads(json.dumps(history))  # as the checkpoint stores and restores it
    draft = h.drivers.author.draft(ctx, 2, ["validator flag single_ask: tidy the wording"], history)

    assert draft.task == level2
    second = h.model.requests[1]["messages"]
    assert second[1:4] == history[:3]
    users = [m["content"] for m in second if m["role"] == "user"]
    assert len(users) == 2 and sum("## Persona" in u for u in users) == 1
    assert "Write level 2 (Derive)" in users[1] and "Levels already written" in users[1]
    assert f'"id": "{SLUG}_level1"' in users[1] and "tidy the wording" in users[1]


def test_a_reply_without_a_tool_call_forces_submit_level_then_is_a_role_failure(llm, ctx):
    h = llm(["I think the level is clear enough."])
    history: list[dict[str, Any]] = []
    with pytest.raises(RoleFailure) as caught:
        h.drivers.author.draft(ctx, 0, [], history)
    failure = caught.value
    assert failure.role == "author" and f"{SLUG}_level0: no level was submitted (3 replies" in failure.reason
    assert failure.evidence == "I think the level is clear enough."
    assert len(h.model.requests) == 3
    first, second, third = h.model.requests
    assert "tool_choice" not in first
    forced = {"type": "function", "function": {"name": "submit_level"}}
    assert second["tool_choice"] == forced and third["tool_choice"] == forced
    assert "Call submit_level" in h.last_message(1)["content"]
    assert history[-1] == {
        "draft": {"level": 0, "task": None, "certified": False, "rounds": 3, "submissions": 0}
    }


def test_submit_level_takes_the_task_schema(llm, ctx):
    h = llm([[("submit_level", {"task": rule_level(ctx, 0)})]])
    h.drivers.author.draft(ctx, 0, [], [])
    submit = next(
        t["function"] for t in h.model.requests[0]["tools"] if t["function"]["name"] == "submit_level"
    )
    task = submit["parameters"]["properties"]["task"]
    assert task["required"] == ["id", "difficulty", "prompt"] and "eval" in task["properties"]
    assert (
        task["properties"]["eval"] == {"$ref": "#/$defs/Eval"}
        and "RequiredWidget" in submit["parameters"]["$defs"]
    )


def test_the_last_round_forces_a_submission(llm, ctx):
    level = rule_level(ctx, 0)
    h = llm(
        [[("search_catalog", {"query": "positions"})], [("submit_level", {"task": level})]], max_tool_rounds=2
    )
    assert h.drivers.author.draft(ctx, 0, [], []).task == level
    assert "tool_choice" not in h.model.requests[0]
    assert h.model.requests[1]["tool_choice"]["function"]["name"] == "submit_level"


def test_author_out_of_rounds_hands_back_its_last_submission(llm, ctx):
    broken = rule_level(ctx, 0)
    broken["eval"]["max_turns"] = 2
    malformed = {**broken, "eval": {**broken["eval"], "max_turn": 9}}
    h = llm(
        [[("submit_level", {"task": malformed})], [("submit_level", {"task": broken})]], max_tool_rounds=2
    )
    draft = h.drivers.author.draft(ctx, 0, [], [])
    assert draft.task == broken and "not certified" in draft.notes[0]
    rejected = tool_results(h.model.requests[1])[-1]
    assert rejected == {"certified": False, "error": "the task does not validate: eval.max_turn: unknown key"}


# ------------------------------------------------------------------------------------------------ reviewers
FLAG_REPLY = {
    "verdict": "flag",
    "flags": [
        {
            "check": "budget",
            "severity": "blocker",
            "reason": "max_turns 2 is below the reference's 3 calls",
            "evidence": "eval.max_turns: 2",
            "suggestion": "max_turns = 6",
        }
    ],
}


def test_validator_flag(llm, ctx, skills):
    raw = rule_level(ctx, 0)
    raw["eval"]["max_turns"] = 2
    h = llm([json.dumps(FLAG_REPLY)])
    flags = h.drivers.validator.review(parsed(raw), ctx.world, "desk_lead")

    assert len(flags) == 1
    flag = flags[0]
    assert (flag.role, flag.check, flag.severity, flag.task_id, flag.story, flag.level) == (
        "validator",
        "budget",
        "blocker",
        f"{SLUG}_level0",
        SLUG,
        0,
    )
    assert flag.suggestion == "max_turns = 6" and flag.blocking
    request = h.model.requests[0]
    schema = request["response_format"]["json_schema"]
    assert request["response_format"]["type"] == "json_schema" and "tools" not in request
    assert (schema["name"], schema["strict"]) == ("ValidatorReply", True)
    assert schema["schema"]["required"] == ["verdict", "flags"]
    assert request["messages"][0]["content"] == (skills / "task-validator.md").read_text()
    user = h.user(0)
    # level 0 works on a stand-in of the target Find hides (standin: naming the target there would state what Find
    # hides): the validator reads that widget, with the rows the world serves for the level's values
    stand = raw["meta"]["stands_in"]
    served = json.loads(
        user.split("## What the world serves for it", 1)[1].split("```json", 1)[1].split("```")[0]
    )
    [widget] = served["widgets"]
    assert '"max_turns": 2' in user and (widget["widget_id"], widget["name"]) == (
        stand["widget_id"],
        stand["name"],
    )
    assert [r["data_args"] for r in widget["rows"]] == [{"fund": "Beta", "period": "QTD"}]
    # the validator reads the task, not the sources: the persona's text never reaches it, and of the story only
    # what the request itself says (its purpose, the storyline's first sentence here)
    assert "Runs the Acme desk" not in user and "the Beta book on the Risk Review board" in parsed(raw).prompt
    assert h.progress == [f"llm validator {SLUG}_level0: flag (1 flag(s))"]


def test_fairness_flag(llm, ctx, skills):
    levels = [parsed(rule_level(ctx, lv)) for lv in range(5)]
    reply = {
        "verdict": "flag",
        "flags": [
            {
                "level": "level3",
                "rule": "budget",
                "severity": "blocker",
                "reason": "max_turns does not grow from Derive to Ground",
                "evidence": "level2 max_turns 9, level3 max_turns 9",
            }
        ],
    }
    h = llm([json.dumps(reply)])
    flags = h.drivers.fairness.review(SLUG, levels, levels, "desk_lead")

    assert [(f.role, f.check, f.level, f.task_id, f.severity) for f in flags] == [
        ("fairness", "budget", 3, f"{SLUG}_level3", "blocker")
    ]
    assert h.model.requests[0]["messages"][0]["content"] == (skills / "task-level-fairness.md").read_text()
    user = h.user(0)
    assert all(f"### {SLUG}_level{lv}" in user for lv in range(5))


# ------------------------------------------------------------------------------------------------ fixer
def failing_trial(task_id: str, *, passed: bool = False) -> Trial:
    events = [
        {"index": 1, "tool": "get_workspace_snapshot", "args": {}, "ok": True, "envelope": {"ok": True}},
        {
            "index": 2,
            "tool": "create_widget",
            "args": {"origin": "Acme Data", "widget_id": "positions"},
            "ok": False,
            "envelope": {
                "ok": False,
                "message": "Unknown widget 'positions'",
                "error": {"code": "not_found", "message": "Unknown widget 'positions' of Acme Data"},
            },
        },
    ]
    return Trial(
        task_id=task_id,
        level="level0",
        agent="heuristic",
        passed=passed,
        ended_by="max_turns",
        failure_codes=["missing_widget"],
        fingerprint=["missing_widget: Positions"],
        events=events,
    )


def test_fixer_patch_and_its_lesson(llm, ctx, skills):
    task = rule_level(ctx, 0)
    task["eval"]["max_turns"] = 2
    lesson = "a budget below the reference ran every attempt out of turns → max_turns = reference length + 3"
    patch = [{"op": "replace", "path": "/eval/max_turns", "value": 6}]
    h = llm(
        [
            json.dumps(
                {
                    "action": "patch",
                    "patch": patch,
                    "repaired": "max_turns 2 -> 6",
                    "lesson": lesson,
                    "skill": "task-author",
                }
            )
        ]
    )
    defect = Defect(
        task_id=task["id"],
        level="level0",
        fingerprint=["missing_widget: Positions"],
        attempts=3,
        repeats=[0, 1, 2],
    )
    trials = [
        failing_trial(task["id"]),
        failing_trial("other_level0"),
        failing_trial(task["id"], passed=True),
    ]
    result = h.drivers.fixer.repair(task, defect, trials, ctx.world)

    assert result.escalate is None and [op.rfc() for op in result.patch] == patch
    assert (
        result.task == {**task, "eval": {**task["eval"], "max_turns": 6}} and task["eval"]["max_turns"] == 2
    )
    assert (result.repaired, result.skill) == ("max_turns 2 -> 6", "task-author")
    assert certify_task(ctx.world, parsed(result.task)).certified
    user = h.user(0)
    assert "Unknown widget 'positions' of Acme Data" in user and '"attempts": 3' in user
    assert user.count('"repeat"') == 1 and "other_level0" not in user and "/eval/max_turns" in user
    request = h.model.requests[0]
    assert request["messages"][0]["content"] == (skills / "task-fixer.md").read_text()
    assert request["response_format"]["json_schema"]["name"] == "FixerReply"
    assert request["response_format"]["json_schema"]["strict"] is False

    path = append_lesson(skills, result.skill, SLUG, "level0", result.lesson)
    assert path == skills / "task-author.md"
    assert path.read_text().rstrip().splitlines()[-1].endswith(f"{SLUG}/level0: {lesson}")


def test_fixer_patch_outside_the_allowlist_or_weakening_is_sent_back_then_escalated(llm, ctx):
    task = rule_level(ctx, 0)
    graded = [i for i, s in enumerate(task["eval"]["required_tools"]) if not s.get("optional")]

    def reply(*ops: dict[str, Any]) -> str:
        return json.dumps(
            {"action": "patch", "patch": list(ops), "repaired": "r", "lesson": "l", "skill": "task-author"}
        )

    h = llm(
        [
            reply({"op": "replace", "path": "/id", "value": "something_else"}),
            reply({"op": "replace", "path": "/eval/trace_checks", "value": {"max_invalid_tool_calls": 9}}),
            reply({"op": "remove", "path": "/eval/required_tools/99"}),
            reply(*({"op": "remove", "path": f"/eval/required_tools/{i}"} for i in reversed(graded))),
        ],
        max_repairs=3,
    )
    defect = Defect(task_id=task["id"], level="level0", fingerprint=["x"], attempts=3, repeats=[0, 1, 2])
    result = h.drivers.fixer.repair(task, defect, [], ctx.world)

    assert result.task is None and "weakens the task" in result.escalate
    assert f"graded (non-optional) required_tools steps {len(graded)} -> 0" in result.escalate
    assert "operation 0 (replace /id) is outside what a repair may change" in h.last_message(1)["content"]
    assert "(replace /eval/trace_checks) is outside" in h.last_message(2)["content"]
    assert "does not apply to the task" in h.last_message(3)["content"]


def test_rule_fixer_returns_its_repair_as_a_patch(ctx):
    from authoring.roles.fixer import RuleFixer

    task = rule_level(ctx, 0)
    task["eval"]["max_turns"] = 2
    defect = Defect(task_id=task["id"], level="level0", fingerprint=["x"], attempts=1, repeats=[0])
    result = RuleFixer().repair(task, defect, [failing_trial(task["id"])], ctx.world)
    steps = len(task["eval"]["required_tools"])
    assert [op.rfc() for op in result.patch] == [
        {"op": "replace", "path": "/eval/max_turns", "value": steps + 3}
    ]
    assert result.task["eval"]["max_turns"] == steps + 3 and task["eval"]["max_turns"] == 2


# ------------------------------------------------------------------------------------------------ repairs
def test_malformed_reply_is_retried_with_the_error_then_accepted(llm, ctx):
    h = llm(
        ["APPROVE", json.dumps({"verdict": "maybe"}), '```json\n{"verdict": "approve", "flags": []}\n```']
    )
    flags = h.drivers.validator.review(parsed(rule_level(ctx, 0)), ctx.world, "desk_lead")

    assert flags == [] and len(h.model.requests) == 3
    second = h.model.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "APPROVE"}
    assert "not a JSON object" in second[-1]["content"] and '"verdict"' in second[-1]["content"]
    third = h.last_message(2)["content"]
    assert "verdict: Input should be 'approve' or 'flag'" in third


def test_a_reply_that_never_validates_is_a_role_failure_with_the_reply_as_evidence(llm, ctx):
    bad = json.dumps({"verdict": "flag", "flags": []})
    h = llm([bad], max_repairs=1)
    with pytest.raises(
        RoleFailure,
        match=rf"validator: {SLUG}_level0: no usable reply after 2 attempt\(s\).*"
        r"verdict 'flag' needs at least one flag",
    ) as caught:
        h.drivers.validator.review(parsed(rule_level(ctx, 0)), ctx.world, "desk_lead")
    assert caught.value.evidence == bad and len(h.model.requests) == 2


def test_rate_limit_is_retried_by_the_sdk(llm, ctx):
    limited = httpx2.Response(429, headers={"retry-after-ms": "1"}, json={"error": {"message": "slow down"}})
    h = llm([limited, json.dumps({"verdict": "approve", "flags": []})])
    assert h.drivers.validator.review(parsed(rule_level(ctx, 0)), ctx.world, "desk_lead") == []
    usage = h.drivers.validator.endpoint.usage
    assert (usage.requests, usage.retries, usage.tokens_in) == (2, 1, 100)


def test_an_endpoint_that_keeps_failing_is_a_role_unavailable(llm, ctx):
    h = llm(
        [httpx2.Response(503, headers={"retry-after-ms": "1"}, json={"error": {"message": "overloaded"}})],
        max_retries=2,
    )
    with pytest.raises(
        RoleUnavailable,
        match=r"validator: .*the model endpoint failed \(api_error\).*HTTP 503: "
        r"overloaded",
    ) as caught:
        h.drivers.validator.review(parsed(rule_level(ctx, 0)), ctx.world, "desk_lead")
    assert len(h.model.requests) == 3 and "overloaded" in caught.value.evidence


def test_budgets_stop_a_role_with_its_last_reply_as_evidence(llm, ctx):
    h = llm([[("search_catalog", {"query": "positions"})]], max_calls_per_level=3)
    with pytest.raises(
        RoleFailure,
        match=rf"author: {SLUG}_level0: the budget of {SLUG}_level0 is spent: 3 model "
        r"calls \(cap 3\)",
    ) as caught:
        h.drivers.author.draft(ctx, 0, [], [])
    assert len(h.model.requests) == 3 and caught.value.evidence.startswith("search_catalog(")
    h = llm([json.dumps({"verdict": "approve", "flags": []})], max_tokens_per_run=100)
    h.drivers.validator.review(parsed(rule_level(ctx, 0)), ctx.world, "desk_lead")
    with pytest.raises(RoleFailure, match=r"the run's budget is spent: 120 tokens \(cap 100\)"):
        h.drivers.validator.review(parsed(rule_level(ctx, 1)), ctx.world, "desk_lead")


# ------------------------------------------------------------------------------------------------ configuration
def test_config_from_env_fails_loudly(monkeypatch):
    for name in ("TASKFORGE_MODEL", "OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(
        ValueError,
        match=r"no model: pass --model or set TASKFORGE_MODEL.*no endpoint: set "
        r"OPENAI_API_KEY.*OPENAI_BASE_URL",
    ):
        LLMConfig.from_env()
    with pytest.raises(ValueError, match="no endpoint") as caught:
        LLMConfig.from_env(model="gpt-4.1")
    assert "no model" not in str(caught.value)

    from authoring.cli.author import DriverChoice, make_drivers
    from authoring.cli.options import ModelFlags

    with pytest.raises(ValueError, match="not configured"):
        make_drivers(DriverChoice.llm, ModelFlags(), lambda message: None)

    monkeypatch.setenv("OPENAI_MODEL", "llama3.1:8b")
    local = LLMConfig.from_env(base_url="http://localhost:11434/v1")
    assert (local.model, local.base_url, local.api_key) == (
        "llama3.1:8b",
        "http://localhost:11434/v1",
        "sk-no-key-required",
    )
    monkeypatch.setenv("TASKFORGE_MODEL", "gpt-4.1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hosted = LLMConfig.from_env()
    assert (hosted.model, hosted.base_url, hosted.api_key) == ("gpt-4.1", None, "sk-test")
    assert "sk-test" not in repr(hosted) and hosted.max_tool_rounds == 12 and hosted.max_repairs == 2


def test_missing_skill_files_are_an_error(tmp_path):
    config = LLMConfig(model="m", base_url="http://fake.test/v1", api_key="k", skills_dir=tmp_path)
    with pytest.raises(ValueError, match=r"task-author\.md, task-validator\.md"):
        llm_drivers(config, lambda message: None)


def test_the_call_cap_holds_exactly_when_stories_call_the_model_at_once(llm, ctx):
    """Parallel stories share the run's cap: each call is reserved before it is sent, so eight reviews at once
    under a cap of four send four requests and four reviews stop on the budget (the check-then-charge budget
    let all eight through: "7 model calls (cap 4)", issue 24)."""
    import asyncio
    import threading
    import time

    approve = json.dumps({"verdict": "approve", "flags": []})
    in_flight = {"now": 0, "most": 0}

    async def held(request: httpx2.Request) -> httpx2.Response:
        # hold each request until four are in flight (or a second passes): they are concurrent, not serial
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
        deadline = time.monotonic() + 1.0
        while in_flight["most"] < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        in_flight["now"] -= 1
        return httpx2.Response(200, json=h.model.completion(approve))

    h = llm([held], max_calls_per_run=4, max_concurrency=8)
    tasks = [parsed(rule_level(ctx, level % 5)) for level in range(8)]
    start = threading.Barrier(len(tasks))
    outcomes: list[str] = []

    def review(task: Task) -> None:
        start.wait()
        try:
            h.drivers.validator.review(task, ctx.world, "desk_lead")
            outcomes.append("reviewed")
        except RoleFailure as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=review, args=(t,)) for t in tasks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(h.model.requests) == 4 and in_flight["most"] == 4
    assert outcomes.count("reviewed") == 4
    refused = [o for o in outcomes if o != "reviewed"]
    assert len(refused) == 4
    assert all("the run's budget is spent: 4 model calls (cap 4)" in o for o in refused), refused
    assert h.drivers.validator.endpoint.budget.run.calls == 4


def test_a_judged_level_certifies_on_its_first_submission_as_the_pipeline_gates_it(llm, skills, tmp_path):
    """The author's own gating of a judged draft holds it against the rubric's audit, as the pipeline's does: a
    draft file belongs to no taskset yet, and without that audit every judged level read "not certified" to the
    model, which resubmitted it until its rounds ran out."""
    from authoring.options import RunOptions
    from simulator import DEFAULT_WORLD
    from tests.authoring.role_player import contexts

    options = RunOptions(
        persona="portfolio_manager",
        sources_root=str(Path(__file__).resolve().parents[2]),
        tasksets_dir=str(tmp_path / "tasksets"),
        skills_dir=str(skills),
        world=str(DEFAULT_WORLD),
        repeats=1,
        commit=False,
    )
    ctx = contexts(options)["keel_europe_tilt"]
    # the story's first judged level: Execute asks for no analysis where its stand-in (standin) does not serve
    # the analysed figure and label
    number, level = next(
        (n, raw) for n in range(5) if parsed(raw := rule_level(ctx, n)).eval.judged is not None
    )
    h = llm([[("submit_level", {"task": level})], [("submit_level", {"task": level})]])
    draft = h.drivers.author.draft(ctx, number, [], [])
    assert draft.task == level
    assert len(h.model.requests) == 1
    assert h.progress == [f"llm author keel_europe_tilt_level{number}: round 1: certified"]
