"""`taskforge smoke --out DIR`: one small certified task per tool and rung of the surface (certify/smoke.py),
the input of a parity sweep (`taskforge parity --taskset DIR …`). Exit 0 when every task certifies, 1 when one
does not, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from authoring import render

from .options import Json, WorldDir


def smoke_cmd(
    out: Annotated[
        Path, typer.Option("--out", help="Folder of the smoke taskset (created).", show_default=False)
    ],
    world: WorldDir = None,
    as_json: Json = False,
) -> None:
    """Generate a certified smoke taskset from the tool surface: one task per tool and rung."""
    from certify import TASKSET_ID, SmokeError, write
    from simulator import DEFAULT_WORLD, World, WorldError

    console, err = render.console(), render.console(stderr=True)
    manifest = out / "taskset.json"
    if manifest.is_file():
        try:
            existing = json.loads(manifest.read_text(encoding="utf-8")).get("taskset_id")
        except (OSError, ValueError, AttributeError):
            existing = None
        if existing != TASKSET_ID:
            render.error(err, f"--out {out}: holds another taskset ({manifest}); choose an empty folder")
            raise typer.Exit(2)
    try:
        w = World.load(world or DEFAULT_WORLD)
        result = write(w, out, world_label=str(world) if world is not None else None)
    except (WorldError, SmokeError) as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from None
    except OSError as exc:
        render.error(err, f"--out {out}: cannot write there ({exc.strerror or exc})")
        raise typer.Exit(2) from None
    total = len(result.certifications)
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "taskset": str(out),
                    "certified": result.certified,
                    "total": total,
                    "tasks": [c.to_dict() for c in result.certifications],
                },
                indent=2,
            )
            + "\n"
        )
    else:
        render.gate_table(
            console,
            f"Smoke taskset {out} ({result.certified}/{total} certified)",
            [(c.id, c.gates) for c in result.certifications],
        )
        render.say(console, f"parity sweep: taskforge parity --url URL --taskset {out}")
    raise typer.Exit(0 if result.certified == total else 1)
