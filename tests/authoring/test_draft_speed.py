"""`check --draft` in seconds (issue 21): what a draft skips, and the caches it leans on, which must never answer
for content they were not computed from."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from authoring.graph import calls

fairness_node = importlib.import_module("authoring.graph.nodes.fairness")


@pytest.mark.parametrize(("writes", "drawn"), [(True, ["record"]), (False, [])])
def test_the_staircase_picture_is_drawn_ahead_only_for_a_run_that_writes(monkeypatch, writes, drawn):
    """A draft stops before `finalize`: it gets the calibration worked out ahead (its items need it), never the
    picture only a commit writes."""
    pictured: list[str] = []
    worked_out: list[str] = []

    def calibration(run, tasks):
        worked_out.append("calibration")
        return "record", None

    monkeypatch.setattr(fairness_node, "calibration", calibration)
    monkeypatch.setattr(fairness_node, "png", lambda record: pictured.append(record))
    run = SimpleNamespace(
        options=SimpleNamespace(frontier_agent=None), rehearsable=lambda: True, writes=writes
    )
    fairness_node.draw_ahead(run, [])
    assert worked_out == ["calibration"] and pictured == drawn


def test_an_sdk_error_is_retried_without_the_sdk_being_imported_for_it():
    """The retry policy recognises the model SDK's transient errors once a model driver has imported the SDK; a
    run of rule drivers never imports it, and no other error is transient."""
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert calls._transient(openai.APIConnectionError(request=request))
    assert calls._transient(openai.APITimeoutError(request=request))
    assert not calls._transient(ValueError("a role's reply that does not parse is not infrastructure"))
    assert "openai" in sys.modules  # the premise: the SDK's errors exist only where the SDK was imported


def test_a_draft_never_imports_the_model_sdk_the_plotting_library_or_gitpython():
    """What `check --draft` imports for nothing was a third of its CPU: in a fresh interpreter, the draft's
    modules load neither the model SDK, matplotlib nor gitpython (a model driver, a commit's picture and a
    repository opened import them themselves)."""
    import subprocess

    code = (
        "import sys, authoring.cli.stories, authoring.checks, authoring.draft; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'matplotlib', 'git'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


# -- the rule author's memo: keyed by content -------------------------------------------------------------------
def _contexts(world, sources):
    from authoring.checks import check_persona
    from authoring.roles.author import own_deadlines
    from authoring.roles.author.rules import draft_context

    report = check_persona(sources, "desk_head", world, ladder=False)
    assert report.resolved and not report.errors, report.errors
    siblings = tuple(r.story.slug for r in report.resolved)
    deadlines = own_deadlines(report.resolved)
    return {
        r.story.slug: draft_context(
            world, report.source, r, siblings, list(world.default_backends), deadlines
        )
        for r in report.resolved
    }


def test_a_level_compiled_again_from_the_same_content_is_the_memo_s_and_equal_to_a_fresh_compile(
    mini_world, sources
):
    from authoring.roles.author import rules

    ctx = _contexts(mini_world, sources)["morning_positions"]
    first = rules.compile_level(ctx, 1)
    misses = rules._COMPILED.misses
    first["prompt"] = "changed by a caller"  # what a caller does to its copy is not what the next one gets
    again = rules.compile_level(
        _contexts(mini_world, sources)["morning_positions"], 1
    )  # rebuilt, equal content
    assert rules._COMPILED.misses == misses and rules._COMPILED.hits >= 1
    assert again == rules._compile(ctx, 1, True, 0)[0] and again["prompt"] != "changed by a caller"


def test_a_changed_fact_default_or_world_is_another_key_and_is_compiled_anew(mini_world, sources, tmp_path):
    import dataclasses
    import shutil

    from authoring.memo import content_key
    from authoring.roles.author import rules
    from certify import load_lexicon
    from simulator import World

    ctx = _contexts(mini_world, sources)["morning_positions"]
    before = rules.compile_level(ctx, 0)

    def key(c):
        return content_key(c, 0, load_lexicon(c.world.path), world=c.world)

    # a story's fact: the dashboard the level's setup and request name
    facts = ctx.story.story.facts.model_copy(update={"dashboard": "Desk Evening"})
    story = dataclasses.replace(ctx.story, story=ctx.story.story.model_copy(update={"facts": facts}))
    moved = dataclasses.replace(ctx, story=story)
    assert key(moved) != key(ctx)
    # Execute's choice of what it works on reads what Find hides (standin: `rules._find_hidden`), so level 0
    # compiles the story's Find level through the memo too: compiled first, the moved level 0 is the one miss
    rules.compile_level(moved, 1)
    misses = rules._COMPILED.misses
    after = rules.compile_level(moved, 0)
    assert rules._COMPILED.misses == misses + 1
    assert after["setup"] != before["setup"] and "Desk Evening" in str(after["setup"])
    # a target's parameter value, a default, the level
    target = dataclasses.replace(ctx.story.targets[0], params={**ctx.story.targets[0].params, "fund": "Beta"})
    assert key(dataclasses.replace(ctx, story=dataclasses.replace(ctx.story, targets=[target]))) != key(ctx)
    assert key(dataclasses.replace(ctx, defaults={**(ctx.defaults or {}), "max_turns": 99})) != key(ctx)
    assert content_key(ctx, 1, world=ctx.world) != content_key(ctx, 0, world=ctx.world)
    # the world: another directory, or one file changed (another fingerprint, so every widget it owns is named
    # anew)
    copy = Path(shutil.copytree(mini_world.path, tmp_path / "world-copy"))
    copied = _contexts(World.load(copy), sources)["morning_positions"]
    assert key(copied) != key(ctx)
    skill = sorted(copy.rglob("*.md"))[0]
    skill.write_text(skill.read_text() + "\nOne more line.\n")
    rebound = _contexts(World.load(copy), sources)["morning_positions"]
    assert rebound.world.fingerprint != copied.world.fingerprint and key(rebound) != key(copied)
    # the lexicon beside the world, which its fingerprint does not cover
    without = key(rebound)
    (copy / "lexicon.yaml").write_text("entries:\n  - {value: Gamma, kind: fund, synonyms: [third book]}\n")
    assert World.load(copy).fingerprint == rebound.world.fingerprint
    assert key(_contexts(World.load(copy), sources)["morning_positions"]) != without


def test_what_cannot_be_pickled_is_not_memoised():
    from authoring.memo import Memo, content_key

    assert content_key(lambda: None) is None
    memo: Memo[int] = Memo(2)
    calls = []
    assert [memo.get(None, lambda: calls.append(1) or len(calls)) for _ in range(2)] == [1, 2]
    assert [memo.get(k, lambda: calls.append(1) or len(calls)) for k in ("a", "b", "a", "c", "b")] == [
        3,
        4,
        3,
        5,
        6,
    ]


def test_a_targets_signature_is_answered_per_values_not_per_widget(mini_world, sources):
    """`Level.said` asks whether another widget takes every value of the Find target, once per widget of the
    catalog a decoy is drawn from: the answer is kept in the world's cache per widget and values, so other values
    of the same widget are asked anew."""
    import dataclasses

    from authoring.roles.author.level import Level

    level = Level(_contexts(mini_world, sources)["risk_repair"], 1)
    bare = dataclasses.replace(level.first, params={})  # no value at all: every other widget takes them
    # a value no widget declares: no other widget takes it
    odd = dataclasses.replace(level.first, params={**level.first.params, "severity": "Nowhere"})
    asked = (level.first, bare, odd, bare, odd, level.first)
    answers = [level._signature_unique(t) for t in asked]
    assert answers == [level._signature_unique_now(t) for t in asked]
    assert answers[1] is False and answers[2] is True


def test_a_check_hands_the_collector_back_as_it_found_it(sources, mini_world_path):
    """`check` keeps the cyclic collector off while its modules and world load and freezes them out of its
    reach; whatever way the command ends (here: errors, exit 2, and a clean check), the collector is on again
    and nothing stays frozen, so a process running many checks collects their garbage."""
    import gc

    from typer.testing import CliRunner

    from authoring.cli import app

    frozen = gc.get_freeze_count()  # the interpreter's own start-up objects, when something froze them
    assert gc.isenabled()
    for persona in ("nobody", "desk_head"):  # no such persona; one checked to its end (its verdict aside)
        done = CliRunner().invoke(
            app, ["check", persona, "--sources", str(sources), "--world", str(mini_world_path)]
        )
        assert done.exit_code in (0, 1, 2) and isinstance(done.exception, (SystemExit, type(None))), (
            done.output
        )
        assert gc.isenabled() and gc.get_freeze_count() <= frozen
    assert "story(ies) resolved against world" in done.output


def test_the_rule_authors_compiled_name_patterns_read_as_certify_reads_a_stated_value():
    """The rule author asks whether a sentence states a catalog name for every name and every level, so it
    compiles each name's pattern once (`level.word_pattern`, `level.states_name`) instead of flushing the `re`
    module's cache with thousands of them: the answers are `certify.states_value`'s, case by case."""
    import re

    from authoring.roles.author.level import states_name, word_pattern
    from certify import states_value

    texts = [
        "set status Open",
        "the open-items policy",
        "the open dashboard",
        "Open-Items",
        "ratio (1.5x) here",
    ]
    names = ["Open", "open", "1.5x", "Open-Items", "  ", "Items"]
    for _ in range(2):  # the second round answers from the compiled patterns
        for text in texts:
            for name in names:
                assert states_name(text, name) == states_value(text, name, any_case=True), (text, name)
                if name.strip():
                    own_case = word_pattern(name).search(text) is not None
                    assert own_case == states_value(text, name), (text, name)
    assert word_pattern("Open", re.I) is word_pattern("Open", re.I)


def test_a_find_wordings_verdict_is_keyed_by_the_parsed_task_so_defaults_that_parse_it_alike_share_it(
    mini_world, sources
):
    """`check` tries the Find wordings under the standard defaults, the run under its taskset's: a draft both
    parse alike (it states what the taskset adds) gets one verdict; defaults that change the parsed task, or
    another prompt, are asked anew — and every answer is the battery's and the Find rung's own."""
    from authoring.roles.author import rules
    from authoring.taskset import STANDARD_DEFAULTS
    from certify import parse_task, run_battery

    ctx = _contexts(mini_world, sources)["morning_positions"]
    raw = rules.compile_level(ctx, 1)
    assert raw["setup"]["workspace_baseline"] == ctx.baseline
    run_defaults = {**STANDARD_DEFAULTS, "setup": {"workspace_baseline": ctx.baseline}}
    required = {**STANDARD_DEFAULTS, "eval": {**STANDARD_DEFAULTS["eval"], "counterfactual": "required"}}
    other = {**raw, "prompt": raw["prompt"] + " Thanks again."}
    parsed = {
        "standard": parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS),
        "run": parse_task(raw, f"{raw['id']}.json", run_defaults),
        "required": parse_task(raw, f"{raw['id']}.json", required),
        "other prompt": parse_task(other, f"{raw['id']}.json", STANDARD_DEFAULTS),
    }
    rules._VERDICTS.clear()
    for name, task in parsed.items():
        misses = rules._VERDICTS.misses
        verdict = rules._unshortcut_and_found(ctx, task)
        own = not any(r.passed for r in run_battery(ctx.world, task)) and rules._find_rung_passes(ctx, task)
        assert verdict == own, name
        assert rules._VERDICTS.misses == misses + (0 if name == "run" else 1), name
