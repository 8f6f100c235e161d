"""The analyze ask: a story that asks, at every level, for an answer reasoning over the figures the way its
skill prescribes. Its facts are checked against the world; the rule author writes the exemplar and the key
points from the served rows and the skill; the judge audit passes on what it writes; the levels climb as usual
with the capability ladder writing the analysis where it should pass and failing where it should; the shipped
set carries one such story per persona, audited."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from authoring.factcheck import resolve
from authoring.judged import audit_file, draft_audit
from authoring.roles.author import AuthorContext, RuleAuthor
from authoring.sources import load_sources
from authoring.taskset import STANDARD_DEFAULTS
from certify import resolve_agent
from certify.agents.analysis import AnalysisAsk, threshold, write_analysis
from certify.gates import certify_task
from certify.judge import build_case, default_judge
from certify.judge.audit import AuditFile
from certify.task import TaskSet, parse_task
from certify.trial import run_trial
from simulator import DEFAULT_WORLD, Workspace, World

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
PERSONA, STORY = "portfolio_manager", "keel_europe_tilt"
PERSONAS = sorted(p.stem for p in (ROOT / "personas").glob("*.md"))


@pytest.fixture(scope="module")
def world() -> World:
    return World.load(DEFAULT_WORLD)


@pytest.fixture(scope="module")
def ctx(world) -> AuthorContext:
    persona, stories = load_sources(ROOT, PERSONA)
    backends = list(world.default_backends)
    resolved = [resolve(world, s, backends) for s in stories]
    story = next(r for r in resolved if r.story.slug == STORY)
    baseline = next(b for b in sorted(world.baselines) if b.endswith("workspace-a"))
    siblings = tuple(r.story.slug for r in resolved)
    return AuthorContext(
        world, persona, story, baseline, backends, sorted(world.skills), siblings, STANDARD_DEFAULTS
    )


@pytest.fixture(scope="module")
def levels(ctx):
    out = []
    for n in range(5):
        raw = RuleAuthor().draft(ctx, n, [], []).task
        out.append(parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS))
    return out


def _label(task) -> str:
    """The column the task's analysis tells its rows apart by: the story's (sector) on its own target; Execute
    reads Country Exposure in its place (a stand-in serving the analysed figure, so that level 0 does not name
    what Find hides) and tells its rows apart by market, the stand-in's own label column."""
    stand = task.meta.stands_in if task.meta else None
    return "sector" if stand is None else {"Country Exposure": "market"}[stand.name]


def _served(world, task) -> list[dict]:
    t = task.eval.required_tools
    read = next(s for s in t if s.tool == "get_widget_data")
    ws = Workspace.start(world, {"workspace_backends": list(world.default_backends)})
    return ws.call("get_widget_data", read.args).to_dict()["data"]["data"]


# ------------------------------------------------------------------------------------------- the facts check
def _sources_with(tmp_path: Path, old: str, new: str) -> Path:
    root = tmp_path / "sources"
    (root / "personas").mkdir(parents=True)
    shutil.copy(ROOT / "personas" / f"{PERSONA}.md", root / "personas")
    shutil.copytree(ROOT / "stories" / PERSONA, root / "stories" / PERSONA)
    path = root / "stories" / PERSONA / f"{STORY}.md"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return root


@pytest.mark.parametrize(
    ("old", "new", "key", "says"),
    [
        (
            "skill: portfolio-morning-brief, figure",
            "skill: portfolio-morning-brif, figure",
            "skill",
            "no skill",
        ),
        ("said: 140 bps", "said: 150 bps", "threshold.said", "is not in the Portfolio Morning Brief skill"),
        ("figure: active_weight", "figure: active_wieght", "figure", "did you mean 'active_weight'"),
        ("label: sector", "label: sectors", "label", "serves no column 'sectors'"),
    ],
)
def test_the_analyze_facts_are_checked_against_the_world(tmp_path, old, new, key, says):
    root = _sources_with(tmp_path, old, new)
    result = CliRunner().invoke(app, ["check", PERSONA, "--sources", str(root)])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert f"{STORY}.md" in flat and f"facts.analyze.{key}" in flat and says in flat


