"""The author package's own contracts: the eval block refuses a record certify's models refuse, where it is
written, and keeps what it accepts exactly as written; the roles' templating refuses a variable nobody passed;
every role prompt is a template file that renders."""

from __future__ import annotations

import json

import jinja2
import pytest

from authoring.roles.author.evalblock import AuthorBug, EvalBlock, record
from authoring.roles.prompts import HERE, prompt_data, render, render_prompt
from certify.task import HiddenValue, parse_task


def test_a_misspelt_or_mistyped_eval_record_is_refused_where_it_is_written():
    block = EvalBlock()
    with pytest.raises(AuthorBug, match=r"eval\.required_widgets entry: 0\.tab: Extra inputs"):
        block.add("required_widgets", origin="Acme Data", widget_id="w", tab="main")
    with pytest.raises(AuthorBug, match=r"eval\.max_turns"):
        block.set("max_turns", "twelve")
    with pytest.raises(AuthorBug, match="not a key of a task's eval block"):
        block.add("required_widget", origin="Acme Data", widget_id="w")
    with pytest.raises(AuthorBug, match=r"meta\.hidden entry: kind"):
        record(HiddenValue, "meta.hidden entry", kind="secret", value="x")
    assert block.wire() == {}


def test_the_eval_block_keeps_records_as_written_in_the_order_written():
    block = EvalBlock()
    block.add("required_tools", tool="get_workspace_snapshot", args={}, optional=True)
    block.add("required_widgets", origin="Built", name="Table", max_count=1, tab_id="main")
    block.add("required_layouts", widget_uuid="w_1", tab_id="main", x=0, y=14, w=20, h=8)
    block.set("max_turns", block.count("required_tools") + 3)
    wire = block.wire()
    # keys in the order first written (not the model's declaration order), grid positions still integers
    assert list(wire) == ["required_tools", "required_widgets", "required_layouts", "max_turns"]
    assert list(wire["required_widgets"][0]) == ["origin", "name", "max_count", "tab_id"]
    assert json.dumps(wire["required_layouts"][0]) == (
        '{"widget_uuid": "w_1", "tab_id": "main", "x": 0, "y": 14, "w": 20, "h": 8}'
    )
    task = parse_task({"id": "t", "difficulty": "level0", "prompt": "p", "eval": wire}, "t.json")
    assert task.eval.turn_budget == 4 and task.eval.required_layouts[0].y == 14


def test_the_templating_refuses_a_variable_nobody_passed():
    assert (
        render(
            "{{ verb | cap }} {{ noun | a }}{% for p in ps %}{{ p }}{{ sep(loop) }}{% endfor %}",
            verb="add",
            noun="alert",
            ps=["x", "y", "z"],
        )
        == "Add an alertx, y and z"
    )
    with pytest.raises(jinja2.UndefinedError):
        render("{{ missing }}")
    with pytest.raises(jinja2.UndefinedError):
        render_prompt("author-nudge", level=1)


def test_every_role_prompt_is_a_template_file_that_renders():
    names = sorted(p.name.removesuffix(".md.j2") for p in HERE.glob("*.md.j2"))
    assert names == [
        "author-level",
        "author-nudge",
        "author-opening",
        "fairness",
        "fixer",
        "reply-repair",
        "validator",
    ]
    nudge = render_prompt("author-nudge", level=3, task_id="desk_level3")
    assert nudge == (
        "No level was submitted. Call submit_level with the complete task object of level 3 (id desk_level3); a "
        "reply without a tool call hands nothing in."
    )
    repair = render_prompt("reply-repair", problem="flags.0.check: bad", schema='{"type": "object"}')
    assert repair.splitlines() == [
        "Your reply could not be used: flags.0.check: bad",
        "Reply again with one JSON object and nothing else, matching this JSON Schema:",
        '{"type": "object"}',
    ]
    dials = prompt_data("author-dials.yaml")
    assert sorted(dials) == [0, 1, 2, 3, 4]
    assert all(
        "\n" not in text and text.startswith(name)
        for text, name in zip(
            (dials[k] for k in range(5)), ("Execute:", "Find:", "Derive:", "Ground:", "Compose:"), strict=True
        )
    )
