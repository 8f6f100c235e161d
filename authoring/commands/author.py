"""`taskforge author`: the main job — a persona and its four stories in, twenty certified, calibrated tasks
committed out."""

from __future__ import annotations

import contextlib
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from authoring import render

console = render.console()
err = render.console(stderr=True)
PROJECT = Path(__file__).resolve().parents[2]


class DriverChoice(StrEnum):
    rules = "rules"
    llm = "llm"


def make_drivers(
    driver: DriverChoice, model: str | None, base_url: str | None, progress, skills_dir=None, **limits
):
    """The role drivers; the LLM drivers' endpoint is checked first (EndpointError: nothing else has run).
    `limits` are LLMConfig budget fields; None keeps a default."""
    from authoring.roles.drivers import llm_drivers, rule_drivers

    if driver == DriverChoice.rules:
        return rule_drivers(progress)
    from authoring.roles.llm import LLMConfig

    settings = {
        k: v for k, v in {**limits, "skills_dir": skills_dir}.items() if v is not None or k == "cache_dir"
    }
    config = LLMConfig.from_env(model=model, base_url=base_url, **settings)
    return llm_drivers(config, progress, preflight=True)


def driver_label(driver: DriverChoice, model: str | None, base_url: str | None) -> str:
    """The drivers as part of a run's identity: another model writes other tasks."""
    import os

    if driver == DriverChoice.rules:
        return "rules"
    return f"llm:{model or os.environ.get('TASKFORGE_MODEL', '')}@{base_url or os.environ.get('OPENAI_BASE_URL', '')}"


