"""Tool results sent compactly (issue 24): a list of records sharing their keys becomes a table, losslessly
(`untabulate`, the reading the system prompt describes, gives every result back); the trial still records the
envelope as the workspace returned it."""

from __future__ import annotations

import json

import pytest

from certify.agents.compact import MIN_ROWS, dumps, tabulate
from certify.agents.compact import untabulate as untable


def test_a_list_of_records_becomes_a_table_and_nothing_is_lost():
    widgets = [
        {"origin": "A", "widget_id": f"w{i}", "name": f"W {i}", "tags": [{"k": i % 2}]} for i in range(5)
    ]
    envelope = {"ok": True, "message": "ok", "data": {"widgets": widgets, "count": 5}, "error": None}
    table = tabulate(envelope)
    # the origin is the same on every record: said once, not on every row
    assert table["data"]["widgets"]["columns"] == ["widget_id", "name", "tags"]
    assert table["data"]["widgets"]["all"] == {"origin": "A"}
    assert table["data"]["widgets"]["rows"][2] == ["w2", "W 2", [{"k": 0}]]
    assert [list(w) for w in untable(table)["data"]["widgets"]] == [
        ["widget_id", "name", "tags", "origin"]
    ] * 5
    assert untable(table) == envelope
    plain = json.dumps(envelope, separators=(",", ":"))
    assert len(dumps(envelope)) < len(plain)


