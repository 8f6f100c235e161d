"""Tool results as the openai:<model> agent sends them: the same envelope, serialised compactly.

Most of an episode's input tokens are tool results resent with every request (a listing of a world's widget
catalog is tens of thousands of characters, most of it the same keys repeated on every record). A list of
records that share their keys is sent as a table, `{"columns": [keys], "rows": [[values], ...]}`: every value is
kept, in order, and only the repeated keys go. Three more things are said once instead of on every row, each
only when it is shorter:
- `"all": {key: value}`: a column whose value is the same on every row (a catalog listing's origin and backend);
- `"same": {key: other}`: a column equal to another column on every row (an option's label and its value);
- `"per": {key: {other: {value of other: value}}}`: a column whose value follows from another column's on every
  row (a listing's grid size, the same for every widget of a type), said once for each value of the other;
- `"groups": [{"all": {key: value}, "rows": [...]}, ...]` in place of `"rows"`: consecutive rows that share the
  values of some columns (a listing's category, which the catalog keeps in runs), those values said once a run.
Nothing else changes: the workspace returns the same envelope, the trial records it whole and grading reads that;
the system prompt tells the model how to read a table (TABLE_NOTE), and `untabulate` is that reading, so a test
can prove a result comes back exactly as the workspace returned it.
"""

from __future__ import annotations

import json
from typing import Any

# A list of this many records or more becomes a table; shorter ones read better as they are.
MIN_ROWS = 3
# A column is grouped on only when its runs hold this many rows on average (fewer: the per-group keys cost more).
MIN_GROUP_ROWS = 2
TABLE_NOTE = (
    'A list of records in a result may come as a table, {"columns": [names], "rows": [[values], ...]}: each row '
    "is one record, its values in the columns' order. A table's \"all\" holds the fields every record has with "
    'the same value; its "same" maps a field to the field it equals in every record; its "per" gives a field '
    'by the value of another, {field: {other: {value of other: value of field}}}; "groups" in place of "rows" '
    'lists consecutive records in groups, {"all": {...}, "rows": [...]}, a group\'s "all" holding the fields '
    "its records share."
)
TABLE_KEYS = ({"columns", "rows"}, {"columns", "groups"})


