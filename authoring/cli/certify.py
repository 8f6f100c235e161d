"""`taskforge certify`: the certification gates on task files or taskset folders, each in its taskset's world."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from authoring import render
from authoring.heap import settled_heap

from .common import console, load_world, usage_error, world_of
from .options import Json, WorldDir


def certify(
    paths: Annotated[list[Path], typer.Argument(help="Task files or taskset folders.", show_default=False)],
    world: WorldDir = None,
    as_json: Json = False,
) -> None:
    """Run every certification gate on tasks; exit 0 iff every task is certified."""
    from certify import TaskFileError, certify_file, collect
    from certify import summarise_gates as summarise
    from simulator import DEFAULT_WORLD

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise usage_error(f"no such file or folder: {', '.join(missing)}")
    try:
        targets = collect(paths)
    except TaskFileError as exc:
        raise usage_error(str(exc)) from exc
    if not targets:
        raise usage_error("no task files found")
    where = [
        world_of(taskset, world) if taskset is not None else world or DEFAULT_WORLD for _, taskset in targets
    ]
    worlds = {path: load_world(path) for path in dict.fromkeys(where)}
    with settled_heap():
        results = [
            certify_file(worlds[w], path, taskset) for (path, taskset), w in zip(targets, where, strict=True)
        ]
    summary = summarise(results)
    if as_json:
        sys.stdout.write(
            json.dumps({"tasks": [r.to_dict() for r in results], "summary": summary}, indent=2) + "\n"
        )
    else:
        render.gate_table(
            console,
            f"Certification ({summary['certified']}/{summary['total']} certified)",
            [(r.id, r.gates) for r in results],
        )
    raise typer.Exit(0 if summary["certified"] == summary["total"] else 1)
