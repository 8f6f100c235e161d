"""Widget definitions, apps and baked rows of a backend, built from the spec."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.validation import WIDGET_TYPES

from ._common import GRID_WIDTH, SpecError, check_keys, kebab, pack_layout, snake
from ._rows import Column, Profile, generate_rows, header_for, metric_item, parse_column

RowBuilder = Callable[[str, Mapping[str, Any], Sequence[tuple[str, Sequence[Any]]]], list[dict[str, Any]]]
"""(gen name, widget spec, key params) -> rows, for widgets whose rows come from a dedicated model."""

_DEFAULT_HEIGHT = {"metric": 5, "markdown": 10, "note": 8}
_DEFAULT_WIDTH = {"metric": 40}
_PARAM_TYPES = frozenset({"text", "date", "ticker", "number", "boolean"})
_PARAM_KEYS = {"param", "label", "type", "options", "default", "description"}
_WIDGET_KEYS = {"n", "t", "p", "k", "c", "m", "d", "w", "h", "s", "id", "gen", "rows"}
_APP_KEYS = {"name", "slug", "persona", "description", "prompts", "tabs"}
_TAB_KEYS = {"name", "id", "args", "widgets"}


@dataclass(frozen=True)
class ParamSpec:
    key: str
    name: str
    type: str
    label: str
    description: str
    default: Any
    options: tuple[dict[str, Any], ...]

    @property
    def values(self) -> list[Any]:
        return [o["value"] for o in self.options]

    def definition(self, default: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "paramName": self.name,
            "type": self.type,
            "value": default,
            "label": self.label,
            "description": self.description,
        }
        if self.options:
            out["options"] = [dict(o) for o in self.options]
        return out


def build_param_library(
    spec_params: Mapping[str, Any], lists: Mapping[str, Sequence[Any]]
) -> dict[str, ParamSpec]:
    library: dict[str, ParamSpec] = {}
    for key, raw in spec_params.items():
        check_keys(raw, _PARAM_KEYS, {"label", "description"}, f"param {key}")
        options_raw = raw.get("options", [])
        if isinstance(options_raw, str):
            if not options_raw.startswith("$") or options_raw[1:] not in lists:
                raise SpecError(f"param {key}: options {options_raw!r} must be a list or $<list name>")
            options_raw = lists[options_raw[1:]]
        options = tuple(o if isinstance(o, dict) else {"label": str(o), "value": o} for o in options_raw)
        ptype = raw.get("type", "text")
        if ptype not in _PARAM_TYPES:
            raise SpecError(f"param {key}: type {ptype!r} is not one of {sorted(_PARAM_TYPES)}")
        default = raw.get("default", options[0]["value"] if options else None)
        spec = ParamSpec(
            key=key,
            name=raw.get("param", key),
            type=ptype,
            label=raw["label"],
            description=raw["description"],
            default=default,
            options=options,
        )
        if options and default not in spec.values:
            raise SpecError(f"param {key}: default {default!r} is not among its options")
        library[key] = spec
    return library


@dataclass
class Backend:
    """One backend's catalog: widgets (without rows), apps, and rows per dataset."""

    widgets: dict[str, dict[str, Any]] = field(default_factory=dict)
    apps: list[dict[str, Any]] = field(default_factory=list)
    rows: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    def document(self, dataset: str, source: Mapping[str, Any]) -> dict[str, Any]:
        widgets = {}
        for wid, definition in self.widgets.items():
            widgets[wid] = {**definition, "data": self.rows[dataset][wid]}
        return {"widgets": widgets, "apps": self.apps, "source": dict(source)}


