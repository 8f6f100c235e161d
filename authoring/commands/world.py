"""`taskforge world show`: a world's backends, apps, widgets (parameters, options, served rows), skills,
resources and prompts, so a story writer never reads the world's JSON by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from authoring import render


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


def _widget(out: Console, w: dict[str, Any]) -> None:
    out.print(render.text(f"Widget {w['name']}", "bold"), soft_wrap=True)
    render.say(
        out,
        f"{w['widget_id']} ({w['type']}) from {w['origin']} via {w['backend']}"
        + (f"; twin backend(s) {', '.join(w['twins'])} serve other rows" if w["twins"] else ""),
        prefix="id: ",
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


def _app(out: Console, a: dict[str, Any]) -> None:
    out.print(render.text(f"App {a['name']}", "bold"), soft_wrap=True)
    render.say(out, f"template {a['template_id']} on {a['origin']} via {a['backend']}", prefix="  ")
    if a["description"]:
        render.say(out, a["description"], style="dim")
    for tab in a["tabs"]:
        out.print(render.text(f"tab {tab['name']} (id {tab['id']})", "bold"), soft_wrap=True)
        for item in tab["widgets"]:
            params = f" with {_yaml_flow(item['params'])}" if item["params"] else ""
            render.say(out, f"{item['name']} ({item['widget_id']}, {item['type']}){params}", prefix="  - ")


def _backend(out: Console, b: dict[str, Any]) -> None:
    out.print(render.text(f"Backend {b['slug']}: origin {b['origin']}", "bold"), soft_wrap=True)
    render.say(
        out,
        f"{b['file']}; {'connected by default' if b['connected'] else 'not connected by default'}"
        + (f"; twin(s): {', '.join(b['twins'])}" if b["twins"] else ""),
        prefix="  ",
    )
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


def register(world_app: typer.Typer) -> None:
    @world_app.command("show")
    def show(
        name: Annotated[
            str | None,
            typer.Argument(
                help="A backend, app, widget (name or id), skill, resource or "
                "prompt; omit for the whole world."
            ),
        ] = None,
        world: Annotated[
            Path | None, typer.Option("--world", help="World directory (default: built-in).")
        ] = None,
        backend: Annotated[
            str | None, typer.Option("--backend", help="Only this backend (slug or origin).")
        ] = None,
        rows: Annotated[int, typer.Option("--rows", min=0, help="Sample rows to show for a widget.")] = 3,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    ) -> None:
        """What a story can use: apps, widgets with parameters and options, skills, resources, prompts."""
        from authoring.cli import _load_world
        from authoring.suggest import listing
        from authoring.worldinfo import lookup, overview, suggestions

        out, err = render.console(), render.console(stderr=True)
        w = _load_world(world)
        if backend is not None and w.backend(backend) is None:
            render.error(err, f"--backend: no backend '{backend}' (backends: {listing(w.backends)})")
            raise typer.Exit(2)
        if name is None:
            info = overview(w)
            if as_json:
                sys.stdout.write(json.dumps(info, indent=2, ensure_ascii=False) + "\n")
            else:
                _overview(out, info)
            return
        found = lookup(w, name, backend=backend, sample=rows)
        if not found:
            close = suggestions(w, name)
            render.error(
                err,
                f"nothing called '{name}' in world {w.name}"
                + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else "")
                + "; taskforge world show lists everything",
            )
            raise typer.Exit(2)
        if as_json:
            sys.stdout.write(
                json.dumps({"name": name, "matches": found}, indent=2, ensure_ascii=False) + "\n"
            )
            return
        for i, item in enumerate(found):
            if i:
                out.rule(style="dim")
            SHOW[item["kind"]](out, item)
