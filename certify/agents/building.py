"""What a request asks to be built — a backend serving a widget, an app publishing it on a tab — read from the
prompt, and the widgets.json / apps.json an agent submits for it (OpenBB's own file conventions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_CAP = r"[A-Z][\w&'’-]*(?:\s+[A-Z][\w&'’-]*)*"
_KINDS = r"table|chart|markdown|metric|note|newsfeed|html"
_BACKEND = (
    re.compile(rf"\b({_CAP})\s+backend\b"),
    re.compile(
        rf"\b(?i:register|registering|stand up|standing up)\s+(?:an?\s+|the\s+)?({_CAP})\s*(?:\(|,)?\s*"
        r"(?:serving|that serves|which serves|with)\b"
    ),
)
_WIDGET = re.compile(rf"\b(?:serving|serves|with)\s+(?:an?|the)\s+({_CAP})\s+({_KINDS})\b")
_APP = (
    re.compile(r"\bpublish(?:es|ing)?\s+(?:the\s+|an?\s+)?((?:[A-Z][\w&'’-]*\s+)*?App)\b"),
    re.compile(r"\b((?:[A-Z][\w&'’-]*\s+)+App)\b"),
)
_TAB = re.compile(rf"\bon\s+(?:its|a|an|the)\s+({_CAP})\s+tab\b")
_PLACE = re.compile(r"\bthe built\b", re.I)


def snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@dataclass(frozen=True)
class BuildSpec:
    backend: str
    widget: str
    widget_type: str
    app: str | None
    tab: str | None
    place: bool

    @property
    def widget_id(self) -> str:
        return snake(self.widget)

    @property
    def tab_id(self) -> str:
        return snake(self.tab or "main")

    def widgets_json(self) -> dict[str, Any]:
        return {
            self.widget_id: {
                "name": self.widget,
                "description": f"{self.widget}, served by {self.backend}.",
                "endpoint": "/" + self.widget_id.replace("_", "-"),
                "type": self.widget_type,
                "gridData": {"w": 40, "h": 10},
            }
        }

    def apps_json(self) -> list[dict[str, Any]]:
        if self.app is None:
            return []
        layout = [{"i": self.widget_id, "x": 0, "y": 0, "w": 40, "h": 10}]
        return [
            {
                "name": self.app,
                "description": f"{self.app}: {self.widget} on its {self.tab or 'Main'} tab.",
                "tabs": {self.tab_id: {"id": self.tab_id, "name": self.tab or "Main", "layout": layout}},
            }
        ]


def build_spec(prompt: str) -> BuildSpec | None:
    """The build a prompt asks for, or None when it names no backend serving a widget."""
    backend = next((m.group(1) for p in _BACKEND for m in [p.search(prompt)] if m), None)
    widget = _WIDGET.search(prompt)
    if backend is None or widget is None:
        return None
    app = next((m.group(1).strip() for p in _APP for m in [p.search(prompt)] if m), None)
    tab = _TAB.search(prompt)
    return BuildSpec(
        backend=backend.strip(),
        widget=widget.group(1).strip(),
        widget_type=widget.group(2).lower(),
        app=app,
        tab=tab.group(1).strip() if tab else None,
        place=bool(_PLACE.search(prompt)),
    )