def _infer_cell_type(values: Sequence[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "boolean"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "number"
    if present and all(isinstance(v, str) and len(v) == 10 and _is_iso_date(v) for v in present):
        return "date"
    return "text"


def _is_iso_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


class CatalogBuilder:
    """Turns the spec's apps (tabs of widget entries) into a Backend for one or more datasets."""

    def __init__(
        self,
        *,
        params: Mapping[str, ParamSpec],
        vocab: Mapping[str, Sequence[Any]],
        profiles: Sequence[Profile],
        row_builder: RowBuilder | None = None,
        tickers: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.tickers = dict(tickers or {})
        self.params = params
        self.vocab = vocab
        self.profiles = profiles
        self.row_builder = row_builder
        self.backend = Backend(rows={p.name: {} for p in profiles})
        self._metric_kinds: dict[str, Column] = {}

    def _param_tokens(self, wid: str, tokens: str) -> list[tuple[ParamSpec, Any]]:
        out = []
        for token in tokens.split():
            key, _, override = token.partition("=")
            if key not in self.params:
                raise SpecError(f"{wid}: unknown param {key!r}")
            spec = self.params[key]
            default: Any = spec.default
            if override:
                default = next((v for v in spec.values if str(v) == override), override)
                if spec.options and default not in spec.values:
                    raise SpecError(f"{wid}: default {override!r} of {key} is not among its options")
            out.append((spec, default))
        names = [s.name for s, _ in out]
        if len(set(names)) != len(names):
            raise SpecError(f"{wid}: a param name is declared twice")
        return out

    def _metric_column(self, kind: str) -> Column:
        if kind not in self._metric_kinds:
            self._metric_kinds[kind] = parse_column(f"value:{kind}", self.vocab)
        return self._metric_kinds[kind]

    def add_widget(
        self, wid: str, entry: Mapping[str, Any], *, category: str, sub_category: str | None = None
    ) -> dict[str, Any]:
        check_keys(entry, _WIDGET_KEYS, {"n", "d"}, f"widget {wid}")
        if wid in self.backend.widgets:
            raise SpecError(f"duplicate widget id {wid}")
        sources = [k for k in ("c", "m", "gen", "rows") if k in entry]
        if len(sources) != 1:
            raise SpecError(f"{wid}: give exactly one of c (columns), m (metric tiles), gen or rows")
        wtype = entry.get("t", "table")
        if wtype not in WIDGET_TYPES:
            raise SpecError(f"{wid}: unknown widget type {wtype!r}")
        params = self._param_tokens(wid, entry.get("p", ""))
        if "k" in entry:
            key_names = entry["k"].split()
            keys = [s for s, _ in params if s.key in key_names]
            if len(keys) != len(key_names):
                raise SpecError(f"{wid}: key params {key_names} must be among its params")
        else:
            keys = [s for s, _ in params if s.options][:2]
        if len(keys) > 2 or any(not s.options for s in keys):
            raise SpecError(f"{wid}: at most two key params, each with options")
        key_params = [(s.name, s.values) for s in keys]
        other_names = {s.name for s, _ in params} - {s.name for s in keys}

        width = entry.get("w", _DEFAULT_WIDTH.get(wtype, 20))
        height = entry.get("h", _DEFAULT_HEIGHT.get(wtype, 12))
        if not 10 <= width <= GRID_WIDTH or height < 4:
            raise SpecError(f"{wid}: gridData must have 10 <= w <= 40 and h >= 4")
        definition: dict[str, Any] = {
            "name": entry["n"],
            "description": entry["d"],
            "category": category,
            "type": wtype,
            "endpoint": f"/{wid}",
            "gridData": {"w": width, "h": height},
            "params": [s.definition(default) for s, default in params],
        }
        if sub_category:
            definition["subCategory"] = sub_category

        for profile in self.profiles:
            rows = self._rows(wid, entry, wtype, key_params, profile)
            for name, values in key_params:
                missing = {str(v) for v in values} - {str(r.get(name)) for r in rows}
                if missing:
                    raise SpecError(f"{wid}: no rows for {name} in {sorted(missing)}")
            self.backend.rows[profile.name][wid] = rows
        sample = self.backend.rows[self.profiles[0].name][wid]
        columns = self._columns(wid, entry, wtype, key_params, sample)
        clash = other_names & {c["field"] for c in columns}
        if clash:
            raise SpecError(
                f"{wid}: columns {sorted(clash)} repeat non-key params; make them key params "
                f"or rename the columns"
            )
        definition["schema_data"] = {"table": {"columnsDefs": columns}}
        self.backend.widgets[wid] = definition
        return definition

    def _columns(
        self,
        wid: str,
        entry: Mapping[str, Any],
        wtype: str,
        key_params: Sequence[tuple[str, Sequence[Any]]],
        rows: Sequence[Mapping[str, Any]],
    ) -> list[dict]:
        key_cols = [
            {"field": name, "headerName": self._param_label(name), "cellDataType": _infer_cell_type(vals)}
            for name, vals in key_params
        ]
        if "rows" in entry or "gen" in entry:
            fields: list[str] = []
            for row in rows:
                fields.extend(f for f in row if f not in fields)
            keyed = {c["field"] for c in key_cols}
            return key_cols + [
                {
                    "field": f,
                    "headerName": header_for(f),
                    "cellDataType": _infer_cell_type([r.get(f) for r in rows]),
                }
                for f in fields
                if f not in keyed
            ]
        if wtype == "metric":
            return [
                *key_cols,
                {"field": "label", "headerName": "Metric", "cellDataType": "text"},
                {"field": "value", "headerName": "Value", "cellDataType": "number"},
                {"field": "delta", "headerName": "Change", "cellDataType": "number"},
            ]
        return key_cols + [parse_column(tok, self.vocab).definition() for tok in entry["c"]]

    def _param_label(self, name: str) -> str:
        return next(s.label for s in self.params.values() if s.name == name)

    def _rows(
        self,
        wid: str,
        entry: Mapping[str, Any],
        wtype: str,
        key_params: Sequence[tuple[str, Sequence[Any]]],
        profile: Profile,
    ) -> list[dict[str, Any]]:
        if "rows" in entry:
            return [dict(r) for r in entry["rows"]]
        if "gen" in entry:
            if self.row_builder is None:
                raise SpecError(f"{wid}: 'gen' needs a row builder for this backend")
            return self.row_builder(entry["gen"], entry, key_params)
        if wtype == "metric":
            items = list(entry["m"])
            if not 1 <= len(items) <= 3:
                raise SpecError(f"{wid}: metric tiles list 1-3 labels")
            for item in items:
                self._metric_column(item.rpartition(":")[2])
            each = ("label", items, metric_item(dict(self._metric_kinds)))
            return generate_rows(
                widget_id=wid,
                widget_name=entry["n"],
                key_params=key_params,
                columns=[],
                profile=profile,
                each=each,
            )
        columns = [parse_column(tok, self.vocab) for tok in entry["c"]]
        sort_by = "date" if wtype == "chart" and any(c.field == "date" for c in columns) else None
        return generate_rows(
            widget_id=wid,
            widget_name=entry["n"],
            key_params=key_params,
            columns=columns,
            profile=profile,
            tickers=self.tickers,
            sort_by=sort_by,
        )

    def add_app(self, app: Mapping[str, Any]) -> dict[str, Any]:
        check_keys(app, _APP_KEYS, {"name", "description", "prompts", "tabs"}, f"app {app.get('name')}")
        app_slug = app.get("slug") or snake(app["name"])
        tabs: dict[str, Any] = {}
        seen_names: set[str] = set()
        for tab in app["tabs"]:
            check_keys(tab, _TAB_KEYS, {"name", "widgets"}, f"{app['name']} tab {tab.get('name')}")
            tab_id = tab.get("id") or snake(tab["name"])
            if tab_id in tabs:
                raise SpecError(f"{app['name']}: duplicate tab id {tab_id}")
            entries = tab["widgets"]
            if not 3 <= len(entries) <= 6:
                raise SpecError(f"{app['name']}/{tab['name']}: a tab holds 3-6 widgets")
            placed = []
            for entry in entries:
                if entry["n"] in seen_names:
                    raise SpecError(f"{app['name']}: widget name {entry['n']!r} is used twice in the app")
                seen_names.add(entry["n"])
                wid = entry.get("id") or f"{app_slug}_{tab_id}_{snake(entry['n'])}"
                definition = self.add_widget(wid, entry, category=app["name"], sub_category=tab["name"])
                placed.append((wid, entry.get("w"), definition["gridData"]["h"], entry))
            boxes = pack_layout([(wid, w, h) for wid, w, h, _ in placed])
            layout = []
            for (wid, _w, _h, entry), box in zip(placed, boxes, strict=True):
                layout.append(
                    {
                        "i": wid,
                        **box,
                        "state": {
                            "params": self.state_params(wid, {**tab.get("args", {}), **entry.get("s", {})})
                        },
                    }
                )
            tabs[tab_id] = {"id": tab_id, "name": tab["name"], "layout": layout}
        out = {
            "name": app["name"],
            "description": app["description"],
            "template_id": kebab(app_slug),
            "allowCustomization": True,
            "groups": [],
            "prompts": list(app["prompts"]),
            "tabs": tabs,
        }
        self.backend.apps.append(out)
        return out

    def state_params(self, wid: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """Every declared param of the widget with its default, overridden where the override is valid."""
        values = {}
        for param in self.backend.widgets[wid]["params"]:
            value = param["value"]
            if param["paramName"] in overrides:
                wanted = overrides[param["paramName"]]
                allowed = [o["value"] for o in param.get("options", [])]
                if allowed and wanted not in allowed:
                    raise SpecError(f"{wid}: {param['paramName']}={wanted!r} is not among its options")
                value = wanted
            values[param["paramName"]] = value
        return values
