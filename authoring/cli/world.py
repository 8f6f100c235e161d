"""`taskforge world list / check / show`: a world's backends, apps, widgets (parameters, options, served rows),
skills, resources and prompts, so a story writer never reads the world's JSON by hand, and its integrity check."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from authoring import render

from .common import console, err, load_world, usage_error
from .options import Json, Strict, WorldDir

app = typer.Typer(
    help="Inspect and check worlds (backends, baselines, skills, resources).", no_args_is_help=True
)


@app.command("list")
def world_list(world: WorldDir = None, as_json: Json = False) -> None:
    """Backends (origin, apps, widgets, widget types), skills, initial states."""
    w = load_world(world)
    backends: list[dict[str, Any]] = []
    for slug, fixture in w.backends.items():
        types = sorted({d.type for d in fixture.catalog.widgets.values()})
        backends.append(
            {
                "slug": slug,
                "origin": fixture.origin,
                "apps": len(fixture.catalog.apps),
                "widgets": len(fixture.catalog.widgets),
                "widget_types": types,
            }
        )
    report = {
        "world": str(w.path),
        "backends": backends,
        "skills": sorted(w.skills),
        "initial_states": sorted(w.baselines),
        "resources": len(w.resources),
        "prompts": len(w.prompts),
    }
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    render.say(console, f"World {w.name} ({w.path})", style="bold")
    table = render.table()
    table.add_column("backend", no_wrap=True)
    table.add_column("origin")
    table.add_column("apps", justify="right", no_wrap=True)
    table.add_column("widgets", justify="right", no_wrap=True)
    for b in backends:
        table.add_row(render.text(b["slug"]), render.text(b["origin"]), str(b["apps"]), str(b["widgets"]))
    console.print(table)
    for b in backends:
        render.say(console, ", ".join(b["widget_types"]), prefix=f"widget types of {b['slug']}: ", indent=2)
    render.say(console, ", ".join(sorted(w.skills)), prefix=f"skills ({len(w.skills)}): ", indent=2)
    render.say(
        console, f'{", ".join(sorted(w.baselines))} (and "" for a bare workspace)', prefix="initial states: "
    )
    console.print(f"resources: {len(w.resources)}  prompts: {len(w.prompts)}")


# the sources folder whose overlay/ (beside personas/ and stories/) is applied to the world
OverlaySources = Annotated[
    Path | None, typer.Option("--sources", help="Folder holding personas/ and stories/.")
]


def _world_with_overlay(
    world: Path | None, sources: Path | None, *, need_overlay: bool = True
) -> tuple[Any, set[str]]:
    """The world, with the overlay of `sources` applied (and the files the overlay adds or replaces). `world
    check --sources` validates an overlay, so a folder without one is a usage error there; `world show
    --sources` also names the personas of the folder that ground a fact, which a folder without an overlay has
    too (`need_overlay=False`: the world as it is)."""
    from authoring.overlay import OverlayError, find_overlay, overlay_documents, world_for

    overlay = find_overlay(sources) if sources is not None else None
    if sources is None or overlay is None:
        if sources is not None and need_overlay:
            raise usage_error(f"--sources: {sources} has no overlay/ folder")
        return load_world(world), set()
    try:
        return load_world(world_for(sources, world)), overlay_documents(overlay)
    except OverlayError as exc:
        raise usage_error(str(exc)) from exc


def _overlay_problems(w: Any, files: set[str]) -> list[Any]:
    """An overlay's planted facts must be groundable: in one piece a request can point at."""
    from authoring.locate import locate
    from simulator import Problem

    docs = [(s.file, s.content, s.planted, "workflow") for s in w.skills.values()]
    docs += [(r.file, r.text, r.planted, "list") for r in w.resources.values()]
    docs += [(p.file, p.text, p.planted, "list") for p in w.prompts.values()]
    out = []
    for file, text, planted, word in docs:
        if file not in files:
            continue
        if not planted:
            out.append(Problem(file, "planted", "an overlay document plants no fact a story can ground in"))
        for item in planted:
            found = locate(text, item.phrase, word)
            if found.piece is None:
                out.append(Problem(file, "planted", f"'{item.phrase}' is not groundable: {found.problem}"))
    return out


