"""Prose faults per class (certify/prose.py), over a committed taskset or over personas drafted by the rule author.

    python scripts/prose_faults.py --taskset tasksets/workspace_tasks
    python scripts/prose_faults.py --sources . --persona portfolio_manager ...   (all personas of --sources: none)
    python scripts/prose_faults.py --sources tests/authoring/fixtures/new_personas

Drafting is the rule author's own compilation (the request the `author` run would commit, before any gate), so
the figures measure the phrasebook, not what the gate's author rounds made of it. `-v` prints each fault.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

from authoring.checks import check_persona
from authoring.overlay import world_for
from authoring.roles.author import rule_drafts
from authoring.taskset import STANDARD_DEFAULTS
from certify import FAULT_CLASSES, Task, parse_task, prompt_faults
from simulator import DEFAULT_WORLD, World


def drafted(sources: Path, personas: list[str]) -> tuple[World, list[Task]]:
    world = World.load(world_for(sources, None) if (sources / "overlay").is_dir() else DEFAULT_WORLD)
    tasks = []
    for persona in personas or sorted(p.stem for p in (sources / "personas").glob("*.md")):
        tasks += rule_drafts(world, check_persona(sources, persona, world))
    return world, tasks


def committed(root: Path) -> tuple[World, list[Task]]:
    world = World.load(DEFAULT_WORLD)
    tasks = []
    for path in sorted(root.glob("*/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "prompt" in data:
            tasks.append(parse_task(data, path.name, STANDARD_DEFAULTS))
    return world, tasks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskset", type=Path)
    parser.add_argument("--sources", type=Path)
    parser.add_argument("--persona", action="append", default=[])
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if (args.taskset is None) == (args.sources is None):
        parser.error("give --taskset or --sources")
    world, tasks = committed(args.taskset) if args.taskset else drafted(args.sources, args.persona)
    per_class: collections.Counter[str] = collections.Counter()
    faulty = set()
    for task in tasks:
        for fault in prompt_faults(world, task):
            per_class[fault.kind] += 1
            faulty.add(task.id)
            if args.verbose:
                print(f"{task.id}: {fault}")
    print(f"{len(tasks)} task(s), {len(faulty)} with a fault, {sum(per_class.values())} fault(s)")
    for kind in FAULT_CLASSES:
        print(f"  {kind:20} {per_class[kind]}")
    return 1 if faulty else 0


if __name__ == "__main__":
    sys.exit(main())
