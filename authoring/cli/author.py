"""`taskforge author`: the main job — a persona and its four stories in, twenty certified, calibrated tasks
committed out."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from authoring import render

from .common import console, err, preflight, usage_error, world_of
from .options import (
    TASKSET,
    TASKSETS_DIR,
    CheckpointUrl,
    FrontierAgent,
    MinAttempts,
    ModelFlags,
    SkillsDir,
    Sources,
    TasksetName,
    TasksetsDir,
    WorldDir,
    grouped,
)


class DriverChoice(StrEnum):
    rules = "rules"
    llm = "llm"


def make_drivers(driver: DriverChoice, model: ModelFlags, progress, skills_dir=None, **limits):
    """The role drivers; the LLM drivers' endpoint is checked first (EndpointError: nothing else has run).
    `model` holds the shared model options; `limits` are LLMConfig budget fields; None keeps a default."""
    from authoring.roles.drivers import llm_drivers, rule_drivers

    if driver == DriverChoice.rules:
        return rule_drivers(progress)
    from authoring.roles.llm import LLMConfig

    settings = {
        k: v for k, v in {**limits, "skills_dir": skills_dir}.items() if v is not None or k == "cache_dir"
    }
    settings |= model.client_config()
    if model.resolved().concurrency is not None:
        settings["max_concurrency"] = model.resolved().concurrency
    config = LLMConfig.from_env(model=model.model, **settings)
    return llm_drivers(config, progress, preflight=True)


@dataclass(frozen=True)
class RoleDrivers:
    """Which drivers play the roles: the rule drivers, or the LLM drivers (on the model of the shared model
    options)."""

    driver: Annotated[DriverChoice, typer.Option("--driver", help="Role drivers.")] = DriverChoice.rules

    def build(self, model: ModelFlags, progress, skills_dir, **limits):
        return make_drivers(self.driver, model, progress, skills_dir, **limits)

    def label(self, model: ModelFlags) -> str:
        """The drivers as part of a run's identity: another model writes other tasks."""
        import os

        if self.driver == DriverChoice.rules:
            return "rules"
        resolved = model.resolved()
        return f"llm:{resolved.model or ''}@{resolved.base_url or os.environ.get('OPENAI_BASE_URL', '')}"