@app.command("check")
def world_check(world: WorldDir = None, strict: Strict = False, sources: OverlaySources = None) -> None:
    """Integrity: layout references, defaults within options, seeded widgets, grid, unique planted values;
    with --sources, the folder's overlay applied and its planted facts groundable."""
    from simulator import check_world

    w, files = _world_with_overlay(world, sources)
    problems = check_world(w) + _overlay_problems(w, files)
    errors = [p for p in problems if p.severity == "error"]
    for p in problems:
        render.say(err if p.severity == "error" else console, str(p), indent=2)
    if errors or (strict and problems):
        render.say(
            err, f"{len(errors)} error(s), {len(problems) - len(errors)} warning(s) in {w.path}", style="red"
        )
        raise typer.Exit(1)
    render.say(
        console,
        f"{w.path}: {len(w.backends)} backends, "
        f"{sum(len(b.catalog.widgets) for b in w.backends.values())} widgets, {len(w.baselines)} "
        f"baselines, {len(w.skills)} skills; {len(problems)} warning(s)",
        prefix="ok ",
        prefix_style="green",
    )


@app.command("show")
def show(
    name: Annotated[
        str | None,
        typer.Argument(
            help="A backend, app, widget (name or id), skill, resource or prompt; omit for the whole world."
        ),
    ] = None,
    world: WorldDir = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="Only this backend (slug or origin).")
    ] = None,
    rows: Annotated[int, typer.Option("--rows", min=0, help="Sample rows to show for a widget.")] = 3,
    facts: Annotated[
        bool,
        typer.Option(
            "--facts",
            help="List every document's groundable facts: source, where, the piece, planted or not, and "
            "which personas (of --sources, else this folder) already ground a fact there.",
        ),
    ] = False,
    sources: OverlaySources = None,
    as_json: Json = False,
) -> None:
    """What a story can use: apps, widgets with parameters and options, skills, resources, prompts."""
    from authoring.suggest import listing
    from authoring.worldinfo import lookup, overview

    w, _ = _world_with_overlay(world, sources, need_overlay=False)
    if facts:
        _facts(w, name, sources or Path("."), as_json)
        return
    if backend is not None and w.backend(backend) is None:
        raise usage_error(f"--backend: no backend '{backend}' (backends: {listing(w.backends)})")
    if name is None:
        info = overview(w)
        if as_json:
            sys.stdout.write(json.dumps(info, indent=2, ensure_ascii=False) + "\n")
        else:
            _overview(console, info)
        return
    found = lookup(w, name, backend=backend, sample=rows)
    if not found:
        raise usage_error(
            f"nothing called '{name}' in world {w.name}{close_to(w, name)}; taskforge world show lists everything"
        )
    if as_json:
        sys.stdout.write(json.dumps({"name": name, "matches": found}, indent=2, ensure_ascii=False) + "\n")
        return
    for i, item in enumerate(found):
        if i:
            console.rule(style="dim")
        SHOW[item["kind"]](console, item)


def _facts(w: Any, name: str | None, sources: Path, as_json: bool) -> None:
    """Each groundable piece as `<kind> <source> | <where> | <piece> [planted] [used by …]`."""
    from authoring.groundable import groundable

    items = [g for g in groundable(w, sources) if name is None or name in (g.ref, g.file) or name in g.ref]
    if as_json:
        sys.stdout.write(json.dumps([g.to_dict() for g in items], indent=2, ensure_ascii=False) + "\n")
        return
    for g in items:
        tags = (
            (" [planted]" if g.planted else "")
            + (f" [used by {', '.join(g.used_by)}]" if g.used_by else "")
            + g.sets_tags()
        )
        render.say(console, f"{g.position}: {g.text}{tags}", prefix=f"{g.kind} {g.ref} | ")
    free = sum(1 for g in items if not g.used_by)
    render.say(console, f"{len(items)} groundable piece(s), {free} not used by any story")