def test_short_lists_and_records_that_differ_stay_as_they_are():
    short = [{"a": 1}] * (MIN_ROWS - 1)
    mixed = [{"a": 1}, {"a": 2}, {"b": 3}]
    reordered = [{"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2}]
    for value in (short, mixed, reordered, [1, 2, 3], [{}, {}, {}]):
        assert tabulate(value) == value


def test_a_column_is_hoisted_only_when_every_row_holds_the_same_value_on_the_wire():
    rows = [{"id": "a", "n": 1}, {"id": "b", "n": 1.0}, {"id": "c", "n": True}]
    assert "all" not in tabulate(rows)  # 1, 1.0 and true are three values
    alike = [{"id": "a", "n": 1}] * 3
    assert tabulate(alike) == {"columns": ["id", "n"], "rows": [["a", 1]] * 3}  # nothing hoisted: n rows kept
    assert untable(tabulate(alike)) == alike


def test_an_optional_argument_is_sent_in_the_short_form_of_the_same_schema():
    from certify.agents.compact import compact_schema

    schema = {
        "type": "object",
        "properties": {
            "tab_id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "description": "d"},
            "w": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 20},
            "spec": {"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}], "default": None},
        },
    }
    short = compact_schema(schema)
    assert short["properties"]["tab_id"] == {"type": ["string", "null"], "description": "d"}
    # a real default, or an option that is more than a type, is kept as written
    assert short["properties"]["w"] == schema["properties"]["w"]
    assert short["properties"]["spec"] == schema["properties"]["spec"]
    assert len(json.dumps(short)) < len(json.dumps(schema))


def test_a_schema_loses_only_what_json_schema_implies_or_pydantic_derived_from_a_name():
    from certify.agents.compact import compact_schema

    schema = {
        "$defs": {"ChartParams": {"additionalProperties": True, "title": "ChartParams", "type": "object"}},
        "additionalProperties": False,
        "properties": {
            "chart_type": {"title": "Chart Type", "type": "string"},
            "kind": {"title": "What to draw", "type": "string"},
            "title": {"title": "Title", "type": "string"},
            "args": {
                "anyOf": [{"additionalProperties": True, "type": "object"}, {"type": "null"}],
                "default": None,
            },
        },
        "type": "object",
    }
    short = compact_schema(schema)
    assert short["$defs"] == {"ChartParams": {"type": "object"}}
    assert short["additionalProperties"] is False  # a closed object stays closed
    assert short["properties"] == {
        "chart_type": {"type": "string"},
        "kind": {"title": "What to draw", "type": "string"},  # written by hand: kept
        "title": {"type": "string"},  # a field called title is a field, its derived title goes
        "args": {"type": ["object", "null"]},
    }


def test_every_tool_schema_accepts_and_refuses_the_same_arguments_in_its_compact_form():
    """The real tool schemas, checked with a JSON Schema validator on every argument set the shipped references
    send and on each made wrong (an unknown key, a null, a number for a string)."""
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    from certify.agents.compact import compact_schema
    from certify.episode import reference_calls
    from certify.evaluate import select_tasks
    from simulator.toolspec import tool_schemas

    schemas = {t["name"]: t["parameters"] for t in tool_schemas()}
    root = Path(__file__).resolve().parents[2] / "tasksets" / "workspace_tasks"
    cases: list[tuple[str, dict]] = []
    for task in select_tasks(root):
        for tool, args in reference_calls(task):
            if tool in schemas and isinstance(args, dict):
                cases += [(tool, args), (tool, {**args, "unknown_key": 1})]
                cases += [(tool, {**args, k: None}) for k in args]
                cases += [(tool, {**args, k: 7}) for k in args]
    cases += [(name, {}) for name in schemas]
    seen = {tool for tool, _ in cases}
    assert len(seen) >= 12
    refused = 0
    for tool, args in cases:
        long_ok = jsonschema.Draft202012Validator(schemas[tool]).is_valid(args)
        short_ok = jsonschema.Draft202012Validator(compact_schema(schemas[tool])).is_valid(args)
        assert long_ok == short_ok, (tool, args)
        refused += not long_ok
    assert 0 < refused < len(cases)
    sent = sum(len(json.dumps(compact_schema(s))) for s in schemas.values())
    assert sent < 0.8 * sum(len(json.dumps(s)) for s in schemas.values())


def test_consecutive_rows_that_share_values_are_grouped_and_come_back_in_order():
    risk, ops = "Risk Radar Dashboard", "Settlements & Breaks Hub"
    cats = [risk] * 6 + [ops] * 6 + [risk] * 4  # a value may come back in a later run
    rows = [
        {"id": f"w{n}", "category": c, "grid": {"h": 12, "w": 20} if n not in (8, 9) else {"h": 5, "w": 40}}
        for n, c in enumerate(cats)
    ]
    table = tabulate(rows)
    assert table["columns"] == ["id"]
    assert [g["all"] for g in table["groups"]] == [
        {"category": risk, "grid": {"h": 12, "w": 20}},
        {"category": ops, "grid": {"h": 12, "w": 20}},
        {"category": ops, "grid": {"h": 5, "w": 40}},
        {"category": ops, "grid": {"h": 12, "w": 20}},
        {"category": risk, "grid": {"h": 12, "w": 20}},
    ]
    assert [len(g["rows"]) for g in table["groups"]] == [6, 2, 2, 2, 4]
    assert untable(table) == rows
    assert len(dumps(rows)) < len(json.dumps(rows, separators=(",", ":")))


def test_rows_are_not_grouped_when_runs_are_too_short_to_save_anything():
    rows = [{"id": f"w{n}", "side": ["buy", "sell"][n % 2]} for n in range(8)]
    table = tabulate(rows)
    assert "groups" not in table and table["rows"][1] == ["w1", "sell"]
    assert untable(table) == rows


def test_a_column_equal_to_another_on_every_row_is_said_once():
    options = [{"label": v, "value": v} for v in ("1D", "MTD", "QTD", "YTD")]
    table = tabulate({"options": options})["options"]
    assert table == {
        "columns": ["label"],
        "rows": [["1D"], ["MTD"], ["QTD"], ["YTD"]],
        "same": {"value": "label"},
    }
    assert untable(table) == options
    differs = [*options[:3], {"label": "Year to date", "value": "YTD"}]
    assert "same" not in tabulate(differs)
    assert untable(tabulate(differs)) == differs


def test_a_column_that_follows_from_another_is_said_once_per_value_of_it():
    kinds = ["table", "chart", "table", "metric", "table", "chart", "table", "table"]
    size = {"table": {"h": 12, "w": 20}, "chart": {"h": 12, "w": 20}, "metric": {"h": 5, "w": 40}}
    rows = [{"id": f"w{n}", "type": t, "grid": size[t]} for n, t in enumerate(kinds)]
    table = tabulate(rows)
    assert table["columns"] == ["id", "type"]
    assert table["per"] == {"grid": {"type": size}}
    assert untable(table) == rows
    # one widget of a type at another size: the grid no longer follows from the type, and every row keeps it
    odd = [*rows[:-1], {"id": "w7", "type": "table", "grid": {"h": 8, "w": 40}}]
    assert "per" not in tabulate(odd) and untable(tabulate(odd)) == odd
    # a key that is not a string (an object's keys are) is never looked up by
    numbered = [{"id": f"w{n}", "level": n % 2, "name": ["even", "odd"][n % 2] * 5} for n in range(8)]
    assert "per" not in tabulate(numbered) and untable(tabulate(numbered)) == numbered


def test_a_mapping_longer_than_the_column_it_replaces_is_not_used():
    # every id distinct: the name follows from the id, but the mapping would repeat every value and more
    rows = [{"id": f"w{n}", "name": f"Widget {n}"} for n in range(6)]
    assert tabulate(rows) == {"columns": ["id", "name"], "rows": [[f"w{n}", f"Widget {n}"] for n in range(6)]}


def test_what_a_column_follows_from_is_itself_kept_in_the_rows():
    # c follows from b and b from a: only one of the lookups is used, so every value is one lookup away
    rows = [{"a": f"a{n % 3}", "b": f"b{n % 3}" * 4, "c": f"c{n % 3}" * 4, "id": str(n)} for n in range(12)]
    table = tabulate(rows)
    derived = set(table.get("per", {}))
    sources = {other for spec in table.get("per", {}).values() for other in spec}
    assert derived and not derived & sources
    assert untable(table) == rows


def test_the_system_prompt_says_how_to_read_every_part_of_a_table():
    from certify.agents.compact import TABLE_NOTE

    for key in ('"columns"', '"rows"', '"all"', '"same"', '"per"', '"groups"'):
        assert key in TABLE_NOTE


def test_every_result_of_a_reference_play_comes_back_exactly_and_shorter():
    """Lossless on the real thing: each level's first shipped task played by its reference through the
    workspace, every envelope read back from its wire form equal to the one the workspace returned."""
    from pathlib import Path

    from certify.episode import reference_calls
    from certify.evaluate import select_tasks
    from certify.task import TaskSet
    from simulator.workspace import Workspace

    root = Path(__file__).resolve().parents[2] / "tasksets" / "workspace_tasks"
    world = TaskSet.load(root).world(None)
    firsts = {}
    for task in select_tasks(root):
        firsts.setdefault(task.difficulty, task)
    plain = sent = 0
    for task in firsts.values():
        workspace = Workspace.start(world, task.setup)
        for tool, args in reference_calls(task):
            envelope = workspace.call(tool, args).to_dict()
            wire = dumps(envelope)
            assert untable(json.loads(wire)) == envelope, (task.id, tool)
            plain += len(json.dumps(envelope, ensure_ascii=False, separators=(",", ":")))
            sent += len(wire)
    assert len(firsts) == 5 and sent < 0.85 * plain
