"""Taskset policy: the defaults every authored task is certified under, the manifest a run creates when the
destination has none, the baseline workspace a run starts from, and how a persona's task ids are made.

The roles (the author's and the fixer's checks), the run and the graph all read these from here, so a task is
certified under the same defaults wherever it is gated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from certify import TaskSet, TaskSetManifest
from simulator import DEFAULT_WORLD, World

from .options import RunOptions

STANDARD_DEFAULTS: dict[str, Any] = {
    "category": "story",
    "eval": {
        "layout": {"within_grid": True, "no_overlaps": True, "grid_width": 40},
        "trace_checks": {"max_invalid_tool_calls": 2, "forbid_invented_widget_ids": True},
        "workspace_checks": {"preserve_other_dashboards": True},
        # Titles and names the agent writes are graded by equality (case, spacing, punctuation aside), never by
        # containment: a tab title or note name stuffed with every candidate phrase fails.
        "names_graded": "exact",
    },
}


def task_id(story: str, level: int) -> str:
    """A persona's task id: its story and level (`<story>_level<N>`), also the task file's name."""
    return f"{story}_level{level}"


def split_task_id(task_id: str) -> tuple[str, int]:
    slug, level = task_id.rsplit("_level", 1)
    return slug, int(level)


def default_baseline(options: RunOptions, world: World) -> str:
    """The run's baseline: the one asked for, else the world's first `…workspace-a` baseline ('' when none)."""
    if options.baseline is not None:
        return options.baseline
    return next((b for b in sorted(world.baselines) if b.endswith("workspace-a")), "")


def resolve_baseline(options: RunOptions, world: World) -> str:
    """The run's baseline, checked against the world before any work (an unknown one is bad input)."""
    baseline = default_baseline(options, world)
    if baseline and baseline not in world.baselines:
        raise ValueError(
            f"--baseline '{baseline}' is not a baseline of world {world.name} (known: "
            f"{', '.join(sorted(world.baselines)) or 'none'}; '' for a bare workspace)"
        )
    return baseline


def taskset_defaults(options: RunOptions, world: World | None = None) -> dict[str, Any]:
    """The defaults the run's tasks are certified under: the taskset's, or those of the manifest the run will
    create (so a certificate issued before the manifest exists still matches after)."""
    root = options.taskset_root
    if (root / "taskset.json").is_file():
        return TaskSet.load(root).defaults()
    created = manifest(options, world or World.load(options.world))
    return TaskSet(root, TaskSetManifest.model_validate(created)).defaults()


def manifest(options: RunOptions, world: World) -> dict[str, Any]:
    """The taskset.json a run creates when the destination has none."""
    out: dict[str, Any] = {
        "taskset_id": options.taskset,
        "description": "Persona stories authored by taskforge: 4 stories x 5 levels per persona "
        "(Execute, Find, Derive, Ground, Compose), closed-world.",
        "workspace_baseline": default_baseline(options, world),
        "task_defaults": STANDARD_DEFAULTS,
    }
    if Path(options.world).resolve() != DEFAULT_WORLD.resolve():  # the default world goes unnamed
        out["world"] = str(Path(options.world).resolve())
    else:
        # Our world defines every story's policy and facts in its documents (`check` refuses a story that does
        # not), so its tasksets require the counterfactual gate: each hidden value varied at its source must
        # change the right answer. Other worlds (the source benchmark's, test worlds whose stories predate
        # policy documents) opt in by setting it in their taskset.json.
        out["task_defaults"] = {
            **STANDARD_DEFAULTS,
            "eval": {**STANDARD_DEFAULTS["eval"], "counterfactual": "required"},
        }
    return out
