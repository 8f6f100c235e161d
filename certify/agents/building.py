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
    # a backend whose name ends in its noun is not called a backend again ("add a Lineage Backend serving …")
    re.compile(rf"\b({_CAP}\s+Backend)\b"),
    re.compile(
        rf"\b(?i:register|registering|stand up|standing up)\s+(?:an?\s+|the\s+)?({_CAP})\s*(?:\(|,)?\s*"
        r"(?:serving|that serves|which serves|with)\b"
    ),
)
_WIDGET = re.compile(rf"\b(?:serving|serves|with)\s+(?:an?|the)\s+({_CAP})\s+({_KINDS})\b")
# a widget whose name ends in its kind is not followed by the kind again ("serving a KPI Lineage Table keyed on
# …"): the name's last word is the kind
_NAMED_KIND = re.compile(
    rf"\b(?:serving|serves|with)\s+(?:an?|the)\s+({_CAP}\s+(?i:{_KINDS}))\b(?!\s+(?:{_KINDS})\b)"
)
_APP = (
    re.compile(r"\bpublish(?:es|ing)?\s+(?:the\s+|an?\s+)?((?:[A-Z][\w&'’-]*\s+)*?App)\b"),
    re.compile(r"\b((?:[A-Z][\w&'’-]*\s+)+App)\b"),
)
_TAB = re.compile(rf"\bon\s+(?:its|a|an|the)\s+({_CAP})\s+tab\b")
_PLACE = re.compile(r"\bthe built\b", re.I)
# "a Pulled Order Tracker table keyed on status": the built table takes that parameter of the widgets worked on.
_KEYED = re.compile(
    r"\bkeyed (?:on|by) (?:the |its )?([a-z][a-z ]{1,30}?)(?=[,.;:)]|\s+(?:and|like|as|so|that)\b)", re.I
)
# "on a tab titled like the board's": the app's tab takes the title the dashboard's tab ends up with.
_TAB_LIKE = re.compile(r"\btab (?:titled|named) (?:like|after|as) the (?:board|dashboard)(?:'s)?\b", re.I)


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
    keyed: str | None = None
    tab_like_board: bool = False

    @property
    def widget_id(self) -> str:
        return snake(self.widget)

    @property
    def tab_id(self) -> str:
        return snake(self.tab or "main")

    def widgets_json(self, param: dict[str, Any] | None = None) -> dict[str, Any]:
        """The catalog entry of the built widget; `param` is a parameter it takes (declared as the widget it
        is keyed like declares it)."""
        entry: dict[str, Any] = {
            "name": self.widget,
            "description": f"{self.widget}, served by {self.backend}.",
            "endpoint": "/" + self.widget_id.replace("_", "-"),
            "type": self.widget_type,
            "gridData": {"w": 40, "h": 10},
        }
        if param is not None:
            keep = ("paramName", "type", "value", "label", "description", "options")
            entry["params"] = [{k: param[k] for k in keep if k in param}]
        return {self.widget_id: entry}

    def apps_json(self, tab: str | None = None) -> list[dict[str, Any]]:
        """The app publishing the built widget on its tab (`tab` overrides the tab's title)."""
        if self.app is None:
            return []
        name = tab or self.tab or "Main"
        tab_id = snake(name)
        layout = [{"i": self.widget_id, "x": 0, "y": 0, "w": 40, "h": 10}]
        return [
            {
                "name": self.app,
                "description": f"{self.app}: {self.widget} on its {name} tab.",
                "tabs": {tab_id: {"id": tab_id, "name": name, "layout": layout}},
            }
        ]


def build_spec(prompt: str) -> BuildSpec | None:
    """The build a prompt asks for, or None when it names no backend serving a widget."""
    backend = next((m.group(1) for p in _BACKEND for m in [p.search(prompt)] if m), None)
    widget = _WIDGET.search(prompt) or _NAMED_KIND.search(prompt)
    if backend is None or widget is None:
        return None
    kind = widget.group(2) if widget.re is _WIDGET else widget.group(1).split()[-1]
    app = next((m.group(1).strip() for p in _APP for m in [p.search(prompt)] if m), None)
    tab = _TAB.search(prompt)
    keyed = _KEYED.search(prompt)
    return BuildSpec(
        backend=backend.strip(),
        widget=widget.group(1).strip(),
        widget_type=kind.lower(),
        app=app,
        tab=tab.group(1).strip() if tab else None,
        place=bool(_PLACE.search(prompt)),
        keyed=keyed.group(1).strip().lower() if keyed else None,
        tab_like_board=bool(_TAB_LIKE.search(prompt)),
    )
