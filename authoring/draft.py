"""`taskforge check --draft`: the authoring run itself, in memory, stopped before anything is written.

The story writer's oracle has to find what `taskforge author` finds, so it is not a second implementation of
the pipeline: it is the same graph (rule author rounds with the gates' feedback, a validator per certified
level, the fairness reviewer per story, the ladder calibration, the fixer's repairs) run with the rule drivers
on an in-memory checkpointer and stopped before `finalize`, the node that starts writing. What it returns are
the items `author` would print (the same flags; review item ids are unique per run), and whether the first run would certify.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from simulator import World

from .graph import RunContext, build_graph, serializer
from .options import RunOptions
from .roles.drivers import rule_drivers
from .run import pending_items, prepare, run_config


@dataclass
class DraftOutcome:
    """What a first `author` run with the rule drivers would end with."""

    persona: str
    tasks: dict[str, Any] = field(default_factory=dict)  # task id -> AuthoredTask (raw, cert)
    items: list[dict[str, Any]] = field(default_factory=list)  # the blocking review items, as author prints
    flags: list[Any] = field(default_factory=list)  # every open flag (blocking or not)
    calibration: Any = None
    state: dict[str, Any] = field(default_factory=dict)  # the run's state where it stopped

    @property
    def certified(self) -> int:
        blocked = {i.get("task_id") for i in self.items}
        return sum(1 for tid, t in self.tasks.items() if t.cert.certified and tid not in blocked)

    @property
    def ok(self) -> bool:
        """The first author run certifies every level and has nothing for a person to decide."""
        return not self.items and bool(self.tasks) and self.certified == len(self.tasks)


def draft_persona(
    sources_root: Path,
    persona: str,
    world: World,
    tasksets_dir: Path,
    taskset: str,
    reference_agent: str = "ladder",
    repeats: int = 3,
) -> DraftOutcome:
    """Run the authoring graph for `persona` in memory up to (not into) `finalize`."""
    options = RunOptions(
        persona=persona,
        taskset=taskset,
        tasksets_dir=str(tasksets_dir),
        sources_root=str(sources_root),
        skills_dir=str(Path(sources_root) / "skills"),
        world=str(world.path),
        reference_agent=reference_agent,
        repeats=repeats,
        commit=False,
    )
    prepare(options, world, "rules", force=True)
    saver = InMemorySaver(serde=serializer())
    graph = build_graph(saver)
    config = run_config(options.run_id)
    context = RunContext(options, rule_drivers(lambda message: None), writes=False)
    for _ in graph.stream(
        {"options": options},
        config,
        context=context,
        stream_mode="custom",
        durability="exit",
        interrupt_before=["finalize"],
    ):
        pass
    snapshot = graph.get_state(config)
    values = snapshot.values or {}
    flags = [f for f in values.get("flags", {}).values() if f.status in ("open", "approved")]
    return DraftOutcome(
        persona=persona,
        tasks=dict(values.get("tasks") or {}),
        items=pending_items(snapshot),
        flags=flags,
        calibration=values.get("calibration"),
        state=values,
    )


__all__ = ["DraftOutcome", "draft_persona"]
