"""The measure of a frozen outsider persona (rounds 4, 5 and 6): plain `check` names every story the first `author`
run blocks on, and with check clean that run certifies 20/20. One home, so a round that freezes new personas
holds them to the same measure rather than a copy of it."""

from __future__ import annotations

from pathlib import Path

from authoring.checks import check_persona
from authoring.draft import draft_persona
from authoring.overlay import world_for
from simulator import World


def check_names_what_the_first_run_blocks_on(
    root: Path, persona: str, world_dir: Path | None, refused: set[str], tmp_path: Path
) -> None:
    """`refused` are the stories plain check refuses, each for a Ground fact its document names last (the
    battery's tail skimmer would take it); the run (as `check --draft` and the first `author` run run it) may
    block on those and nothing else."""
    world = World.load(world_for(root, world_dir))
    report = check_persona(root, persona, world)
    found = [*report.errors, *report.ladder_errors]
    assert {Path(e.file).stem for e in found} == refused, [str(e) for e in found]
    assert all(e.key == "facts.governance.fact" and "names last" in e.message for e in found)
    drafted = draft_persona(root, persona, world, tmp_path / "tasksets", "workspace_tasks")
    blocked = {i["task_id"].rsplit("_level", 1)[0] for i in drafted.items if i.get("severity") == "blocker"}
    assert blocked <= refused, [i["reason"] for i in drafted.items]
    if not found:
        assert drafted.ok and drafted.certified == 20, [i["reason"] for i in drafted.items]
