"""Baselines: the all-apps rule and the lived-in / onboarding initial states."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._catalog import CatalogBuilder
from ._common import SpecError, check_keys, pack_layout, snake

_NOTE_HEIGHT = 8


@dataclass(frozen=True)
class PlacedApp:
    origin: str
    builder: CatalogBuilder
    app: Mapping[str, Any]


def home_dashboard() -> dict[str, Any]:
    return {"name": "Home", "activate": True, "tabs": [{"id": "", "name": ""}], "widgets": []}


def app_dashboard(placed: PlacedApp) -> dict[str, Any]:
    """The app opened as a dashboard; tabs in id order, as they read from the sorted backend file."""
    tabs, widgets = [], []
    for tab_id, tab in sorted(placed.app["tabs"].items()):
        tabs.append({"id": tab_id, "name": tab["name"]})
        for item in tab["layout"]:
            widgets.append(
                {
                    "origin": placed.origin,
                    "widget_id": item["i"],
                    "tab_id": tab_id,
                    "data_args": dict(item["state"]["params"]),
                    "layout": {k: item[k] for k in ("x", "y", "w", "h")},
                }
            )
    return {"name": placed.app["name"], "activate": False, "tabs": tabs, "widgets": widgets}


def _resolve(ref: str, apps: Mapping[str, PlacedApp]) -> tuple[PlacedApp, str]:
    parts = [p.strip() for p in ref.split(" / ")]
    if len(parts) != 3 or parts[0] not in apps:
        raise SpecError(f"desk widget ref {ref!r} must be 'App / Tab / Widget' naming an existing app")
    placed = apps[parts[0]]
    for tab in placed.app["tabs"].values():
        if tab["name"] != parts[1]:
            continue
        for item in tab["layout"]:
            if placed.builder.backend.widgets[item["i"]]["name"] == parts[2]:
                return placed, item["i"]
    raise SpecError(f"desk widget ref {ref!r}: no such tab or widget in the app")


def desk_dashboard(desk: Mapping[str, Any], apps: Mapping[str, PlacedApp]) -> dict[str, Any]:
    check_keys(desk, {"name", "tabs"}, {"name", "tabs"}, f"desk {desk.get('name')}")
    tabs, widgets, notes = [], [], []
    for tab in desk["tabs"]:
        check_keys(tab, {"name", "id", "widgets", "notes"}, {"name", "widgets"}, f"desk {desk['name']} tab")
        tab_id = tab.get("id") or snake(tab["name"])
        tabs.append({"id": tab_id, "name": tab["name"]})
        entries = []
        for entry in tab["widgets"]:
            check_keys(entry, {"ref", "args", "w"}, {"ref"}, f"desk {desk['name']} widget")
            placed, wid = _resolve(entry["ref"], apps)
            height = placed.builder.backend.widgets[wid]["gridData"]["h"]
            entries.append((placed, wid, entry, height))
        tab_notes = tab.get("notes", [])
        if not 1 <= len(entries) + len(tab_notes) <= 6:
            raise SpecError(f"desk {desk['name']}/{tab['name']}: a tab holds 1-6 widgets and notes")
        boxes = pack_layout(
            [(wid, e.get("w"), h) for _, wid, e, h in entries]
            + [(n["name"], None, _NOTE_HEIGHT) for n in tab_notes]
        )
        for (placed, wid, entry, _h), box in zip(entries, boxes, strict=False):
            widgets.append(
                {
                    "origin": placed.origin,
                    "widget_id": wid,
                    "tab_id": tab_id,
                    "data_args": placed.builder.state_params(wid, entry.get("args", {})),
                    "layout": box,
                }
            )
        for note, box in zip(tab_notes, boxes[len(entries) :], strict=True):
            notes.append(
                {
                    "widget_type": "note",
                    "name": note["name"],
                    "data": note["text"],
                    "tab_id": tab_id,
                    "layout": box,
                }
            )
    out: dict[str, Any] = {"name": desk["name"], "activate": False, "tabs": tabs, "widgets": widgets}
    if notes:
        out["generated_widgets"] = notes
    return out


def baseline_document(
    spec: Mapping[str, Any],
    desks: Mapping[str, Mapping[str, Any]],
    enterprise_apps: Sequence[str],
    apps: Mapping[str, PlacedApp],
) -> dict[str, Any]:
    names = list(enterprise_apps) if spec["apps"] == "all" else list(spec["apps"])
    dashboards = [home_dashboard()]
    for name in names:
        if name not in apps:
            raise SpecError(f"baseline {spec['slug']}: unknown app {name!r}")
        dashboards.append(app_dashboard(apps[name]))
    for name in spec["desks"]:
        if name not in desks:
            raise SpecError(f"baseline {spec['slug']}: unknown desk {name!r}")
        dashboards.append(desk_dashboard(desks[name], apps))
    seen = [d["name"] for d in dashboards]
    if len(set(seen)) != len(seen):
        raise SpecError(f"baseline {spec['slug']}: dashboard names repeat")
    return {
        "initial_state": {"dashboards": dashboards},
        "source": {"description": spec["description"], "generator": "python -m simulator.worldgen"},
    }