def close_to(world: Any, name: str) -> str:
    """The world's names close to a misspelt `name`, as the tail of an error message (or nothing)."""
    from authoring.worldinfo import suggestions

    close = suggestions(world, name)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if _needs_quotes(value) else str(value)


def _yaml_flow(mapping: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in mapping.items()) + "}"


def _needs_quotes(value: Any) -> bool:
    text = str(value)
    return not text or any(c in text for c in ":{}[],#&*!|>'\"%@`") or text != text.strip()


def _overview(out: Console, info: dict[str, Any]) -> None:
    out.print(render.text(f"World {info['name']} ({info['world']})", "bold"), soft_wrap=True)
    if info["description"]:
        render.say(out, info["description"], style="dim")
    render.say(out, "Backends", style="bold")
    grid = render.table()
    grid.add_column("backend", no_wrap=True)
    grid.add_column("origin")
    grid.add_column("apps", justify="right", no_wrap=True)
    grid.add_column("widgets", justify="right", no_wrap=True)
    for b in info["backends"]:
        grid.add_row(
            render.text(b["slug"] + (" *" if b["connected"] else "")),
            render.text(b["origin"]),
            str(len(b["apps"])),
            str(b["widgets"]),
        )
    out.print(grid)
    render.say(
        out,
        "* connected by default. Backends with the same origin are twins: the same catalog with "
        "different rows.",
        style="dim",
    )
    shown: dict[str, str] = {}
    for b in info["backends"]:
        if b["origin"] in shown:
            render.say(out, f"apps and widgets of {b['slug']}: as {shown[b['origin']]}")
            continue
        shown[b["origin"]] = b["slug"]
        if b["apps"]:
            render.say(
                out, ", ".join(a["name"] for a in b["apps"]), prefix=f"apps of {b['slug']}: ", indent=2
            )
        render.say(out, ", ".join(b["widget_types"]), prefix=f"widget types of {b['slug']}: ", indent=2)
    render.bullets(
        out,
        f"Skills ({len(info['skills'])})",
        [(s["slug"], f"{s['name']}: {s['description']}") for s in info["skills"]],
    )
    render.bullets(
        out,
        f"Resources ({len(info['resources'])})",
        [(r["uri"], f"{r['title']}: {r['description']}") for r in info["resources"]],
    )
    render.bullets(
        out, f"Prompts ({len(info['prompts'])})", [(p["name"], p["description"]) for p in info["prompts"]]
    )
    render.say(
        out, ", ".join(info["initial_states"]) + ' (and "" for a bare workspace)', prefix="initial states: "
    )
    render.say(
        out,
        "taskforge world show NAME shows a backend, app, widget, skill, resource or prompt in full.",
        style="dim",
    )


def _heading(out: Console, title: str, line: str, prefix: str) -> None:
    """A thing's name in bold, then the line that says what it is and where it comes from."""
    out.print(render.text(title, "bold"), soft_wrap=True)
    render.say(out, line, prefix=prefix)


