"""Tool results sent compactly (issue 24): a list of records sharing their keys becomes a table, losslessly;
the trial still records the envelope as the workspace returned it."""

from __future__ import annotations

import json

from certify.agents.compact import MIN_ROWS, dumps, tabulate


def untable(value):
    """The inverse of tabulate, to prove nothing is lost."""
    if isinstance(value, dict):
        if set(value) in ({"columns", "rows"}, {"columns", "rows", "all"}):
            keys = [*value["columns"], *value.get("all", {})]
            rows = [[*row, *value.get("all", {}).values()] for row in value["rows"]]
            return [dict(zip(keys, row, strict=True)) for row in rows]
        return {k: untable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [untable(v) for v in value]
    return value


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
