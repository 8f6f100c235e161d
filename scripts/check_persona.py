"""Author one persona with the rule driver and report, without the pipeline's graph or git: the facts check,
the gates of all twenty tasks, same-level prompt variety and the heuristic staircase. A quick loop for whoever
writes personas and stories.

    python scripts/check_persona.py portfolio_manager [--root .] [--world DIR] [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from authoring.factcheck import FactErrors, resolve  # noqa: E402
from authoring.roles.author import AuthorContext, RuleAuthor  # noqa: E402
from authoring.sources import SourceError, load_sources  # noqa: E402
from authoring.variety import same_level_similarity  # noqa: E402
from certify.agents import make_agent  # noqa: E402
from certify.calibrate import analyse  # noqa: E402
from certify.gates import certify_task  # noqa: E402
from certify.task import Task  # noqa: E402
from certify.trial import run_trial  # noqa: E402
from simulator import DEFAULT_WORLD, World  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("persona")
    parser.add_argument("--root", type=Path, default=ROOT, help="folder holding personas/ and stories/")
    parser.add_argument("--world", type=Path, default=DEFAULT_WORLD)
    parser.add_argument("--baseline", default=None)
    parser.add_argument("--show", action="store_true", help="print every prompt")
    args = parser.parse_args()
    world = World.load(args.world)
    baseline = args.baseline or next((b for b in world.baselines if b.endswith("workspace-a")), "")
    backends = list(world.default_backends)
    try:
        persona, stories = load_sources(args.root, args.persona)
        resolved = [resolve(world, s, backends) for s in stories]
    except (SourceError, FactErrors) as exc:
        print(f"facts: {exc}")
        return 2
    author = RuleAuthor()
    tasks, prompts, ok = [], [], 0
    for r in resolved:
        for w in r.warnings:
            print(f"warning {r.story.slug}: {w}")
        ctx = AuthorContext(world, persona, r, baseline, backends, sorted(world.skills),
                            tuple(x.story.slug for x in resolved))
        for level in range(5):
            task = Task.model_validate(author.draft(ctx, level, [], []).task)
            cert = certify_task(world, task, f"{task.id}.json")
            ok += cert.certified
            tasks.append(task)
            prompts.append((r.story.slug, task.difficulty, task.prompt))
            bad = {k: v.detail for k, v in cert.gates.items() if not v.ok}
            if bad:
                print(f"NOT CERTIFIED {task.id}: {bad}")
            if args.show:
                print(f"{task.id}: {task.prompt}\n")
    print(f"certified {ok}/{len(tasks)}")
    print("variety", {k: round(v, 3) for k, v in same_level_similarity(prompts).items()})
    heuristic = make_agent("heuristic")
    trials = asyncio.run(_trials(world, tasks, heuristic))
    record = analyse(trials, persona=args.persona, taskset="check", agent="heuristic", repeats=1)
    print("heuristic pass rates", {s.level: s.pass_rate for s in record.levels}, "holds" if record.holds else
          "INVERTED", [d.task_id for d in record.defects], [s.task_id for s in record.shortcuts])
    return 0 if ok == len(tasks) and record.holds else 1


async def _trials(world, tasks, agent):
    return [await run_trial(world, t, agent) for t in tasks]


if __name__ == "__main__":
    raise SystemExit(main())
