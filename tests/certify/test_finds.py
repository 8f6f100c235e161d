"""`finds` (a listing's names looked for in one text at once) answers exactly what `find` answers name by name:
it only skips the names whose first word the text does not hold as a word."""

from __future__ import annotations

from certify.agents.reading import find, finds
from certify.task import TaskSet, load_task
from simulator import DEFAULT_WORLD, Setup, Workspace, World
from tests.conftest import ROOT

ODD = [
    "(Beta) Fund",
    "_under_score",
    "Co.",
    "co",
    "Déjà Vu",
    "ÉTÉ",
    "x",
    "Fund & Co",
    "  spaced",
    "fx-swap",
    "Fx",
]


def expected(text: str, needles: list[str]) -> dict[str, list[int]]:
    return {n: at for n in needles if (at := find(text, n))}


def test_finds_is_find_for_every_shipped_prompt_and_the_listing_names():
    world = World.load(DEFAULT_WORLD)
    ws = Workspace.start(world, Setup.model_validate({"workspace_baseline": next(iter(world.baselines))}))
    listing = ws.call("list_available_widgets", {}).data["widgets"]
    needles = [str(w.get(k) or "") for w in listing for k in ("name", "category", "origin")] + ODD
    taskset = TaskSet.load(ROOT / "tasksets" / "workspace_tasks")
    prompts = [load_task(p, taskset).prompt for p in taskset.task_files()]
    found = 0
    for text in [*prompts, "(beta) fund and co. and _under_score déjà vu été, fx-swap FX", ""]:
        got = finds(text, needles)
        assert got == expected(text, needles), text[:80]
        found += len(got)
    assert found > len(prompts), "the prompts name widgets and apps: the comparison is not of empty results"
