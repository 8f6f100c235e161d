"""Checking a story's targets against the catalog: the origins of its backends, did-you-mean hints for a
widget or an option that is not there, `facts.params` names no target declares, and `facts.board`'s
widgets."""

from __future__ import annotations

from typing import Any

from simulator import BackendFixture, WidgetDef, World, option_values, value_allowed

from ..sources import Facts, SourceError, Story
from ..suggest import did_you_mean, listing
from .model import ResolvedTarget


def _origins(world: World, backends: list[str]) -> list[str]:
    return list(dict.fromkeys(f.origin for name in backends if (f := world.backend(name)) is not None))


def _widget_hint(fixture: BackendFixture, name: str, app: str | None) -> str:
    """Did-you-mean over the app's widgets first, then the whole catalog (the widget may sit in another app)."""
    names = [w.name for w in fixture.catalog.widgets.values()]
    if app is not None:
        in_app = fixture.catalog.app_widgets(app)
        hint = did_you_mean(name, [w.name for w in fixture.catalog.widgets.values() if w.widget_id in in_app])
        if hint:
            return hint
    return did_you_mean(name, names)


def _options_hint(param: dict[str, Any], value: Any) -> str:
    options = [str(v) for v in option_values(param)]
    return f"{did_you_mean(str(value), options)} (allowed: {listing(options)})"


def _shared_param_errors(
    file: str, facts: Facts, targets: list[ResolvedTarget], clean: bool
) -> list[SourceError]:
    """facts.params applies to every target without its own params; a name none of them declares is a typo."""
    sharing = [t for t, fact in zip(targets, facts.targets, strict=True) if fact.params is None]
    if not sharing:
        return []
    declared = list(dict.fromkeys(str(p.get("paramName")) for t in sharing for p in t.widget.params))
    errors = [
        SourceError(
            file,
            f"facts.params.{name}",
            f"no target has a parameter '{name}'"
            f"{did_you_mean(name, declared)} (parameters: {listing(declared)})",
        )
        for name in facts.params
        if name not in declared
    ]
    if clean and not errors:
        errors = [
            SourceError(file, "facts.params", f"none of these parameters belongs to '{t.name}'")
            for t in sharing
            if facts.params and not t.params
        ]
    return errors


def _board_errors(
    world: World, story: Story, first: ResolvedTarget, backends: list[str]
) -> list[SourceError]:
    """`facts.board` names catalog widgets of the first target's backend (the board's other widgets)."""
    fixture = world.fixture_of(first.origin, backends)
    if fixture is None or not story.facts.board:
        return []
    names = sorted({w.name for w in fixture.catalog.widgets.values()})
    errors = []
    for i, name in enumerate(story.facts.board):
        if name not in names:
            errors.append(
                SourceError(
                    story.file,
                    f"facts.board[{i}]",
                    f"'{first.origin}' serves no widget named '{name}'{did_you_mean(name, names)}",
                )
            )
        elif name == first.name:
            errors.append(
                SourceError(
                    story.file,
                    f"facts.board[{i}]",
                    f"'{name}' is the first target itself; list the board's other widgets",
                )
            )
    return errors


def listed_fits(
    world: World, target: ResolvedTarget, backends: list[str], keys: tuple[str, ...] | None = None
) -> list[str]:
    """The widget ids of the target's app that take the target's values (of `keys`, all by default), in the
    catalog's listing order (`fitting_listed`)."""
    fixture = world.fixture_of(target.origin, backends)
    if fixture is None:
        return [target.widget_id]
    wanted = tuple(target.params) if keys is None else keys
    return fitting_listed(fixture, target.widget, {k: target.params[k] for k in wanted})


def fitting_listed(fixture: BackendFixture, widget: WidgetDef, values: dict[str, Any]) -> list[str]:
    """The widget ids of `widget`'s app that take every one of `values`, in the catalog's listing order — the
    live product's order, which the authoring cannot draw: a widget that is the first or the last of them is
    what a reader of places (`catalog_first` / `catalog_last`) takes unread. The one home of that rule: check's
    place warning, the Find repair's said values and `world show APP`'s mark all read it."""
    app = widget.definition.get("category")
    return [
        wid
        for wid, d in fixture.catalog.widgets.items()
        if d.definition.get("category") == app
        and all((p := d.param(k)) is not None and value_allowed(p, v) for k, v in values.items())
    ]


def between(fits: list[str], widget_id: str) -> bool:
    """Whether `widget_id` is listed between two of `fits` (neither the first nor the last of them)."""
    return widget_id in fits[1:-1]
