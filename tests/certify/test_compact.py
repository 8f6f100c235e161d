"""Tool results sent compactly (issue 24): a list of records sharing their keys becomes a table, losslessly;
the trial still records the envelope as the workspace returned it."""

from __future__ import annotations

import json

from certify.agents.compact import MIN_ROWS, dumps, tabulate


def untable(value):
    """The inverse of tabulate, to prove nothing is lost."""
    if isinstance(value, dict):
        if set(value) == {"columns", "rows"}:
            return [dict(zip(value["columns"], row, strict=True)) for row in value["rows"]]
        return {k: untable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [untable(v) for v in value]
    return value


def test_a_list_of_records_becomes_a_table_and_nothing_is_lost():
    widgets = [{"origin": "A", "widget_id": f"w{i}", "name": f"W {i}", "tags": [{"k": 1}]} for i in range(5)]
    envelope = {"ok": True, "message": "ok", "data": {"widgets": widgets, "count": 5}, "error": None}
    table = tabulate(envelope)
    assert table["data"]["widgets"]["columns"] == ["origin", "widget_id", "name", "tags"]
    assert table["data"]["widgets"]["rows"][2] == ["A", "w2", "W 2", [{"k": 1}]]
    assert untable(table) == envelope
    plain = json.dumps(envelope, separators=(",", ":"))
    assert len(dumps(envelope)) < len(plain)


def test_short_lists_and_records_that_differ_stay_as_they_are():
    short = [{"a": 1}] * (MIN_ROWS - 1)
    mixed = [{"a": 1}, {"a": 2}, {"b": 3}]
    reordered = [{"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2}]
    for value in (short, mixed, reordered, [1, 2, 3], [{}, {}, {}]):
        assert tabulate(value) == value