def _widget(out: Console, w: dict[str, Any]) -> None:
    twins = f"; twin backend(s) {', '.join(w['twins'])} serve other rows" if w["twins"] else ""
    _heading(
        out,
        f"Widget {w['name']}",
        f"{w['widget_id']} ({w['type']}) from {w['origin']} via {w['backend']}{twins}",
        "id: ",
    )
    render.say(out, ", ".join(w["apps"]) or "(in no app)", prefix="apps: ")
    if w["description"]:
        render.say(out, w["description"], style="dim")
    if w["params"]:
        out.print(render.text("Parameters", "bold"))
        for p in w["params"]:
            render.say(
                out,
                f"{p['name']} ({p['label'] or p['name']}, {p['type']}) default "
                f"{json.dumps(p['default'], ensure_ascii=False)}",
                prefix="  ",
            )
            if p["options"]:
                render.say(out, ", ".join(p["options"]), prefix="    options: ")
    else:
        out.print("no parameters")
    out.print(
        render.text(
            f"Sample ({len(w['sample_rows'])} of {w['rows_served']} rows served with the defaults)", "bold"
        )
    )
    for row in w["sample_rows"]:
        body = ", ".join(f"{k}: {v}" for k, v in row.items()) if isinstance(row, dict) else str(row)
        render.say(out, body, prefix="  - ")
    out.print(render.text("As a story target (under facts:)", "bold"))
    out.print("  targets:")
    for i, (key, value) in enumerate(w["target"].items()):
        out.print(render.text(f"    {'- ' if i == 0 else '  '}{key}: {_scalar(value)}"), soft_wrap=True)


LISTED_END = "first or last listed of the app's widgets that take its values"


def _app(out: Console, a: dict[str, Any]) -> None:
    _heading(
        out, f"App {a['name']}", f"template {a['template_id']} on {a['origin']} via {a['backend']}", "  "
    )
    if a["description"]:
        render.say(out, a["description"], style="dim")
    for tab in a["tabs"]:
        out.print(render.text(f"tab {tab['name']} (id {tab['id']})", "bold"), soft_wrap=True)
        for item in tab["widgets"]:
            params = f" with {_yaml_flow(item['params'])}" if item["params"] else ""
            alone = (
                " [no other widget of the app takes all its parameters]" if item.get("params_alone") else ""
            ) + (f" [{LISTED_END}]" if item.get("listed_end") else "")
            render.say(
                out, f"{item['name']} ({item['widget_id']}, {item['type']}){params}{alone}", prefix="  - "
            )
    if any(item.get("params_alone") for tab in a["tabs"] for item in tab["widgets"]):
        render.say(
            out,
            "[no other widget of the app takes all its parameters]: a story stating all of them gives values "
            "that single the widget out without the description, and check refuses it as a first target; "
            "pick one whose parameters another widget of the app also takes",
            style="dim",
        )
    if any(item.get("listed_end") for tab in a["tabs"] for item in tab["widgets"]):
        render.say(
            out,
            f"[{LISTED_END}]: a story whose Find target is this widget, stating the values shown, gets check's "
            '"a reader of places" warning (an agent taking the first or last catalog entry that takes the stated values finds it '
            "without reading what it serves); put first in facts.targets a widget listed between others that "
            "take its values, or state a value a widget listed on the other side also takes",
            style="dim",
        )


def _backend(out: Console, b: dict[str, Any]) -> None:
    connected = "connected by default" if b["connected"] else "not connected by default"
    twins = f"; twin(s): {', '.join(b['twins'])}" if b["twins"] else ""
    _heading(out, f"Backend {b['slug']}: origin {b['origin']}", f"{b['file']}; {connected}{twins}", "  ")
    by_app: dict[str, list[str]] = {}
    for w in b["widgets"]:
        for app in w["apps"] or ["(in no app)"]:
            by_app.setdefault(app, []).append(w["name"])
    for app, names in by_app.items():
        render.say(out, ", ".join(names), prefix=f"{app}: ")


def _text_item(out: Console, item: dict[str, Any]) -> None:
    title = {
        "skill": lambda i: f"Skill {i['slug']}: {i['name']}",
        "resource": lambda i: f"Resource {i['uri']}: {i['title']}",
        "prompt": lambda i: f"Prompt {i['name']}",
    }[item["kind"]](item)
    out.print(render.text(title, "bold"), soft_wrap=True)
    if item.get("description"):
        render.say(out, item["description"], style="dim")
    render.say(out, item.get("content") or item.get("text") or "")


SHOW = {
    "widget": _widget,
    "app": _app,
    "backend": _backend,
    "skill": _text_item,
    "resource": _text_item,
    "prompt": _text_item,
}
