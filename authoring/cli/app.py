"""The `taskforge` application: every noun's commands assembled in one place, and the console entry point.

Each noun is a module of this package (a command function, or a sub-app of several); heavy imports stay
inside the commands, so `taskforge --help` does not load the simulator.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from . import (
    author,
    calibrate,
    certify,
    evaluate,
    export,
    judge,
    openenv,
    parity,
    recertify,
    report,
    review,
    serve,
    smoke,
    stories,
    surface,
    world,
)
from .common import err

app = typer.Typer(
    help="Author and certify benchmark tasks for agents operating a financial workspace.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# The order here is the order `taskforge --help` lists them in (commands first, then the nouns with subcommands).
app.command("check")(stories.check)
app.command("report")(report.report)
app.command("author")(author.author)
app.command("eval")(evaluate.eval_cmd)
app.command("calibrate")(calibrate.calibrate)
app.command("recertify")(recertify.recertify)
app.command("serve")(serve.serve)
app.command("certify")(certify.certify)
app.command("parity", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    parity.parity_cmd
)
app.command("smoke")(smoke.smoke_cmd)
app.command("openenv")(openenv.openenv_cmd)
app.add_typer(world.app, name="world")
app.add_typer(stories.new_app, name="new")
app.add_typer(review.app, name="review")
app.add_typer(judge.app, name="judge")
app.add_typer(surface.surface_app, name="surface")
app.add_typer(export.export_app, name="export")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"taskforge {version('taskforge')}")
        except PackageNotFoundError:
            typer.echo("taskforge (not installed: run make install)")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of an unexpected error.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Author and certify benchmark tasks for agents operating a financial workspace."""


def one_line(exc: BaseException) -> str:
    """An unexpected error as one line a person can act on."""
    import sqlite3

    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or exc}"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}"
    if isinstance(exc, sqlite3.DatabaseError):
        return f"the checkpoint store is unreadable ({exc}); move .taskforge/checkpoints.sqlite away to start afresh"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def main(argv: list[str] | None = None) -> None:
    """The console entry point: any error ends as one line and exit status 2; `--debug` shows the traceback."""
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="taskforge")
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        sys.exit(130)
    except Exception as exc:
        if "--debug" in args:
            raise
        err.print(
            f"error: {one_line(exc)} (taskforge --debug … shows the traceback)", markup=False, soft_wrap=True
        )
        sys.exit(2)