# ------------------------------------------------------------------------------------------- the authoring
def test_every_level_asks_for_the_analysis_without_naming_the_target_at_find(levels):
    for task in levels:
        # Find asks it without the target's column words (the figure the skill's threshold applies to): said,
        # "each sector's active weight" hands a word matcher Sector Tilt vs Benchmark
        said = (
            "cites, for each row, the figure the skill's talking-point threshold applies to"
            if task.level == 1
            else f"cites each {_label(task)}'s active weight"
        )
        assert re.search(rf"{re.escape(said)}, compares it with the skill's talking-point", task.prompt)
        assert "Portfolio Morning Brief" in task.prompt and "verdict" in task.prompt
        assert "140" not in task.prompt  # the skill says the number
    assert "Sector Tilt vs Benchmark" not in levels[1].prompt
    # Execute asks the same analysis over a stand-in serving the figure, not over the target Find hides
    assert levels[0].meta.stands_in is not None and "Sector Tilt vs Benchmark" not in levels[0].prompt


def test_the_exemplar_and_key_points_come_from_the_served_rows_and_the_skill(world, levels):
    skill = world.skills["portfolio-morning-brief"]
    assert "140 bps" in skill.content
    for task in levels:
        spec = task.eval.judged
        assert spec is not None and spec.skill == "portfolio-morning-brief"
        rows = _served(world, task)
        answer = task.eval.reference_answer
        assert answer is not None and "140 bps" in answer and "Verdict:" in answer
        label = _label(task)
        for row in rows:
            assert f"{row[label]}: active weight {row['active_weight']}" in answer
        figures = [f for p in spec.key_points for f in p.figures]
        assert figures == ["140 bps", *(str(r["active_weight"]) for r in rows)]
        assert ["verdict", *(r[label] for r in rows if abs(r["active_weight"]) > 0.014)] == (
            spec.key_points[-1].terms
        )
        # the other cuts' figures are what an answer over the wrong rows would state
        assert task.eval.answer_must_not_contain
        assert not any(v in answer for v in task.eval.answer_must_not_contain)


def test_the_rubric_passes_the_audit_on_what_the_author_writes_and_every_gate_holds(world, levels):
    for task in levels:
        audit = draft_audit(world, task, f"{task.id}.json")
        assert audit is not None and audit.status == "calibrated", audit
        cases = {c.case: c.verdict for c in audit.tasks[task.id].cases}
        assert cases == {"exemplar": "PASS", "fact_stub": "FAIL", "off_topic": "FAIL", "injection": "FAIL"}
        cert = certify_task(world, task, f"{task.id}.json", judge_audit=audit)
        assert cert.certified, {k: v.detail for k, v in cert.gates.items() if not v.ok}
        # gated against the record instead, a draft that belongs to no taskset is refused by the judge gate
        bare = certify_task(world, task, f"{task.id}.json")
        assert not bare.gates["judge"].ok


def test_the_ladder_writes_the_analysis_where_it_should_pass_and_fails_where_it_should(world, levels):
    async def matrix():
        return [
            [(await run_trial(world, task, resolve_agent(f"ladder-{k}"))).passed for k in range(5)]
            for task in levels
        ]

    got = asyncio.run(matrix())
    assert got == [[k >= n for k in range(5)] for n in range(5)]


def test_the_judge_decides_an_answer_over_the_wrong_rows_or_without_reasoning(world, levels):
    task = levels[0]
    rows = _served(world, task)
    label = _label(task)
    ask = AnalysisAsk(label, "active weight", "talking-point threshold", task.prompt)
    from certify.agents.knowledge import Document

    skill = world.skills["portfolio-morning-brief"]
    docs = [Document("skill", skill.slug, skill.name, skill.description, skill.content)]
    right = write_analysis(ask, rows, {}, docs)
    ws = Workspace.start(world, {"workspace_backends": list(world.default_backends)})
    read = next(s for s in task.eval.required_tools if s.tool == "get_widget_data")
    other = ws.call(
        "get_widget_data", {**read.args, "data_args": {**read.args["data_args"], "region": "Asia Pacific"}}
    ).to_dict()["data"]["data"]
    wrong = write_analysis(ask, other, {}, docs)
    stub = " ".join(f"{r[label]} {r['active_weight']}" for r in rows)

    def verdict(answer):
        return default_judge().judge_now(build_case(world, task, [], answer)).verdict

    assert verdict(right) == "PASS"
    assert verdict(wrong) == "FAIL" and verdict(stub) == "FAIL"


