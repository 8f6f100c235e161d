"""Integrity checks of a world, run by `taskforge world check` before any task is authored on it.

Each problem names the file and the item so the person who wrote the world can fix it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SetupError
from .grid import GRID_COLUMNS, Rect, overlaps
from .params import value_allowed
from .setup import Setup
from .workspace import Workspace
from .world import World


@dataclass(frozen=True)
class Problem:
    """One finding. Errors break tasks built on the world; warnings are defects the product tolerates (a
    default outside its options is still served), reported so a world author can decide."""

    file: str
    item: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.severity}: {self.file}: {self.item}: {self.message}"


def _grid_problems(file: str, item: str, rects: list[tuple[str, Rect]]) -> list[Problem]:
    out = []
    for i, (ref, r) in enumerate(rects):
        if r.x < 0 or r.y < 0 or r.w <= 0 or r.h <= 0 or r.x + r.w > GRID_COLUMNS:
            out.append(
                Problem(
                    file,
                    f"{item} '{ref}'",
                    f"layout x={r.x} y={r.y} w={r.w} h={r.h} is outside the {GRID_COLUMNS}-column grid",
                )
            )
        for other_ref, other in rects[:i]:
            if overlaps(r, other):
                out.append(Problem(file, f"{item} '{ref}'", f"overlaps '{other_ref}'"))
    return out


def check_world(world: World) -> list[Problem]:
    problems: list[Problem] = []
    for fixture in world.backends.values():
        catalog = fixture.catalog
        for wid, wdef in catalog.widgets.items():
            for declared in wdef.params:
                default = declared.get("value")
                if default is not None and declared.get("options") and not value_allowed(declared, default):
                    problems.append(
                        Problem(
                            fixture.file,
                            f"widgets.{wid}.params.{declared.get('paramName')}",
                            f"default {default!r} is not among its options",
                            "warning",
                        )
                    )
        for i, app in enumerate(catalog.apps):
            where = f"apps[{i}] '{app.get('name')}'"
            for key, tab in (app.get("tabs") or {}).items():
                if not isinstance(tab, dict):
                    problems.append(Problem(fixture.file, f"{where}.tabs.{key}", "tab must be an object"))
                    continue
                rects = []
                for j, item in enumerate(tab.get("layout") or []):
                    ref = item.get("i") if isinstance(item, dict) else None
                    if ref == "navigation_bar":
                        continue
                    if ref not in catalog.widgets:
                        problems.append(
                            Problem(
                                fixture.file,
                                f"{where}.tabs.{key}.layout[{j}]",
                                f"references unknown widget '{ref}'",
                            )
                        )
                        continue
                    try:
                        rects.append((str(ref), Rect(*(float(item[k]) for k in ("x", "y", "w", "h")))))
                    except (KeyError, TypeError, ValueError):
                        problems.append(
                            Problem(
                                fixture.file,
                                f"{where}.tabs.{key}.layout[{j}]",
                                "x, y, w and h must be numbers",
                            )
                        )
                        continue
                    params = (item.get("state") or {}).get("params") or {}
                    definition = catalog.widgets[ref]
                    for name, value in params.items():
                        param = definition.param(name)
                        if param is None:
                            problems.append(
                                Problem(
                                    fixture.file,
                                    f"{where}.tabs.{key}.layout[{j}]",
                                    f"param '{name}' is not declared by '{ref}'",
                                )
                            )
                        elif not value_allowed(param, value):
                            problems.append(
                                Problem(
                                    fixture.file,
                                    f"{where}.tabs.{key}.layout[{j}]",
                                    f"param {name}={value!r} is not among its options",
                                )
                            )
                problems += _grid_problems(fixture.file, f"{where}.tabs.{key}", rects)

    for slug, baseline in world.baselines.items():
        file = baseline.file or f"world.json baselines.{slug}"
        try:
            ws = Workspace.start(world, Setup(workspace_baseline=slug))
        except SetupError as exc:
            problems.append(Problem(file, exc.field, exc.message))
            continue
        for dash in ws.dashboards.values():
            for widget in dash.widgets:
                if widget.generated:
                    continue
                conn = ws._origin_or_none(widget.origin)
                placed_def = conn.catalog.widgets.get(widget.widget_id) if conn else None
                for name, value in widget.data_args.items():
                    param = placed_def.param(name) if placed_def else None
                    if param is not None and not value_allowed(param, value):
                        problems.append(
                            Problem(
                                file,
                                f"dashboard '{dash.name}' widget '{widget.uuid}'",
                                f"param {name}={value!r} is not among its options",
                            )
                        )
            for tab in {w.tab_id for w in dash.widgets}:
                rects = [(w.uuid, w.rect) for w in dash.widgets if w.tab_id == tab]
                problems += _grid_problems(file, f"dashboard '{dash.name}' tab '{tab}'", rects)

    for skill in world.skills.values():
        if skill.slug and skill.file and not skill.content.strip():
            problems.append(Problem(skill.file, "content", "is empty"))

    texts = world.all_text()
    lowered = [(where, text.casefold()) for where, text in texts]
    sources = [(s.file, s.planted) for s in world.skills.values()]
    sources += [(r.file, r.planted) for r in world.resources.values()]
    sources += [(p.file, p.planted) for p in world.prompts.values()]
    for file, planted in sources:
        for item in planted:
            phrase = item.phrase.casefold()
            holders = [where for where, text in lowered if phrase in text]
            if file not in holders:
                problems.append(Problem(file, "planted", f"'{item.phrase}' does not occur in its own text"))
            others = [h for h in holders if h != file]
            if others:
                problems.append(
                    Problem(file, "planted", f"'{item.phrase}' also occurs in {', '.join(others[:3])}")
                )
    return problems
