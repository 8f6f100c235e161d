"""How often a word or character similarity matcher finds a taskset's described targets: for each measure of the
lexical ensemble (`certify.shortcuts.lexical`), the number of Find tasks whose target is its top pick among
the pool an outside player looks in (the board's placed widgets for a repair, the app's catalog otherwise),
a tie at the top counted as the share a random tie-break wins. A player that picks by one such measure, with an
executor that gets the rest right, passes about that many tasks; the worst measures and the mean are printed
per level, analyze asks (whose judged answer a matcher does not write) counted apart.

Each level's line also gives the plain top word-overlap chooser over the WHOLE prompt (`lexical.top_share`: the
entry sharing the most words with everything the agent reads, a tie of k counted 1/k) and the tasks it takes:
for an analyze ask, what the chooser passes with an agent that writes the analysis.

    .venv/bin/python scripts/lexical_shares.py [TASKSET_DIR] [--top N] [--stories]

With --stories it also lists, per shipped story, the fields every Find request says whatever the description
(the dashboard, the why, the deadline) that alone hand those measures the target (`factcheck.
said_exposure_warnings`): what no wording the rule author picks can take out, only a rewording of the story.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter, defaultdict
from pathlib import Path

from certify.shortcuts.lexical import QUERIES, find_pool, measures, rankings, top_share
from certify.task import TaskSet, load_task
from simulator import World


def wins(prompt: str, entries: list[dict[str, str]], mine: int) -> dict[str, float]:
    """Per measure, the share of a random tie-break that picks the target (1 when it is the top pick alone)."""
    out: dict[str, float] = {}
    for query, reword in QUERIES.items():
        for measure, scores in rankings(reword(prompt), entries):
            top = max(scores)
            if top > 0 and math.isclose(scores[mine], top, rel_tol=1e-9, abs_tol=1e-12):
                out[f"{query}: {measure}"] = 1 / sum(1 for s in scores if math.isclose(s, top, rel_tol=1e-9))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("taskset", nargs="?", default="tasksets/workspace_tasks")
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--stories", action="store_true")
    args = parser.parse_args()
    taskset = TaskSet.load(Path(args.taskset))
    world = taskset.world(None)
    every = measures()
    per: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    counts: Counter[tuple[str, str]] = Counter()
    top: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for path in taskset.task_files():
        task = load_task(path, taskset)
        hidden = next((h.value for h in (task.meta.hidden if task.meta else []) if h.kind == "target"), None)
        if hidden is None:
            continue
        found = find_pool(world, task, hidden)
        if found is None:
            continue
        group = "analyze" if task.eval.judged else "graded"
        key = (task.difficulty, group)
        counts[key] += 1
        per[key].update(wins(task.prompt, *found))
        share = top_share(task.prompt, *found)
        if share:
            top[key][task.id] = share
    for key in sorted(counts):
        level, group = key
        n, got = counts[key], per[key]
        mean = sum(got.values()) / len(every)
        over = sum(1 for m in every if got[m] > 0.1 * n)
        worst = ", ".join(f"{m} {got[m]:.1f}" for m, _ in got.most_common(args.top))
        print(
            f"{level} {group}: {n} tasks; mean {mean:.2f}/{n} per measure; {over}/{len(every)} measures over 10%"
        )
        print(f"    worst: {worst or 'none'}")
        taken = ", ".join(f"{t} {v:.2f}" for t, v in sorted(top[key].items()))
        print(f"    whole-prompt top overlap: {sum(top[key].values()):.2f}/{n} ({taken or 'none'})")
    if args.stories:
        stories(world)


def stories(world: World, root: Path = Path(".")) -> None:
    from authoring.checks import check_persona
    from authoring.factcheck import said_exposure_warnings

    backends = list(world.default_backends)
    for persona in sorted(p.stem for p in (root / "personas").glob("*.md")):
        for resolved in check_persona(root, persona, world, backends, ladder=False).resolved:
            for warning in said_exposure_warnings(world, resolved, backends):
                print(f"{resolved.story.file}: {warning}")


if __name__ == "__main__":
    main()