@pytest.mark.parametrize(
    ("slug", "name", "figures", "said", "value", "size"),
    [
        ("portfolio-morning-brief", "talking-point threshold", [0.0598, -0.0587], "140 bps", 0.014, True),
        ("earnings-prep-pack", "surprise band", [-0.0642, -0.041], "four percent", 0.04, True),
        ("nav-close-checklist", "frozen-mark line", [0, 15], "three sessions", 3, False),
        ("restricted-list-preclearance", "compliance-head line", [562.7], "250 thousand", 250, False),
        ("risk-limit-review", "amber ledger", [0.9797, 0.6612], "85% utilisation", 0.85, False),
    ],
)
def test_the_ladder_reads_the_threshold_from_the_skill_on_the_figures_scale(
    world, slug, name, figures, said, value, size
):
    line = threshold(AnalysisAsk("row", "figure", name, ""), world.skills[slug].content, figures)
    assert line is not None and line.said == said and line.value == pytest.approx(value) and line.size == size


def test_an_analysis_execute_on_the_target_is_reported_and_any_other_is_blocked(levels):
    """An Execute that works on the story's own target because its judged analysis has no stand-in serving the
    figure names what Find hides: reported (minor), so that the analysis is asked at every level; the same
    Execute without the analysis, or a leak above level 0, stays a blocker."""
    from authoring.roles.fairness import RuleFairness

    execute = levels[0]
    meta = execute.meta.model_copy(update={"stands_in": None})
    on_target = execute.model_copy(
        update={"prompt": execute.prompt + " Then look at Sector Tilt vs Benchmark.", "meta": meta}
    )

    def said_below(ladder):
        flags = RuleFairness().review(STORY, ladder, ladder, PERSONA)
        return {(f.level, f.severity) for f in flags if f.check == "stated_below"}

    assert said_below([on_target, *levels[1:]]) == {(1, "minor")}
    plain = on_target.model_copy(
        update={"eval": on_target.eval.model_copy(update={"judge_evaluation": None})}
    )
    assert (1, "blocker") in said_below([plain, *levels[1:]])
    # a stand-in's Execute that names the target anyway is not excused by its analysis
    leaky = execute.model_copy(update={"prompt": on_target.prompt})
    assert (1, "blocker") in said_below([leaky, *levels[1:]])


# ------------------------------------------------------------------------------------------- the record
def test_a_persona_run_records_its_audit_beside_the_other_personas(world, levels, tmp_path):
    other = draft_audit(world, levels[0], "trading_desk/other_level0.json")
    entry = other.tasks[levels[0].id].model_copy(
        update={"task_id": "other_level0", "path": "trading_desk/x.json"}
    )
    stale = entry.model_copy(update={"task_id": "gone_level0", "path": f"{PERSONA}/gone_level0.json"})
    base = AuditFile(
        audits={
            other.judge: other.model_copy(update={"tasks": {"other_level0": entry, "gone_level0": stale}})
        }
    )
    raws = [json.loads(t.model_dump_json(exclude_none=True, exclude_defaults=True)) for t in levels]
    written = audit_file(
        tmp_path,
        PERSONA,
        raws,
        world,
        STANDARD_DEFAULTS,
        lambda p: base.model_dump_json().encode(),
        "2026-01-01",
    )
    record = AuditFile.model_validate_json(written)
    (audit,) = record.audits.values()
    assert sorted(audit.tasks) == sorted(["other_level0", *(t.id for t in levels)])
    assert audit.created_at == "2026-01-01" and audit.status == "calibrated"
    assert all(audit.tasks[t.id].path == f"{PERSONA}/{t.id}.json" for t in levels)


def test_the_shipped_set_asks_for_analysis_in_one_story_per_persona_and_audits_it():
    taskset = TaskSet.load(SHIPPED)
    judged: dict[str, set[str]] = {}
    for path in taskset.task_files():
        raw = json.loads(path.read_text())
        if "judge_evaluation" in raw["eval"]:
            judged.setdefault(raw["meta"]["persona"], set()).add(raw["id"])
    assert sorted(judged) == PERSONAS
    for persona, ids in judged.items():
        stories = {i.rsplit("_level", 1)[0] for i in ids}
        assert len(stories) == 1 and len(ids) == 5, (persona, ids)
    record = AuditFile.model_validate_json((SHIPPED / "judge-audit.json").read_text())
    audit = record.audits["rubric@1"]
    assert audit.status == "calibrated"
    assert set(audit.tasks) == set().union(*judged.values())
    result = CliRunner().invoke(app, ["judge", "audit", "--taskset", str(SHIPPED), "--no-record"])
    assert result.exit_code == 0, result.output
    assert "30 calibrated, 0 boundary, 0 miscalibrated" in " ".join(result.output.split())
