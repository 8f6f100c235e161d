"""`taskforge judge audit`: certify a judge on every judged task of a taskset before its verdicts count.

For each judged task the judge grades the exemplar (must PASS) and three mutants (a fact stub, an off-topic
note, a prompt injection; must FAIL) on the reference's own trace. The result is recorded beside the manifest
(`<taskset>/judge-audit.json`) under the judge's identity and the template's hash; `taskforge certify` admits a
judged task only when the taskset's judge has a current, calibrated audit of it. Exit 0 when every judged task
is calibrated (boundary cases included, and reported), 1 when the judge is MISCALIBRATED on some task or some
case got no verdict, 2 on bad input or an unusable endpoint.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from authoring import render

from .common import console, err
from .options import Json, ModelFlags, TasksetFolder, WorldDir, flag_names, grouped

MARK = {
    "calibrated": "ok",
    "boundary": "boundary",
    "miscalibrated": "MISCALIBRATED",
    "unsettled": "unsettled",
}
SUFFIX = {"calibrated": "", "boundary": " ~", "miscalibrated": " ✗", "unsettled": " ?"}
HEADS = {"exemplar": "exemplar", "fact_stub": "stub", "off_topic": "off-topic", "injection": "inject"}


app = typer.Typer(help="Audit the judge of open answers (LLM or rubric).", no_args_is_help=True)


@app.command("audit")
@grouped
def audit_cmd(
    taskset: TasksetFolder,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="rubric (the embedded deterministic default) or openai:<model>; default: the taskset's "
            "`judge`, else rubric.",
        ),
    ] = None,
    repeats: Annotated[
        int,
        typer.Option("--repeats", min=1, help="Votes of the majority a disagreeing case escalates to."),
    ] = 3,
    world: WorldDir = None,
    model_flags: ModelFlags = ModelFlags(),
    max_calls: Annotated[
        int | None,
        typer.Option("--max-calls", min=1, help="Model calls the judge may make (default 2000)."),
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost", min=0.0, help="USD the judge may spend (default 20).")
    ] = None,
    no_model_cache: Annotated[
        bool, typer.Option("--no-model-cache", help="Do not read or write the model judge's reply cache.")
    ] = False,
    no_record: Annotated[
        bool, typer.Option("--no-record", help="Report only; leave the taskset's judge-audit.json alone.")
    ] = False,
    as_json: Json = False,
) -> None:
    """The exemplar and three mutants of every judged task; exit 0 iff the judge is calibrated on all."""
    from certify import (
        DEFAULT_CACHE_DIR,
        EndpointUnusable,
        TaskFileError,
        TaskSet,
        build_judge,
        judged_tasks,
        record_audit,
        run_audit,
    )
    from simulator import WorldError

    try:
        loaded = TaskSet.load(taskset)
        w = loaded.world(world)
        tasks = judged_tasks(loaded)
    except (TaskFileError, WorldError) as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from exc
    name = judge or loaded.manifest.judge or "rubric"
    if name == "openai":
        try:
            name = model_flags.agent(name) or name
        except ValueError as exc:
            render.error(err, f"--judge: {exc}")
            raise typer.Exit(2) from exc
    model = name != "rubric"
    try:
        concurrency = model_flags.workers()
    except ValueError as exc:
        render.error(err, str(exc))
        raise typer.Exit(2) from exc
    agent_only = [k for k in ("mode", "parse") if k in model_flags.given()]
    if agent_only:
        render.error(
            err, f"{flag_names(agent_only)}: how an agent acts, not a judge (it answers in one format)"
        )
        raise typer.Exit(2)
    given = {k: v for k, v in model_flags.given().items() if k != "concurrency"}
    flags = {
        "--max-calls": max_calls,
        "--max-cost": max_cost,
        **{flag_names([k]): v for k, v in given.items()},
    }
    if not model and any(v is not None for v in flags.values()):
        named = ", ".join(k for k, v in flags.items() if v is not None)
        render.error(err, f"{named}: only for a model judge (--judge openai:<model>), not the rubric")
        raise typer.Exit(2)
    settings: dict[str, Any] = (
        {
            **model_flags.client_config(),
            "max_calls": max_calls,
            "max_cost": max_cost,
            "cache_dir": None if no_model_cache else DEFAULT_CACHE_DIR,
        }
        if model
        else {}
    )
    try:
        chosen = build_judge(name, **settings)
    except ValueError as exc:
        render.error(err, f"--judge: {exc}")
        raise typer.Exit(2) from exc
    if not tasks:
        render.say(
            console,
            f"{taskset}: no judged task (no eval.judge_evaluation): nothing to audit, nothing recorded",
        )
        raise typer.Exit(0)
    if model:
        try:
            asyncio.run(chosen.check())  # type: ignore[attr-defined]
        except EndpointUnusable as exc:
            render.error(err, str(exc))
            raise typer.Exit(2) from exc

    def progress(task_id: str, case: str, result) -> None:
        if not as_json and result.status != "calibrated":
            err.print(f"  {task_id} {case}: {MARK[result.status]}", markup=False, soft_wrap=True)

    async def go():
        try:
            return await run_audit(
                w, tasks, chosen, repeats=repeats, concurrency=concurrency, progress=progress
            )
        finally:
            close = getattr(chosen, "aclose", None)
            if close is not None:
                await close()

    audit = asyncio.run(go())
    path = None if no_record else record_audit(loaded.root, audit)
    if as_json:
        sys.stdout.write(
            json.dumps({**audit.model_dump(), "recorded": str(path) if path else None}, indent=2) + "\n"
        )
    else:
        _render(audit, path, getattr(chosen, "notes", []))
    raise typer.Exit(0 if audit.passed else 1)


def _render(audit, path: Path | None, notes: list[str]) -> None:
    from certify import CASES

    render.say(
        console,
        f"Judge audit: {audit.label}, template v{audit.template_version} ({audit.template_sha256[:12]}), "
        + ("one vote per case (deterministic)" if audit.deterministic else f"majority of {audit.repeats}")
        + f": {audit.status.upper() if audit.status != 'calibrated' else 'calibrated'}",
        style="bold",
    )
    table = render.table()
    table.add_column("task", no_wrap=True)
    for case in CASES:
        table.add_column(HEADS[case], no_wrap=True)
    table.add_column("status", no_wrap=True)
    for entry in audit.tasks.values():
        cells = []
        for case in entry.cases:
            votes = "/".join(case.votes) or "none"
            style = "" if case.status == "calibrated" else "yellow" if case.status == "boundary" else "red"
            cells.append(render.text(votes + SUFFIX[case.status], style))
        table.add_row(render.text(entry.task_id), *cells, render.text(MARK[entry.status]))
    console.print(table)
    render.say(
        console, "cells: the votes (~ boundary: rescued by the majority, ✗ miscalibrated, ? no verdict)"
    )
    for entry in audit.tasks.values():
        for case in entry.cases:
            if case.status in ("miscalibrated", "unsettled", "boundary"):
                why = case.error or "; ".join(f"{p.label}: {p.reason}" for p in case.labels) or "-"
                render.say(
                    console,
                    f"{case.case} expected {case.expected}, votes {'/'.join(case.votes) or 'none'}: {why}",
                    prefix=f"{entry.task_id} ({MARK[case.status]}): ",
                    indent=4,
                )
    s = audit.spend
    render.say(
        console,
        f"{len(audit.tasks)} judged task(s): {audit.count('calibrated')} calibrated, {audit.count('boundary')} "
        f"boundary, {audit.count('miscalibrated')} miscalibrated, {audit.count('unsettled')} unsettled; judge "
        f"calls {s.calls}"
        + (f" (+{s.cached} cached)" if s.cached else "")
        + f", tokens in {s.tokens_in} out {s.tokens_out}, cost ${s.cost:.4f}",
    )
    for note in notes:
        render.say(console, note, prefix="note: ", prefix_style="yellow")
    if path is not None:
        render.say(console, str(path), prefix="recorded: ")
    else:
        render.say(console, "not recorded (--no-record)")