@dataclass(frozen=True)
class Budget:
    """What the LLM drivers may spend, per level and per run, and whether they reuse cached replies. Field
    names are LLMConfig's; None keeps its default."""

    max_calls_per_level: Annotated[
        int | None,
        typer.Option("--max-calls-per-level", min=1, help="LLM drivers: model calls per level (default 40)."),
    ] = None
    max_tokens_per_level: Annotated[
        int | None,
        typer.Option("--max-tokens-per-level", min=1, help="LLM drivers: tokens per level (default 1.5M)."),
    ] = None
    max_cost_per_level: Annotated[
        float | None,
        typer.Option("--max-cost-per-level", min=0.0, help="LLM drivers: USD per level (default 3)."),
    ] = None
    max_calls_per_run: Annotated[
        int | None, typer.Option("--max-calls", min=1, help="LLM drivers: model calls per run (default 600).")
    ] = None
    max_tokens_per_run: Annotated[
        int | None,
        typer.Option(
            "--max-tokens-per-run",
            min=1,
            help="LLM drivers: tokens per run (default 15M); the output cap per reply is --max-tokens.",
        ),
    ] = None
    max_cost_per_run: Annotated[
        float | None, typer.Option("--max-cost", min=0.0, help="LLM drivers: USD per run (default 30).")
    ] = None
    model_cache: Annotated[
        bool,
        typer.Option(
            "--model-cache/--no-model-cache",
            help="LLM drivers: reuse replies to identical requests from "
            ".taskforge/model-cache (a resumed run does not pay twice).",
        ),
    ] = True

    def limits(self) -> dict[str, Any]:
        """The LLMConfig fields make_drivers takes (`cache_dir=None` turns the cache off)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "model_cache"}
        return out if self.model_cache else {**out, "cache_dir": None}


@grouped
def author(
    persona: Annotated[str, typer.Option("--persona", help="Persona slug (personas/<p>.md).")],
    world: WorldDir = None,
    taskset: TasksetName = TASKSET,
    tasksets_dir: TasksetsDir = TASKSETS_DIR,
    sources: Sources = Path("."),
    skills_dir: SkillsDir = Path("skills"),
    drivers: RoleDrivers = RoleDrivers(),
    model: ModelFlags = ModelFlags(),
    reference_agent: Annotated[
        str,
        typer.Option(
            "--reference-agent",
            help="Calibration agent, or `ladder` for the capability ladder ladder-0 … ladder-4.",
        ),
    ] = "ladder",
    frontier_agent: FrontierAgent = None,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Calibration repeats (deterministic agents run once).")
    ] = 3,
    min_attempts: MinAttempts = None,
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Workspace baseline of the tasks.")
    ] = None,
    no_commit: Annotated[bool, typer.Option("--no-commit", help="Certify and write, do not commit.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Re-author even when up to date.")] = False,
    checkpoint_url: CheckpointUrl = None,
    budget: Budget = Budget(),
) -> None:
    """Turn a persona and its four stories into twenty certified, calibrated tasks committed with git."""
    from rich.live import Live

    from authoring.failures import EndpointError
    from authoring.gitops import GitError
    from authoring.options import RunOptions
    from authoring.overlay import OverlayError, world_for
    from authoring.progress import LiveProgress
    from authoring.review import ReviewError, list_command
    from authoring.run import RunError, run_persona
    from authoring.sources import SourceError, check_name
    from certify import TaskFileError, TaskSet, configurable, resolve_agents
    from simulator import DEFAULT_WORLD, WorldError

    live = LiveProgress() if err.is_terminal else None
    lines = render.progress_printer(err)

    def progress(message: str) -> None:
        if live is None:
            lines(message)

    try:
        check_name(persona, "--persona", "persona")
        check_name(taskset, "--taskset", "taskset")
        root = tasksets_dir / taskset
        world = world_of(TaskSet.load(root), world) if (root / "taskset.json").is_file() else world
        roles = drivers.build(model, progress, skills_dir, **budget.limits())
        reference_agent = model.agent(reference_agent) if reference_agent == "openai" else reference_agent
        llm = model.agent_config()
        preflight(
            a
            for n in (reference_agent, frontier_agent)
            if n
            for a in resolve_agents(n, llm if configurable(n) else None)
        )
        options = RunOptions(
            persona=persona,
            taskset=taskset,
            tasksets_dir=str(tasksets_dir),
            sources_root=str(sources),
            skills_dir=str(skills_dir),
            world=str(world_for(sources, world or DEFAULT_WORLD)),
            baseline=baseline,
            reference_agent=reference_agent,
            frontier_agent=frontier_agent,
            agent_llm=model.agent_config(),
            repeats=repeats,
            commit=not no_commit,
            **({} if min_attempts is None else {"min_attempts": min_attempts}),
        )
        with (
            Live(
                live.render() if live else "",
                console=err,
                transient=False,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            if live
            else contextlib.nullcontext() as screen
        ):

            def events(event: dict) -> None:
                if live is not None and screen is not None:
                    live.update(event)
                    screen.update(live.render(), refresh=True)

            outcome = run_persona(
                options,
                roles,
                driver_name=drivers.label(model),
                checkpoint_url=checkpoint_url,
                force=force,
                events=events,
            )
    except (
        SourceError,
        RunError,
        WorldError,
        ValueError,
        GitError,
        ReviewError,
        TaskFileError,
        EndpointError,
        OverlayError,
    ) as exc:
        raise usage_error(str(exc)) from exc
    except Exception as exc:
        from authoring.factcheck import FactErrors

        if isinstance(exc, FactErrors):
            for e in exc.errors:
                render.error(err, str(e))
            raise typer.Exit(2) from exc
        raise
    _summary(outcome)
    if outcome.open_items or outcome.items:
        blocking = len(outcome.items)
        render.say(
            console,
            f"{max(outcome.open_items, blocking)} open review item(s)"
            + (f", {blocking} blocking the commit" if blocking else ", none blocking")
            + f": {list_command(tasksets_dir, taskset)}",
        )
    if outcome.status in ("committed", "up_to_date") or (outcome.status == "certified" and no_commit):
        raise typer.Exit(0)
    raise typer.Exit(1)


def _summary(outcome) -> None:
    state = outcome.state
    tasks = state.get("tasks") or {}
    if tasks:
        flags = state.get("flags", {}).values()
        ids = sorted(tasks, key=lambda t: (t.rsplit("_level", 1)[0], t[-1]))
        rows = [
            (task_id, {k: g.model_dump() for k, g in tasks[task_id].cert.gates.items()}) for task_id in ids
        ]
        render.gate_table(
            console, outcome.thread_id, rows, extra=[("level", [tasks[t].raw["difficulty"] for t in ids])]
        )
        render.bullets(
            console,
            "flags",
            [
                (task_id, ", ".join(mine))
                for task_id in ids
                if (
                    mine := [
                        f"{f.severity}:{f.check}"
                        for f in flags
                        if f.task_id == task_id and f.status in ("open", "approved")
                    ]
                )
            ],
        )
    calibration = state.get("calibration")
    if calibration is not None and calibration.levels:  # nothing calibrated: no empty staircase or table
        from certify import render_matrix

        render.say(console, render.headline(calibration, len(outcome.items)))
        if calibration.ladder is not None and render_matrix(calibration.ladder):
            console.print("\n".join(render_matrix(calibration.ladder)), markup=False, soft_wrap=True)
    from authoring.storyfix import fix_line

    for item in outcome.items:
        render.say(
            console,
            f"{item['kind']} {item.get('task_id') or item.get('story') or item.get('persona')}: {item['reason']}",
            prefix=f"review {item['id']} ",
            prefix_style="yellow",
            indent=2,
        )
        fix = fix_line(item, outcome.items)
        if fix is not None:
            render.say(console, fix[1], prefix=f"fix {fix[0]} ", indent=4)
    render.say(console, outcome.summary)
    sys.stdout.flush()
