"""The rule author on stories the earlier fact shapes did not cover: each level is drafted, parsed with the
standard defaults and certified by the real gates, as the pipeline does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from authoring.factcheck import resolve
from authoring.judged import draft_audit
from authoring.roles.author import AuthorContext, RuleAuthor
from authoring.roles.fairness import RuleFairness
from authoring.sources import load_persona, load_story
from authoring.taskset import STANDARD_DEFAULTS
from certify.gates import certify_task
from certify.task import Task, parse_task
from simulator import World
from tests.authoring.conftest import ADD_STORY, PERSONA, REPAIR_STORY
from tests.conftest import write_world

SESSION_PROMPT = """---
name: workspace_session_context
description: Context.
planted: [tidewater hand-off rule]
---
Work on the open dashboard and its active tab.

At the close the tidewater hand-off rule applies: leave the board as the next desk expects it.
"""


@pytest.fixture
def world(tmp_path: Path) -> World:
    """The mini world, with a workspace prompt that plants a phrase a Ground level can be built on."""
    root = write_world(tmp_path / "world")
    (root / "prompts" / "context.md").write_text(SESSION_PROMPT)
    return World.load(root)


def context(world: World, tmp_path: Path, story: str, slug: str = "story") -> AuthorContext:
    (tmp_path / "personas").mkdir(exist_ok=True)
    (tmp_path / "personas" / "desk_head.md").write_text(PERSONA)
    path = tmp_path / "stories" / "desk_head" / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(story)
    backends = list(world.default_backends)
    resolved = resolve(world, load_story(path, "desk_head"), backends)
    return AuthorContext(
        world, load_persona(tmp_path, "desk_head"), resolved, "lived", backends, sorted(world.skills), (slug,)
    )


def author(ctx: AuthorContext, level: int) -> tuple[Task, dict[str, str]]:
    raw = RuleAuthor().draft(ctx, level, [], []).task
    task = parse_task(raw, f"{raw['id']}.json", STANDARD_DEFAULTS)
    cert = certify_task(
        ctx.world, task, f"{task.id}.json", judge_audit=draft_audit(ctx.world, task, f"{task.id}.json")
    )
    return task, {name: g.detail for name, g in cert.gates.items() if not g.ok}


def ladder(ctx: AuthorContext) -> list[Task]:
    tasks = []
    for level in range(5):
        task, failed = author(ctx, level)
        assert failed == {}, f"level{level}: {failed}"
        tasks.append(task)
    return tasks


@pytest.mark.parametrize("story", [ADD_STORY, REPAIR_STORY], ids=["add", "repair"])
def test_a_workspace_prompt_governs_the_ground_levels(world, tmp_path, story):
    governed = re.sub(
        r"governance: \{skill: [\w-]+\}", "governance: {prompt: workspace_session_context}", story
    )
    ctx = context(world, tmp_path, governed)
    gov = ctx.story.governance
    assert (gov.source, gov.phrase, gov.where) == (
        "prompt:workspace_session_context",
        "tidewater hand-off rule",
        "its last point",
    )
    tasks = ladder(ctx)
    for task in tasks[3:]:
        reads = [s for s in task.eval.required_tools if s.tool == "get_workspace_prompt"]
        assert [(s.args, s.graded_args, s.optional) for s in reads] == [
            ({"name": "workspace_session_context"}, ["name"], False)
        ]
        assert "the workspace session context prompt" in task.prompt and gov.phrase not in task.prompt
        assert [(h.kind, h.value, h.source) for h in task.meta.hidden] == [
            ("planted", "tidewater hand-off rule", "prompt:workspace_session_context")
        ]
    assert not any(s.tool == "get_workspace_prompt" for t in tasks[:3] for s in t.eval.required_tools)
    flags = RuleFairness().review("story", tasks, tasks, "desk_head")
    assert [f.reason for f in flags if f.severity == "blocker"] == []


TWO_CUTS = """---
facts:
  dashboard: Desk Morning
  targets:
    - {widget: Positions, app: Desk App, origin: Acme Data, params: {fund: Gamma, period: QTD}}
    - {widget: Positions, app: Desk App, origin: Acme Data, params: {fund: Beta, period: QTD}}
  find_hint: the holdings book
  policy: {phrase: the Thursday desk policy, carries: period, meaning: quarter-to-date}
  governance: {skill: close-checklist}
  build: {backend: Book Service, table: Book Register, app: Book App, tab: Book}
---
# Two books

The desk head wants the Gamma and the Beta books side by side, quarter-to-date.
"""


@pytest.mark.parametrize("kind", ["add", "repair"])
def test_two_targets_of_one_widget_are_both_described_at_find(world, tmp_path, kind):
    story = (
        TWO_CUTS
        if kind == "add"
        else TWO_CUTS.replace("  find_hint:", "  seeded_wrong: {period: MTD}\n  find_hint:")
    )
    ctx = context(world, tmp_path, story)
    tasks = ladder(ctx)
    find = tasks[1].prompt
    # no wording of 'the holdings book' leaves the word matchers failing in this small world: Find points at the
    # target through a planted shortlist note, whose one entry names the one widget both cuts are of
    [hidden] = tasks[1].meta.hidden
    assert hidden.kind == "target" and (hidden.source or "").startswith("note:"), tasks[1].meta.hidden
    pointer = ctx.story.spare_pointer
    assert pointer is not None
    said = [r.lower() for r in pointer.references() if r.lower() in find.lower()]
    assert len(said) == 1 and find.lower().count(said[0]) == 1, (
        find
    )  # the pointer is said once, not once per cut
    assert "first widget" not in find and "second widget" not in find, (
        find
    )  # ordinals would read as two entries
    assert re.search(r"for one of them [^;]*Gamma[^;]*; for the other [^;.]*Beta", find), find
    assert "Positions" not in find and "Book Summary" not in find, find  # no catalog name
    assert "Positions" in tasks[0].prompt and "Gamma" in find and "Beta" in find
    graded = {(r.widget_id, r.data_args["fund"]) for r in tasks[1].eval.required_widgets}
    # the placed look-alike, kept as is: by the one decoy rule (players6) it shows what the target's instances show,
    # in turn (the first cut's fund), so the target is not the board's odd one out
    decoy = {("desk_overview_book_summary", "Gamma")} if kind == "repair" else set()
    assert graded == {("desk_overview_positions", "Gamma"), ("desk_overview_positions", "Beta")} | decoy
    if kind == "repair":
        updates = [s.args["widget_uuid"] for s in tasks[0].eval.required_tools if s.tool == "update_widget"]
        assert len(set(updates)) == 2
