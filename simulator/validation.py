"""Validation of widgets.json and apps.json submitted through manage_backends, as the front end checks them.

Errors reject the whole payload; warnings are accepted and stored on the backend (graders can require none).
Messages name the widget or app and the field, so an agent can repair its submission.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

from .grid import GRID_COLUMNS, Rect, overlaps
from .slug import slugify

WIDGET_TYPES = frozenset(
    {
        "advanced_charting",
        "chart",
        "chart-highcharts",
        "chart-vegalite",
        "file_viewer",
        "html",
        "iframe",
        "live_grid",
        "markdown",
        "metric",
        "multi_file_viewer",
        "newsfeed",
        "note",
        "omni",
        "pdf",
        "table",
        "table_ssrm",
        "ssrm_advanced",
        "youtube",
        "ssrm_table",
    }
)
PARAM_TYPES = frozenset({"text", "date", "ticker", "number", "boolean", "endpoint", "button", "tabs", "form"})
CELL_DATA_TYPES = frozenset({"text", "number", "boolean", "date", "dateString", "object"})
RENDER_FNS = frozenset(
    {
        "greenRed",
        "titleCase",
        "hoverCard",
        "cellOnClick",
        "columnColor",
        "showCellChange",
        "rowColor",
    }
)
KNOWN_WIDGET_KEYS = frozenset(
    {
        "name",
        "description",
        "endpoint",
        "type",
        "defaultViz",
        "category",
        "subCategory",
        "searchCategory",
        "gridData",
        "params",
        "data",
        "source",
        "staleTime",
        "refetchInterval",
        "dataUpdateDisplay",
        "runButton",
        "raw",
        "wsEndpoint",
        "imgUrl",
        "widgetId",
        "mcp_tool",
        "paramsGroups",
    }
)
KNOWN_APP_KEYS = frozenset(
    {
        "name",
        "description",
        "tabs",
        "groups",
        "prompts",
        "template_id",
        "templateId",
        "img",
        "img_dark",
        "img_light",
        "allowCustomization",
        "id",
        "type",
    }
)
GROUP_TYPES = frozenset({"ticker", "endpointParam", "param"})
_CRON = re.compile(r"^\S+(\s+\S+){4}$")


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self, prefix: str) -> str:
        shown = " | ".join(self.errors[:3])
        more = f" (+{len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
        return f"{prefix}: {shown}{more}"


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def validate_widgets(widgets: Any) -> tuple[dict[str, Any], Report]:
    """Check a widgets.json payload; return the normalised definitions and the report."""
    report = Report()
    if isinstance(widgets, list):
        report.errors.append(
            "[widgets.json]: Invalid format. Expected an object map of widget_id -> definition, "
            'e.g. {"my_widget": {"name": ..., "description": ..., "endpoint": ...}}; received an array.'
        )
        return {}, report
    if not isinstance(widgets, dict):
        report.errors.append("[widgets.json]: Invalid format. Expected an object map.")
        return {}, report
    if isinstance(widgets.get("name"), str) and isinstance(widgets.get("endpoint"), str):
        report.errors.append(
            "[widgets.json]: Invalid format. This looks like a single widget definition; wrap it in an object "
            "keyed by its widget id."
        )
        return {}, report
    normalised: dict[str, Any] = {}
    for wid, definition in widgets.items():
        where = f"[widgets.json] {wid}"
        if not isinstance(wid, str) or not wid.strip():
            report.errors.append("[widgets.json]: widget ids must be non-empty strings.")
            continue
        if not isinstance(definition, dict):
            report.errors.append(f"{where}: definition must be an object.")
            continue
        for key in ("name", "description", "endpoint"):
            value = definition.get(key)
            if not isinstance(value, str) or not value.strip():
                report.errors.append(f"{where}: '{key}' is required and must be a non-empty string.")
        kind = definition.get("type", definition.get("defaultViz"))
        if kind is not None and kind not in WIDGET_TYPES:
            report.errors.append(f"{where}: type '{kind}' is not one of {', '.join(sorted(WIDGET_TYPES))}.")
        grid = definition.get("gridData")
        if grid is not None:
            if not isinstance(grid, dict) or not _is_num(grid.get("w")) or not _is_num(grid.get("h")):
                report.errors.append(f"{where}: gridData must be an object with numeric w and h.")
            else:
                if not 1 <= grid["w"] <= GRID_COLUMNS:
                    report.errors.append(f"{where}: gridData.w must be between 1 and {GRID_COLUMNS}.")
                if grid["h"] < 1:
                    report.errors.append(f"{where}: gridData.h must be at least 1.")
        stale = definition.get("staleTime")
        if stale is not None and (not _is_num(stale) or stale < 1000):
            report.errors.append(f"{where}: staleTime must be a number of milliseconds, at least 1000.")
        refetch = definition.get("refetchInterval")
        if (
            refetch is not None
            and refetch is not False
            and not _is_num(refetch)
            and not (isinstance(refetch, str) and _CRON.match(refetch))
        ):
            report.errors.append(
                f"{where}: refetchInterval must be a number, a 5-field cron string, or false."
            )
        display = definition.get("dataUpdateDisplay")
        if display is not None and not (isinstance(display, str) and _CRON.match(display)):
            report.errors.append(f"{where}: dataUpdateDisplay must be a 5-field cron string.")
        _validate_params(where, definition.get("params"), report)
        _validate_data(where, definition.get("data"), report)
        if kind == "multi_file_viewer" and not _has_file_selector(definition.get("params")):
            report.errors.append(
                f"{where}: multi_file_viewer needs an endpoint param with the fileSelector role."
            )
        if kind == "live_grid" and not definition.get("wsEndpoint"):
            report.warnings.append(f"{where}: live_grid without wsEndpoint will not stream updates.")
        for key in definition:
            if key not in KNOWN_WIDGET_KEYS:
                report.warnings.append(f"{where}: unknown key '{key}'.")
        item = dict(definition)
        item["type"] = kind if isinstance(kind, str) and kind else "table"
        if isinstance(grid, dict):
            item["gridData"] = {k: grid[k] for k in ("w", "h") if k in grid}
        normalised[wid] = item
    return normalised, report


def _has_file_selector(params: Any) -> bool:
    for p in params if isinstance(params, list) else []:
        if isinstance(p, dict) and p.get("type") == "endpoint" and "fileSelector" in (p.get("roles") or []):
            return True
    return False


def _validate_params(where: str, params: Any, report: Report) -> None:
    if params is None:
        return
    if not isinstance(params, list):
        report.errors.append(f"{where}: params must be an array.")
        return
    seen: set[str] = set()
    flat: list[dict[str, Any]] = []
    for item in params:
        if isinstance(item, list):
            flat.extend(p for p in item if isinstance(p, dict))
            if not all(isinstance(p, dict) for p in item):
                report.errors.append(f"{where}: params rows must contain objects.")
        elif isinstance(item, dict):
            flat.append(item)
        else:
            report.errors.append(f"{where}: params items must be objects or rows of objects.")
    names = {p.get("paramName") for p in flat}
    for p in flat:
        name = p.get("paramName")
        pwhere = f"{where} param '{name}'"
        if not isinstance(name, str) or not name:
            report.errors.append(f"{where}: every param needs a paramName.")
            continue
        if name in seen:
            report.errors.append(f"{pwhere}: paramName must be unique.")
        seen.add(name)
        ptype = p.get("type", "text")
        if ptype not in PARAM_TYPES:
            report.errors.append(f"{pwhere}: type '{ptype}' is not one of {', '.join(sorted(PARAM_TYPES))}.")
        if p.get("multiple") and ptype != "text":
            report.errors.append(f"{pwhere}: 'multiple' is allowed only with type text.")
        options = p.get("options")
        if options is not None and (
            not isinstance(options, list) or not all(isinstance(o, dict) and "value" in o for o in options)
        ):
            report.errors.append(f"{pwhere}: options must be an array of {{label, value}} objects.")
        if p.get("optionsEndpoint") is not None and not isinstance(p.get("optionsEndpoint"), str):
            report.errors.append(f"{pwhere}: optionsEndpoint must be a string.")
        opt_params = p.get("optionsParams")
        if opt_params is not None:
            if not isinstance(opt_params, dict):
                report.errors.append(f"{pwhere}: optionsParams must be an object.")
            else:
                for value in opt_params.values():
                    if isinstance(value, str) and value.startswith("$") and value[1:] not in names:
                        report.warnings.append(
                            f"{pwhere}: optionsParams refers to unknown param '{value[1:]}'."
                        )
        roles = p.get("roles")
        if roles is not None:
            if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
                report.errors.append(f"{pwhere}: roles must be an array of strings.")
            elif roles.count("fileSelector") > 1:
                report.errors.append(f"{pwhere}: at most one fileSelector role.")
        style = p.get("style")
        if isinstance(style, dict) and "popupWidth" in style:
            width = style["popupWidth"]
            if not _is_num(width) or not 100 <= width <= 1000:
                report.errors.append(f"{pwhere}: style.popupWidth must be between 100 and 1000.")
        if ptype == "form":
            if not isinstance(p.get("inputParams"), list):
                report.errors.append(f"{pwhere}: a form param needs an inputParams list.")
            if not isinstance(p.get("endpoint"), str):
                report.errors.append(f"{pwhere}: a form param needs an endpoint.")
            method = p.get("method")
            if method is not None and method not in ("POST", "PUT"):
                report.errors.append(f"{pwhere}: form method must be POST or PUT.")
        if ptype == "number":
            for bound in ("min", "max"):
                if bound in p and not _is_num(p[bound]):
                    report.errors.append(f"{pwhere}: {bound} must be numeric.")


def _validate_data(where: str, data: Any, report: Report) -> None:
    if data is None:
        return
    if not isinstance(data, dict):
        report.errors.append(f"{where}: data must be an object.")
        return
    if "dataKey" in data and not isinstance(data["dataKey"], str):
        report.errors.append(f"{where}: data.dataKey must be a string.")
    table = data.get("table")
    if table is None:
        return
    if not isinstance(table, dict):
        report.errors.append(f"{where}: data.table must be an object.")
        return
    columns = table.get("columnsDefs")
    if columns is None:
        return
    if not isinstance(columns, list):
        report.errors.append(f"{where}: data.table.columnsDefs must be an array.")
        return
    for i, col in enumerate(columns):
        cwhere = f"{where} column {i}"
        if not isinstance(col, dict) or not isinstance(col.get("field"), str):
            report.errors.append(f"{cwhere}: needs a string field.")
            continue
        if not isinstance(col.get("headerName", col["field"]), str):
            report.errors.append(f"{cwhere}: headerName must be a string.")
        if "cellDataType" in col and col["cellDataType"] not in CELL_DATA_TYPES:
            report.errors.append(f"{cwhere}: cellDataType '{col['cellDataType']}' is not supported.")
        places = col.get("decimalPlaces")
        if places is not None and (not isinstance(places, int) or not 0 <= places <= 6):
            report.errors.append(f"{cwhere}: decimalPlaces must be an integer from 0 to 6.")
        render = col.get("renderFn")
        if render is not None:
            fns = render if isinstance(render, list) else str(render).split(",")
            for fn in fns:
                if str(fn).strip() not in RENDER_FNS:
                    report.errors.append(f"{cwhere}: renderFn '{str(fn).strip()}' is not supported.")
        if "pinned" in col and col["pinned"] not in ("left", "right", None):
            report.errors.append(f"{cwhere}: pinned must be left or right.")


def normalise_apps(apps: Any) -> tuple[list[Any] | None, str | None]:
    """apps.json may be null (no apps), one app object, or a list."""
    if apps is None:
        return [], None
    if isinstance(apps, dict):
        return [apps], None
    if isinstance(apps, list):
        return list(apps), None
    return None, "[apps.json]: Invalid format. Expected an array of apps."


def validate_apps(apps: Any, widget_ids: set[str]) -> tuple[list[dict[str, Any]], Report]:
    report = Report()
    items, problem = normalise_apps(apps)
    if problem or items is None:
        report.errors.append(problem or "[apps.json]: Invalid format.")
        return [], report
    normalised: list[dict[str, Any]] = []
    template_ids: set[str] = set()
    for index, app in enumerate(items):
        where = f"[apps.json] app {index}"
        if not isinstance(app, dict):
            report.errors.append(f"{where}: must be an object.")
            continue
        name = app.get("name")
        if not isinstance(name, str) or not name.strip():
            report.errors.append(f"{where}: name is required and must be a non-empty string.")
        else:
            where = f"[apps.json] '{name}'"
        tabs = app.get("tabs")
        if not isinstance(tabs, dict) or not tabs:
            report.errors.append(f"{where}: tabs must be a non-empty object keyed by tab id.")
            tabs = {}
        for key, tab in tabs.items():
            twhere = f"{where} tab '{key}'"
            if not isinstance(tab, dict):
                report.errors.append(f"{twhere}: must be an object with id, name and layout.")
                continue
            if not isinstance(tab.get("id"), str):
                report.errors.append(f"{twhere}: id must be a string.")
            if not isinstance(tab.get("name"), str):
                report.errors.append(f"{twhere}: name must be a string.")
            layout = tab.get("layout")
            if not isinstance(layout, list):
                report.errors.append(f"{twhere}: layout must be an array.")
                continue
            rects: list[tuple[str, Rect]] = []
            for j, item in enumerate(layout):
                iwhere = f"{twhere} layout[{j}]"
                if not isinstance(item, dict):
                    report.errors.append(f"{iwhere}: must be an object.")
                    continue
                ref = item.get("i")
                if not isinstance(ref, str) or not ref:
                    report.errors.append(f"{iwhere}: 'i' must be the non-empty id of a widget.")
                    continue
                geometry = [item.get(k) for k in ("x", "y", "w", "h")]
                if not all(_is_num(v) for v in geometry):
                    report.errors.append(f"{iwhere}: x, y, w and h must be numbers.")
                    continue
                if ref != "navigation_bar" and ref not in widget_ids:
                    report.warnings.append(f"{iwhere}: 'i' refers to unknown widget '{ref}'.")
                rect = Rect(*(float(cast(float, v)) for v in geometry))  # all numbers: checked above
                if rect.w <= 0 or rect.h <= 0 or rect.x < 0 or rect.y < 0:
                    report.warnings.append(f"{iwhere}: non-positive geometry.")
                if rect.x + rect.w > GRID_COLUMNS:
                    report.warnings.append(f"{iwhere}: x + w exceeds the {GRID_COLUMNS}-column grid.")
                for other_ref, other in rects:
                    if overlaps(rect, other):
                        report.warnings.append(f"{iwhere}: '{ref}' overlaps '{other_ref}'.")
                rects.append((ref, rect))
        groups = app.get("groups")
        if groups is not None:
            if not isinstance(groups, list) or not all(
                isinstance(g, dict) and isinstance(g.get("name"), str) and isinstance(g.get("type"), str)
                for g in groups
            ):
                report.errors.append(f"{where}: groups must be an array of objects with a name and a type.")
            else:
                for g in groups:
                    if g["type"] not in GROUP_TYPES:
                        report.warnings.append(
                            f"{where} group '{g['name']}': type '{g['type']}' is not standard."
                        )
                    for wid in g.get("widgetIds") or []:
                        if wid not in widget_ids:
                            report.warnings.append(f"{where} group '{g['name']}': unknown widget '{wid}'.")
        prompts = app.get("prompts")
        if prompts is not None and (
            not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts)
        ):
            report.errors.append(f"{where}: prompts must be an array of strings.")
        for key in app:
            if key not in KNOWN_APP_KEYS:
                report.warnings.append(f"{where}: unknown key '{key}'.")
        item = dict(app)
        template = app.get("template_id") or app.get("templateId") or slugify(str(name or ""), "app")
        template = str(template)
        if template in template_ids:
            template = f"{template}-{index}"
        template_ids.add(template)
        item["template_id"] = template
        normalised.append(item)
    return normalised, report
