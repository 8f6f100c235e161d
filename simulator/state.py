"""Episode state: dashboards, their tabs and widgets, custom backends.

Dashboards present when an episode starts are shared, frozen objects (the baseline is built once per world);
the first write to one clones it (copy on write). Starting an episode therefore copies nothing, and the
initial composition of every dashboard stays available for the preservation check for free.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from .grid import Rect

_LAYOUT_EXTRAS = ("min_w", "min_h", "max_w", "max_h")


def _num(value: float) -> float | int:
    """Layout numbers read back as ints when whole, so 20.0 is shown as 20."""
    return int(value) if float(value).is_integer() else value


@dataclass(slots=True)
class Widget:
    uuid: str
    widget_id: str
    origin: str
    name: str
    type: str
    tab_id: str
    x: float
    y: float
    w: float
    h: float
    data_args: dict[str, Any] = field(default_factory=dict)
    ui_args: dict[str, Any] = field(default_factory=dict)
    generated: bool = False
    generated_data: Any = None
    chart_params: dict[str, Any] | None = None
    description: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def rect(self) -> Rect:
        return Rect(self.x, self.y, self.w, self.h)

    def clone(self) -> Widget:
        return Widget(
            self.uuid,
            self.widget_id,
            self.origin,
            self.name,
            self.type,
            self.tab_id,
            self.x,
            self.y,
            self.w,
            self.h,
            dict(self.data_args),
            dict(self.ui_args),
            self.generated,
            self.generated_data,
            self.chart_params,
            self.description,
            dict(self.extras),
        )

    def layout(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "widget_uuid": self.uuid,
            "widget_id": self.widget_id,
            "origin": self.origin,
            "tab_id": self.tab_id,
            "x": _num(self.x),
            "y": _num(self.y),
            "w": _num(self.w),
            "h": _num(self.h),
        }
        for key in _LAYOUT_EXTRAS:
            if self.extras.get(key) is not None:
                out[key] = self.extras[key]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "widget_uuid": self.uuid,
            "widget_id": self.widget_id,
            "origin": self.origin,
            "name": self.name,
            "type": self.type,
            "data_args": dict(self.data_args),
            "ui_args": dict(self.ui_args),
            "generated": self.generated,
            "generated_data": self.generated_data,
            "chart_params": self.chart_params,
            "description": self.description,
            "layout": self.layout(),
        }


@dataclass(slots=True)
class Tab:
    id: str
    name: str


@dataclass(slots=True)
class Dashboard:
    id: str
    name: str
    tabs: list[Tab]
    widgets: list[Widget]
    active_tab: str = ""
    navigation_bar: bool = False
    frozen: bool = False
    _digest: str | None = None

    def clone(self) -> Dashboard:
        return Dashboard(
            self.id,
            self.name,
            [Tab(t.id, t.name) for t in self.tabs],
            [w.clone() for w in self.widgets],
            self.active_tab,
            self.navigation_bar,
        )

    def tab(self, tab_id: str) -> Tab | None:
        for t in self.tabs:
            if t.id == tab_id:
                return t
        return None

    def tab_ids(self) -> list[str]:
        return [t.id for t in self.tabs]

    @property
    def floor(self) -> float:
        """A navigation bar takes the top two grid rows of every tab."""
        return 2.0 if self.navigation_bar else 0.0

    def on_tab(self, tab_id: str, *, exclude: str | None = None) -> list[Widget]:
        return [w for w in self.widgets if w.tab_id == tab_id and w.uuid != exclude]

    def composition(self) -> dict[str, Any]:
        widgets = [w.to_dict() for w in self.widgets]
        tabs = []
        for t in self.tabs:
            tabs.append(
                {
                    "id": t.id,
                    "name": t.name,
                    "layout": [w["layout"] for w in widgets if w["layout"]["tab_id"] == t.id],
                }
            )
        return {
            "dashboard_id": self.id,
            "name": self.name,
            "navigation_bar": self.navigation_bar,
            "tabs": tabs,
            "widgets": widgets,
        }

    def digest(self) -> str:
        """Content hash of the composition; cached on frozen dashboards, which never change."""
        if self.frozen and self._digest is not None:
            return self._digest
        payload = self.composition()
        payload["active_tab"] = self.active_tab
        value = stable_hash(payload)
        if self.frozen:
            self._digest = value
        return value


@dataclass(slots=True)
class CustomBackend:
    """A backend the workspace serves that is not a plain world fixture: authored through manage_backends or
    seeded by a task, or a world fixture the agent connected itself ("declared")."""

    id: str
    name: str
    url: str
    widgets_json: Any
    apps_json: Any
    warnings: list[str]
    declared_fixture: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "url": self.url,
            "widgets_json": self.widgets_json,
            "apps_json": self.apps_json,
            "warnings": list(self.warnings),
        }


def stable_hash(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