def tabulate(value: Any) -> Any:
    """`value` with every list of at least MIN_ROWS records that share the same keys (in the same order) as a
    table (see the module's docstring); records whose keys differ stay as they are."""
    if isinstance(value, dict):
        return {k: tabulate(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [tabulate(v) for v in value]
        if len(items) >= MIN_ROWS and all(isinstance(i, dict) and i for i in items):
            keys = list(items[0])
            if all(list(i) == keys for i in items[1:]):
                return _table(items, keys)
        return items
    return value


def _table(items: list[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    wire = [{k: _wire(i[k]) for k in keys} for i in items]
    same_value = {k: items[0][k] for k in keys if all(w[k] == wire[0][k] for w in wire[1:])}
    if len(same_value) == len(keys):  # every record alike: nothing to hoist without losing how many there are
        same_value = {}
    cols = [k for k in keys if k not in same_value]
    # a column equal on every row to one kept before it goes, named under "same"
    copies: dict[str, str] = {}
    for k in cols:
        for kept in cols:
            if kept == k:
                break
            if kept not in copies and all(w[k] == w[kept] for w in wire):
                copies[k] = kept
                break
    cols = [k for k in cols if k not in copies]
    table = _rows(items, wire, cols, {})
    per = _dependents(items, wire, cols)
    # kept only when the whole table comes out shorter (the groups may have said those values already)
    if per:
        derived = _rows(items, wire, [k for k in cols if k not in per], per)
        if len(_wire(derived)) < len(_wire(table)):
            table = derived
    if same_value:
        table["all"] = same_value
    if copies:
        table["same"] = copies
    return table


def _rows(
    items: list[dict[str, Any]], wire: list[dict[str, str]], cols: list[str], per: dict[str, Any]
) -> dict[str, Any]:
    """The table's columns and its rows (or groups) over `cols`, with `per` (see `_dependents`) if any."""
    by = _group_columns(wire, cols)
    table: dict[str, Any] = {"columns": [k for k in cols if k not in by]}
    if not by:
        table["rows"] = [[i[k] for k in cols] for i in items]
    else:
        groups: list[dict[str, Any]] = []
        for n, item in enumerate(items):
            if n == 0 or any(wire[n][k] != wire[n - 1][k] for k in by):
                groups.append({"all": {k: item[k] for k in by}, "rows": []})
            groups[-1]["rows"].append([item[k] for k in table["columns"]])
        table["groups"] = groups
    if per:
        table["per"] = per
    return table


def _dependents(items: list[dict[str, Any]], wire: list[dict[str, str]], cols: list[str]) -> dict[str, Any]:
    """The columns whose value follows from another column's on every row, each as `{other: {value of other:
    its value}}` — only where saying that mapping once is shorter than the column's values on every row. The
    other column holds strings (an object's keys) and stays in the table; a column another follows from is not
    itself derived, so every value is one lookup away."""
    per: dict[str, Any] = {}
    keyed = [d for d in cols if all(isinstance(i[d], str) for i in items)]
    for k in cols:
        if any(k in spec for spec in per.values()):
            continue
        column = sum(len(w[k]) + 1 for w in wire)
        best: dict[str, Any] | None = None
        for d in keyed:
            if d == k or d in per:
                continue
            mapping: dict[str, Any] = {}
            said: dict[str, str] = {}
            for item, w in zip(items, wire, strict=True):
                if said.setdefault(item[d], w[k]) != w[k]:
                    break
                mapping.setdefault(item[d], item[k])
            else:
                spec = {d: mapping}
                if len(_wire({k: spec})) < column and (best is None or len(_wire(spec)) < len(_wire(best))):
                    best = spec
        if best is not None:
            per[k] = best
    return per


def _group_columns(wire: list[dict[str, str]], cols: list[str]) -> list[str]:
    """The columns whose runs of equal values save the most characters said once a run (chosen one at a time
    while another saves more; none if none saves any); a table keeps at least one column in its rows."""
    chosen: list[str] = []
    saved = 0
    while len(cols) - len(chosen) > 1:
        gains = {k: _grouping_gain(wire, [*chosen, k]) for k in cols if k not in chosen}
        best = max(gains, key=lambda k: gains[k])
        if gains[best] <= saved:
            break
        chosen.append(best)
        saved = gains[best]
    return chosen


def _grouping_gain(wire: list[dict[str, str]], by: list[str]) -> int:
    """Characters saved by grouping on `by`: its values leave every row, and each run says them once with its
    keys. Runs shorter than MIN_GROUP_ROWS on average gain nothing."""
    runs = [w for n, w in enumerate(wire) if n == 0 or any(w[k] != wire[n - 1][k] for k in by)]
    if len(runs) * MIN_GROUP_ROWS > len(wire):
        return 0
    per_value = sum(len(k) + 4 for k in by)  # "key": and a comma
    rows = sum(len(w[k]) + 1 for w in wire for k in by)
    return rows - sum(len('{"all":{},"rows":[]},') + per_value + sum(len(r[k]) for k in by) for r in runs)


def untabulate(value: Any) -> Any:
    """The reading TABLE_NOTE describes: every table back to its list of records (the inverse of `tabulate`,
    up to the order of a record's keys)."""
    if isinstance(value, list):
        return [untabulate(v) for v in value]
    if not isinstance(value, dict):
        return value
    if {k for k in value if k not in ("all", "same", "per")} in TABLE_KEYS:
        groups = value.get("groups") or [{"all": {}, "rows": value["rows"]}]
        records = []
        for group in groups:
            for row in group["rows"]:
                record = dict(zip(value["columns"], row, strict=True))
                record.update(group["all"])
                record.update(value.get("all", {}))
                for k, spec in value.get("per", {}).items():
                    ((other, mapping),) = spec.items()
                    record[k] = mapping[record[other]]
                record.update({k: record[other] for k, other in value.get("same", {}).items()})
                records.append(untabulate(record))
        return records
    return {k: untabulate(v) for k, v in value.items()}


def _wire(value: Any) -> str:
    """A value as it is sent: equal here means equal on the wire (1, 1.0 and true are not the same value)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def dumps(value: Any) -> str:
    """The compact wire form of a result: tables for lists of records, no whitespace."""
    return json.dumps(tabulate(value), ensure_ascii=False, separators=(",", ":"), default=str)


def compact_schema(node: Any) -> Any:
    """A tool's argument schema in its shorter equivalent form, sent with every request:
    - an optional value pydantic spells `{"anyOf": [{"type": T}, {"type": "null"}], "default": null}` becomes
      `{"type": [T, "null"]}` (the same JSON Schema; the default of an argument left out is null either way; the
      long form was an eighth of the tool schemas);
    - `"additionalProperties": true` goes: it is JSON Schema's default (an open object is open without it);
    - a `title` pydantic derived from the name it stands under (`chart_type` → "Chart Type", a model's own
      class name under `$defs`) goes: an annotation that repeats the key, with no bearing on validation. A title
      written by hand stays."""
    return _compact_schema(node, None)


def _compact_schema(node: Any, derived_title: str | None) -> Any:
    if isinstance(node, list):
        return [_compact_schema(v, None) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k in ("properties", "$defs") and isinstance(v, dict):
            out[k] = {name: _compact_schema(sub, _auto_title(name, k)) for name, sub in v.items()}
        elif (k == "additionalProperties" and v is True) or (k == "title" and v == derived_title):
            continue
        else:
            out[k] = _compact_schema(v, None)
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


def _auto_title(name: str, under: str) -> str:
    """The title pydantic gives a field called `name` (under "properties") or a model class (under "$defs")."""
    return name if under == "$defs" else name.replace("_", " ").title()
