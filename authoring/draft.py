"""`taskforge check --draft`: the authoring run itself, in memory, stopped before anything is written.

The story writer's oracle has to find what `taskforge author` finds, so it is not a second implementation of
the pipeline: it is the same graph (rule author rounds with the gates' feedback, a validator per certified
level, the fairness reviewer per story, the ladder calibration, the fixer's repairs) run with the rule drivers
on an in-memory checkpointer and stopped before `finalize`, the node that starts writing. What it returns are
the items `author` would print (the same flags; review item ids are unique per run), and whether the first run would certify.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.memory import InMemorySaver

from simulator import World

from .graph import RunContext, build_graph, serializer
from .options import RunOptions
from .roles.drivers import rule_drivers
from .run import pending_items, prepare, run_config
from .sources import SourceError, story_paths

if TYPE_CHECKING:
    from .checks import PersonaCheck


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


def check_drafted(
    sources_root: Path,
    report: PersonaCheck,
    world: World,
    tasksets_dir: Path,
    taskset: str,
    reference_agent: str = "ladder",
) -> DraftOutcome | None:
    """Plain `check`'s second half: the draft of every story the facts check resolved, its blocking items
    folded into `report.draft_errors` (story file, facts field, the fix) and what it ran into `report.drafted`.

    A story with a facts error cannot be authored, but the others can, and what would block them does not
    depend on it: they are drafted on their own (a copy of the sources holding the persona and those stories
    only), so one `check` run says every independent mistake. The staircase of fewer stories is not the
    persona's, so a partial draft's persona-wide items are left for the next run. None when nothing can be
    drafted (the persona file itself is in error, or no story resolved)."""
    persona = report.persona
    failed = {Path(e.file).resolve() for e in report.errors}
    kept = [r for r in report.resolved if Path(r.story.file).resolve() not in failed]
    total = len(story_paths(sources_root, persona))
    if report.source is None or not kept:
        report.drafted = {"ran": False, "why": "no story without a facts error to draft"}
        return None
    partial = len(kept) < total
    if partial:
        with tempfile.TemporaryDirectory(prefix="taskforge-draft-") as tmp:
            root = Path(tmp)
            (root / "personas").mkdir()
            shutil.copyfile(report.source.file, root / "personas" / f"{persona}.md")
            folder = root / "stories" / persona
            folder.mkdir(parents=True)
            for r in kept:
                shutil.copyfile(r.story.file, folder / Path(r.story.file).name)
            if (sources_root / "skills").is_dir():
                (root / "skills").symlink_to((sources_root / "skills").resolve(), target_is_directory=True)
            outcome = draft_persona(root, persona, world, tasksets_dir, taskset, reference_agent)
    else:
        outcome = draft_persona(sources_root, persona, world, tasksets_dir, taskset, reference_agent)
    report.draft_errors = draft_errors(report, outcome, partial)
    report.drafted = {
        "ran": True,
        "reference_agent": reference_agent,
        "stories": [r.story.slug for r in kept],
        "stories_left_out": sorted(
            {Path(e.file).stem for e in report.errors} & {p.stem for p in story_paths(sources_root, persona)}
        ),
        "certified": outcome.certified,
        "tasks": len(outcome.tasks),
        "blocking_items": len(outcome.items),
    }
    return outcome


def draft_errors(report: PersonaCheck, outcome: DraftOutcome, partial: bool = False) -> list[SourceError]:
    """The draft's blocking items as `check` errors: each on its story's file and the facts field it comes
    back to (`storyfix`), with the item's reason and the fix. An item whose story and field a facts error
    already names is not said twice (the facts error says the cause; the item is its consequence)."""
    from .storyfix import fix_line, story_fix, story_of

    files = {r.story.slug: r.story.file for r in report.resolved}
    persona_file = report.source.file if report.source is not None else report.persona
    said = [*report.errors, *report.ladder_errors]
    out: list[SourceError] = []
    for item in outcome.items:
        story = story_of(item)
        pointed = story_fix(item)
        key = pointed[0] if pointed is not None else "facts"
        if story in files:
            file = files[story]
            # a gate failure's cause can sit in any field of its story (the gates read the whole draft): any facts
            # error of the story speaks for it, though the item names the field the failing gate points at
            folds = "facts" if item.get("kind") == "gate_failure" else key
            if any(Path(e.file).stem == story and _covers(folds, e.key) for e in said):
                continue
        elif partial:
            continue  # a persona-wide item of a draft without every story
        else:
            file = persona_file
        line = fix_line(item, outcome.items)
        how = (
            line[1].split(": ", 1)[1]
            if line is not None and ": " in line[1]
            else "`taskforge check --draft` prints the run's gate table and its items"
        )
        where = (line[0] + ": ") if line is not None and story not in files else ""
        what = item.get("task_id") or item.get("story") or item.get("persona") or report.persona
        reason = " ".join(str(item.get("reason") or "").split())
        out.append(
            SourceError(
                str(file),
                key,
                f"the first `author` run blocks {what} on it ({item.get('kind')}: {reason}); fix: {where}{how}",
            )
        )
    if not outcome.items and outcome.certified < len(outcome.tasks):
        out.append(
            SourceError(
                str(persona_file),
                "facts",
                f"the first `author` run certifies {outcome.certified} of {len(outcome.tasks)} tasks with no "
                "item to decide: `taskforge check --draft` prints the gate table",
            )
        )
    return out


def _covers(field_name: str, key: str) -> bool:
    """Whether an error on `key` already speaks for `field_name` (the same field, one inside it, or the whole
    facts block)."""
    return field_name == "facts" or key == field_name or key.startswith((f"{field_name}.", f"{field_name}["))


__all__ = ["DraftOutcome", "check_drafted", "draft_errors", "draft_persona"]
