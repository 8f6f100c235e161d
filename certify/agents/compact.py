"""Tool results as the openai:<model> agent sends them: the same envelope, serialised compactly.

Most of an episode's input tokens are tool results resent with every request (a listing of a world's widget
catalog is tens of thousands of characters, most of it the same six keys repeated on every record). A list of
records that share their keys is sent as a table, `{"columns": [keys], "rows": [[values], ...]}`: every value is
kept, in order, and only the repeated keys go; a column whose value is the same on every row is said once, in
`"all": {key: value}`, and left out of the rows (a catalog listing's origin and backend, 15% of it). Nothing else
changes: the workspace returns the same envelope,
the trial records it whole and grading reads that; the system prompt tells the model how to read a table.
"""

from __future__ import annotations

import json
from typing import Any

# A list of this many records or more becomes a table; shorter ones read better as they are.
MIN_ROWS = 3
TABLE_NOTE = (
    'A list of records in a result may come as a table, {"columns": [names], "rows": [[values], ...]}: each row '
    "is one record, its values in the columns' order; a table's \"all\" holds the fields every record has "
    "with the same value."
)


def tabulate(value: Any) -> Any:
    """`value` with every list of at least MIN_ROWS records that share the same keys (in the same order) as a
    table, the columns equal on every row said once under "all"; records whose keys differ stay as they are."""
    if isinstance(value, dict):
        return {k: tabulate(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [tabulate(v) for v in value]
        if len(items) >= MIN_ROWS and all(isinstance(i, dict) and i for i in items):
            keys = list(items[0])
            if all(list(i) == keys for i in items[1:]):
                first = {k: _wire(items[0][k]) for k in keys}
                same = {k: items[0][k] for k in keys if all(_wire(i[k]) == first[k] for i in items[1:])}
                cols = [k for k in keys if k not in same]
                if not cols:  # every record alike: nothing to hoist without losing how many there are
                    same, cols = {}, keys
                table: dict[str, Any] = {"columns": cols, "rows": [[i[k] for k in cols] for i in items]}
                if same:
                    table["all"] = same
                return table
        return items
    return value


def _wire(value: Any) -> str:
    """A value as it is sent: equal here means equal on the wire (1, 1.0 and true are not the same value)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def dumps(value: Any) -> str:
    """The compact wire form of a result: tables for lists of records, no whitespace."""
    return json.dumps(tabulate(value), ensure_ascii=False, separators=(",", ":"), default=str)


def compact_schema(node: Any) -> Any:
    """A tool's argument schema in its shorter equivalent form: an optional value pydantic spells
    `{"anyOf": [{"type": T}, {"type": "null"}], "default": null}` becomes `{"type": [T, "null"]}` (the same
    JSON Schema; the default of an argument left out is null either way). Sent with every request, the long form
    was an eighth of the tool schemas."""
    if isinstance(node, list):
        return [compact_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: compact_schema(v) for k, v in node.items()}
    options = out.get("anyOf")
    if (
        isinstance(options, list)
        and len(options) == 2
        and {"type": "null"} in options
        and out.get("default") is None
    ):
        (other,) = [o for o in options if o != {"type": "null"}]
        if isinstance(other, dict) and set(other) == {"type"} and isinstance(other["type"], str):
            rest = {k: v for k, v in out.items() if k not in ("anyOf", "default")}
            return {"type": [other["type"], "null"], **rest}
    return out