def register(app: typer.Typer) -> None:
    @app.command("author")
    def author(
        persona: Annotated[str, typer.Option("--persona", help="Persona slug (personas/<p>.md).")],
        world: Annotated[
            Path | None, typer.Option("--world", help="World directory (default: built-in).")
        ] = None,
        taskset: Annotated[str, typer.Option("--taskset", help="Taskset folder name.")] = "workspace_tasks",
        tasksets_dir: Annotated[Path, typer.Option("--tasksets-dir", help="Where tasksets live.")] = Path(
            "tasksets"
        ),
        sources: Annotated[
            Path, typer.Option("--sources", help="Folder holding personas/ and stories/.")
        ] = Path("."),
        skills_dir: Annotated[
            Path, typer.Option("--skills-dir", help="Role skills (lessons are appended).")
        ] = Path("skills"),
        driver: Annotated[DriverChoice, typer.Option("--driver", help="Role drivers.")] = DriverChoice.rules,
        model: Annotated[str | None, typer.Option("--model", help="Model for the LLM drivers.")] = None,
        base_url: Annotated[
            str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")
        ] = None,
        reference_agent: Annotated[
            str,
            typer.Option(
                "--reference-agent",
                help="Calibration agent, or `ladder` for the capability ladder ladder-0 … ladder-4.",
            ),
        ] = "ladder",
        frontier_agent: Annotated[
            str | None, typer.Option("--frontier-agent", help="Probe for dead rungs.")
        ] = None,
        repeats: Annotated[
            int, typer.Option("--repeats", min=1, help="Calibration repeats (deterministic agents run once).")
        ] = 3,
        min_attempts: Annotated[
            int | None,
            typer.Option(
                "--min-attempts",
                min=1,
                help="Valid calibration attempts per agent a level needs (default 3).",
            ),
        ] = None,
        baseline: Annotated[
            str | None, typer.Option("--baseline", help="Workspace baseline of the tasks.")
        ] = None,
        no_commit: Annotated[
            bool, typer.Option("--no-commit", help="Certify and write, do not commit.")
        ] = False,
        force: Annotated[bool, typer.Option("--force", help="Re-author even when up to date.")] = False,
        checkpoint_url: Annotated[
            str | None, typer.Option("--checkpoint-url", help="postgresql://… checkpoints.")
        ] = None,
        max_calls_per_level: Annotated[
            int | None,
            typer.Option(
                "--max-calls-per-level", min=1, help="LLM drivers: model calls per level (default 40)."
            ),
        ] = None,
        max_tokens_per_level: Annotated[
            int | None,
            typer.Option(
                "--max-tokens-per-level", min=1, help="LLM drivers: tokens per level (default 1.5M)."
            ),
        ] = None,
        max_cost_per_level: Annotated[
            float | None,
            typer.Option("--max-cost-per-level", min=0.0, help="LLM drivers: USD per level (default 3)."),
        ] = None,
        max_calls: Annotated[
            int | None,
            typer.Option("--max-calls", min=1, help="LLM drivers: model calls per run (default 600)."),
        ] = None,
        max_tokens: Annotated[
            int | None, typer.Option("--max-tokens", min=1, help="LLM drivers: tokens per run (default 15M).")
        ] = None,
        max_cost: Annotated[
            float | None, typer.Option("--max-cost", min=0.0, help="LLM drivers: USD per run (default 30).")
        ] = None,
        model_cache: Annotated[
            bool,
            typer.Option(
                "--model-cache/--no-model-cache",
                help="LLM drivers: reuse replies to identical requests from "
                ".taskforge/model-cache (a resumed run does not pay twice).",
            ),
        ] = True,
    ) -> None:
        """Turn a persona and its four stories into twenty certified, calibrated tasks committed with git."""
        from rich.live import Live

        from authoring.failures import EndpointError
        from authoring.gitops import GitError
        from authoring.options import RunOptions
        from authoring.progress import LiveProgress
        from authoring.review import ReviewError
        from authoring.run import RunError, run_persona
        from authoring.sources import SourceError, check_name
        from certify.agents.llm import check_agents
        from certify.evaluate import build_agent
        from certify.model_client import EndpointUnusable
        from certify.task import TaskFileError
        from simulator import DEFAULT_WORLD, WorldError

        live = LiveProgress() if err.is_terminal else None
        lines = render.progress_printer(err)

        def progress(message: str) -> None:
            if live is None:
                lines(message)

        try:
            check_name(persona, "--persona", "persona")
            check_name(taskset, "--taskset", "taskset")
            drivers = make_drivers(
                driver,
                model,
                base_url,
                progress,
                skills_dir,
                max_calls_per_level=max_calls_per_level,
                max_tokens_per_level=max_tokens_per_level,
                max_cost_per_level=max_cost_per_level,
                max_calls_per_run=max_calls,
                max_tokens_per_run=max_tokens,
                max_cost_per_run=max_cost,
                **({} if model_cache else {"cache_dir": None}),
            )
            check_agents(
                [
                    build_agent(name)
                    for name in (reference_agent, frontier_agent)
                    if name and name.startswith("openai:")
                ]
            )
            options = RunOptions(
                persona=persona,
                taskset=taskset,
                tasksets_dir=str(tasksets_dir),
                sources_root=str(sources),
                skills_dir=str(skills_dir),
                world=str(world or DEFAULT_WORLD),
                baseline=baseline,
                reference_agent=reference_agent,
                frontier_agent=frontier_agent,
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
                    drivers,
                    driver_name=driver_label(driver, model, base_url),
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
            EndpointUnusable,
        ) as exc:
            render.error(err, str(exc))
            raise typer.Exit(2) from exc
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
                + f": taskforge review list --taskset {taskset}"
                + (f" --tasksets-dir {tasksets_dir}" if tasksets_dir != Path("tasksets") else ""),
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
    if calibration is not None:
        from certify.calibrate import render_matrix

        rates = "  ".join(f"{s.level}: {(s.pass_rate or 0):.0%}" for s in calibration.levels)
        render.say(
            console,
            f"{rates} — {calibration.verdict.upper()}",
            prefix=f"staircase ({calibration.agent} x{calibration.repeats}): ",
        )
        if calibration.ladder is not None:
            console.print("\n".join(render_matrix(calibration.ladder)), markup=False, soft_wrap=True)
    for item in outcome.items:
        render.say(
            console,
            f"{item['kind']} {item.get('task_id') or item.get('story')}: {item['reason']}",
            prefix=f"review {item['id']} ",
            prefix_style="yellow",
            indent=2,
        )
    render.say(console, outcome.summary)
    sys.stdout.flush()
