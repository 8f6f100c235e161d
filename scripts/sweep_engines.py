"""The acceptance sweeps of the engine exports over a whole taskset (too slow for the suite, which checks one task
per level; run once, figures in the README's "Running at scale"):

    python scripts/sweep_engines.py harbor     # export, validate with Harbor's models, oracle 1 / do-nothing 0
    python scripts/sweep_engines.py openenv    # reference >= 0.9 (shaped), 1 (strict); no-op 0; via MCPToolClient
    python scripts/sweep_engines.py rollouts   # every calibration run: exported messages replay to its verdict
    python scripts/sweep_engines.py            # all three

Each prints one line per failure and a summary; the exit status is 1 if any task fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def sweep_harbor(taskset: Path, workers: int) -> bool:
    from certify.evaluate import select_tasks
    from certify.harbor import export_taskset, run_locally, validate

    tasks = select_tasks(taskset)
    with tempfile.TemporaryDirectory(prefix="sweep-harbor-") as tmp:
        start = time.perf_counter()
        exported = export_taskset(taskset, tasks, Path(tmp) / "out")
        export_s = time.perf_counter() - start
        start = time.perf_counter()
        invalid = {e.task_id: problems for e in exported if (problems := validate(e.path))}
        validate_s = time.perf_counter() - start
        for task_id, problems in invalid.items():
            print(f"invalid {task_id}: {problems[0]}")

        def both(index_and_task):
            index, e = index_and_task
            scratch = Path(tmp) / f"scratch-{index}"
            return (
                e.task_id,
                run_locally(e.path, agent="oracle", scratch=scratch),
                run_locally(e.path, agent="noop", scratch=scratch),
            )

        start = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(both, enumerate(exported)))
        run_s = time.perf_counter() - start
    good = 0
    for task_id, oracle, noop in results:
        if oracle.reward == 1 and noop.reward == 0:
            good += 1
        else:
            print(
                f"failed {task_id}: oracle {oracle.reward} {oracle.verdict.get('failure_codes')}, noop {noop.reward}"
            )
    print(
        f"harbor: {len(exported)} exported in {export_s:.1f} s; {len(exported) - len(invalid)}/{len(exported)} valid "
        f"by Harbor's models ({validate_s:.1f} s); {good}/{len(exported)} with oracle reward 1 and do-nothing 0 "
        f"run here without Docker ({run_s:.0f} s, {workers} at a time, "
        f"median {sorted(o.seconds for _, o, _ in results)[len(results) // 2]:.1f} s per oracle run)"
    )
    return not invalid and good == len(exported)


def sweep_openenv(taskset: Path) -> bool:
    from openenv.core.env_server.mcp_types import CallToolAction
    from openenv.core.mcp_client import MCPToolClient

    from certify.episode import reference_calls
    from certify.evaluate import select_tasks
    from certify.mcp_server import EpisodeHost
    from certify.openenv_env import create_workspace_app, serve_app
    from certify.task import TaskSet

    tasks = select_tasks(taskset)
    world = TaskSet.load(taskset).world()

    async def play(env, task, steps, reward):
        await env.reset(task_id=task.id, reward=reward)
        for tool, args in steps:
            await env.step(CallToolAction(tool_name=tool, arguments=args))
        answer = task.eval.reference_answer or "Done."
        return await env.step(CallToolAction(tool_name="final_answer", arguments={"text": answer}))

    async def go(runs: Path):
        host = EpisodeHost(world, tasks, runs_dir=runs, transport="openenv", run_agent="openenv")
        stop, urls = asyncio.Event(), []
        server = asyncio.create_task(
            serve_app(create_workspace_app(host), port=0, announce=urls.append, stop=stop)
        )
        while not urls:
            await asyncio.sleep(0.01)
        rows = []
        try:
            async with MCPToolClient(base_url=urls[0]) as env:
                for task in tasks:
                    shaped = await play(env, task, reference_calls(task), "shaped")
                    strict = await play(env, task, reference_calls(task), "strict")
                    noop_shaped = await play(env, task, [], "shaped")
                    noop_strict = await play(env, task, [], "strict")
                    rows.append(
                        (task.id, shaped.reward, strict.reward, noop_shaped.reward, noop_strict.reward)
                    )
        finally:
            stop.set()
            await server
        return rows

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sweep-openenv-") as tmp:
        rows = asyncio.run(go(Path(tmp)))
    seconds = time.perf_counter() - start
    good = 0
    for task_id, shaped, strict, noop_shaped, noop_strict in rows:
        if shaped >= 0.9 and strict == 1.0 and noop_shaped == 0.0 and noop_strict == 0.0:
            good += 1
        else:
            print(f"failed {task_id}: reference {shaped}/{strict}, no-op {noop_shaped}/{noop_strict}")
    low = min(r[1] for r in rows)
    print(
        f"openenv: {good}/{len(rows)} tasks with the reference >= 0.9 shaped (lowest {low:.3f}) and 1 strict, the "
        f"no-op 0 under both, through openenv-core's MCPToolClient ({4 * len(rows)} episodes in {seconds:.0f} s)"
    )
    return good == len(rows)


def sweep_rollouts(taskset: Path) -> bool:
    from certify.evaluate import load_run, select_tasks
    from certify.rollouts import RolloutSource, replay_messages, rollouts, verdict
    from certify.task import TaskSet

    world = TaskSet.load(taskset).world()
    tasks = {t.id: t for t in select_tasks(taskset)}
    total = same = 0
    start = time.perf_counter()
    for folder in sorted((taskset / "calibration").iterdir()):
        trials = load_run(folder)
        source = RolloutSource(label=folder.name, trials_file=folder / "trials.jsonl", taskset_dir=taskset)
        for record, trial in zip(rollouts(world, tasks, trials, source), trials, strict=True):
            total += 1
            read_back = json.loads(record.model_dump_json())["messages"]
            again = verdict(
                tasks[trial.task_id], replay_messages(world, tasks[trial.task_id], read_back), trial
            )
            if (again.passed, again.share, again.failure_codes) == (
                trial.passed,
                trial.share,
                trial.failure_codes,
            ):
                same += 1
            else:
                print(
                    f"differs {folder.name} {trial.task_id} {trial.agent}: {again.failure_codes} vs {trial.failure_codes}"
                )
    print(
        f"rollouts: {same}/{total} calibration trials replay from their exported messages to the recorded verdict "
        f"({time.perf_counter() - start:.0f} s)"
    )
    return same == total


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sweeps", nargs="*", help="harbor, openenv, rollouts (default: all three)")
    parser.add_argument("--taskset", type=Path, default=SHIPPED)
    parser.add_argument("--workers", type=int, default=2, help="harbor: tasks run here at once")
    args = parser.parse_args()
    chosen = args.sweeps or ["harbor", "openenv", "rollouts"]
    unknown = sorted(set(chosen) - {"harbor", "openenv", "rollouts"})
    if unknown:
        parser.error(f"unknown sweep {unknown[0]!r}")
    ok = True
    for name in chosen:
        if name == "harbor":
            ok &= sweep_harbor(args.taskset, args.workers)
        elif name == "openenv":
            ok &= sweep_openenv(args.taskset)
        else:
            ok &= sweep_rollouts(args.taskset)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
