"""Tool results as the openai:<model> agent sends them: the same envelope, serialised compactly.

Most of an episode's input tokens are tool results resent with every request (a listing of a world's widget
catalog is tens of thousands of characters, most of it the same six keys repeated on every record). A list of
records that share their keys is sent as a table, `{"columns": [keys], "rows": [[values], ...]}`: every value is
kept, in order, and only the repeated keys go. Nothing else changes: the workspace returns the same envelope,
the trial records it whole and grading reads that; the system prompt tells the model how to read a table.
"""

from __future__ import annotations

import json
from typing import Any

# A list of this many records or more becomes a table; shorter ones read better as they are.
MIN_ROWS = 3
TABLE_NOTE = (
    'A list of records in a result may come as a table, {"columns": [names], "rows": [[values], ...]}: each row '
    "is one record, its values in the columns' order."
)


def tabulate(value: Any) -> Any:
    """`value` with every list of at least MIN_ROWS records that share the same keys (in the same order) as a
    table; records whose keys differ stay as they are."""
    if isinstance(value, dict):
        return {k: tabulate(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [tabulate(v) for v in value]
        if len(items) >= MIN_ROWS and all(isinstance(i, dict) and i for i in items):
            keys = list(items[0])
            if all(list(i) == keys for i in items[1:]):
                return {"columns": keys, "rows": [[i[k] for k in keys] for i in items]}
        return items
    return value


def dumps(value: Any) -> str:
    """The compact wire form of a result: tables for lists of records, no whitespace."""
    return json.dumps(tabulate(value), ensure_ascii=False, separators=(",", ":"), default=str)
