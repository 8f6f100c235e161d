"""Harness benchmark: how close concurrent LLM episodes come to the latency-bound ideal, and their memory.

A stub OpenAI-compatible server (its own process, so its work does not share our interpreter) answers
/v1/chat/completions after a fixed latency with a scripted tool-call conversation that solves the mini-world
desk task: one reply with two tool calls, then a final_answer call. `evaluate` runs N such tasks at several
concurrency levels through the real `openai:` agent (tools mode). The ideal wall time is
model requests × latency / concurrency; we report ideal/actual (1.0 = no overhead; target ≥ 0.9 at 32),
medians over runs, next to the same figure for a bare httpx2 client sending the same number of same-sized
requests at the same concurrency: the floor set by the HTTP stack and the machine, which the harness cannot beat. Peak RSS is measured in a fresh process running 100 episodes at once (target < 300 MB).

    python scripts/bench_harness.py [--tasks 64] [--latency 0.05] [--runs 3] [--rss-episodes 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOLVE = [
    ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}}),
    ("add_generative_widget", {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"}),
]


# --- the stub endpoint -------------------------------------------------------------------------------------


def _reply(model: bytes, answered: bool) -> bytes:
    calls = (
        [("final_answer", {"text": "Positions set to Gamma QTD; the note records 5.24%."})]
        if answered
        else SOLVE
    )
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ],
    }
    payload = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": model.decode(),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050},
        }
    ).encode()
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(payload)).encode()
        + b"\r\n\r\n"
        + payload
    )


async def _serve(latency: float) -> None:
    """A minimal keep-alive HTTP/1.1 endpoint. The conversation is stateless: a request that already carries a
    tool result gets the final answer, any other gets the two solving tool calls. The threaded http.server was
    tried first and could not itself reach the bound at 32 connections, so it measured the stub, not us."""
    replies = {answered: _reply(b"bench-stub", answered) for answered in (False, True)}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length)
                await asyncio.sleep(latency)
                writer.write(replies[b'"tool_call_id"' in body])
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes stdin
    server.close()


def serve(latency: float) -> None:
    asyncio.run(_serve(latency))


class StubProcess:
    """The stub in its own process, so its work does not share our interpreter and event loop."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--latency", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline())}/v1"

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


# --- the harness side --------------------------------------------------------------------------------------


def _world_and_tasks(n: int, folder: Path):
    from simulator import World
    from tests.certify.helpers import task
    from tests.conftest import write_world

    world = World.load(write_world(folder / "world"))
    base = task()
    return world, [base.model_copy(update={"id": f"bench_{i:03d}"}) for i in range(n)]


async def _run(world, tasks, url: str, concurrency: int, runs_dir: Path):
    """One evaluation, timed from the first episode to the last (the client is built before the clock starts:
    its one-off SSL setup is per process, not per episode)."""
    from certify.agents import resolve_agent
    from certify.evaluate import evaluate

    agent = resolve_agent("openai:bench-stub", {"base_url": url, "api_key": "bench", "mode": "tools"})
    agent.model.sdk  # noqa: B018  (build it now)
    try:
        start = time.perf_counter()
        run = await evaluate(world, tasks, agent, concurrency=concurrency, runs_dir=runs_dir)
        return run, time.perf_counter() - start
    finally:
        await agent.aclose()


async def _bare(url: str, body: dict, requests: int, concurrency: int) -> float:
    """The floor: the same number of requests, same body, same concurrency, through a bare httpx2 client."""
    import httpx2

    async with httpx2.AsyncClient(limits=httpx2.Limits(max_connections=1000)) as client:
        semaphore = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with semaphore:
                (await client.post(f"{url}/chat/completions", json=body)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(requests)))
        return time.perf_counter() - start


def _first_request(task) -> dict:
    from certify.agents.base import TaskView
    from certify.agents.llm import first_message, system_prompt

    view = TaskView.of(task)
    return {
        "model": "bench-stub",
        "temperature": 0,
        "messages": [
            {"role": "system", "content": system_prompt(view)},
            {"role": "user", "content": first_message(view)},
        ],
        "tools": [{"type": "function", "function": t} for t in view.tools],
    }


def throughput(url: str, n: int, latency: float, levels: list[int], runs: int) -> list[dict[str, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        world, tasks = _world_and_tasks(n, Path(tmp))
        body = _first_request(tasks[0])
        asyncio.run(_run(world, tasks[:4], url, 4, Path(tmp) / "warmup"))
        for concurrency in levels:
            walls, floors, passes, requests = [], [], 0, 0
            for r in range(runs):
                run, wall = asyncio.run(
                    _run(world, tasks, url, concurrency, Path(tmp) / f"c{concurrency}_{r}")
                )
                requests = sum(sum(m["role"] == "assistant" for m in t.transcript) for t in run.trials)
                passes = sum(bool(t.passed) for t in run.trials)
                walls.append(wall)
                floors.append(asyncio.run(_bare(url, body, requests, concurrency)))
            ideal = requests * latency / concurrency
            wall, floor = statistics.median(walls), statistics.median(floors)
            rows.append(
                {
                    "concurrency": concurrency,
                    "episodes": n,
                    "requests": requests,
                    "ideal_s": round(ideal, 3),
                    "wall_s": round(wall, 3),
                    "ideal_over_actual": round(ideal / wall, 3),
                    "bare_client_s": round(floor, 3),
                    "bare_ideal_over_actual": round(ideal / floor, 3),
                    "passed": passes,
                }
            )
    return rows


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def rss(url: str, episodes: int) -> dict[str, float]:
    """Run in a fresh process: peak RSS after imports and a warm-up, then after `episodes` concurrent ones."""
    with tempfile.TemporaryDirectory() as tmp:
        world, tasks = _world_and_tasks(episodes, Path(tmp))
        asyncio.run(_run(world, tasks[:2], url, 2, Path(tmp) / "warmup"))
        baseline = _rss_mb()
        run, wall = asyncio.run(_run(world, tasks, url, episodes, Path(tmp) / "rss"))
        return {
            "episodes": episodes,
            "baseline_mb": round(baseline, 1),
            "peak_mb": round(_rss_mb(), 1),
            "wall_s": round(wall, 3),
            "valid": sum(t.valid for t in run.trials),
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--rss-episodes", type=int, default=100)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rss-only", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return
    if args.rss_only:
        print(json.dumps(rss(args.rss_only, args.rss_episodes)))
        return

    stub = StubProcess(args.latency)
    try:
        rows = throughput(stub.url, args.tasks, args.latency, args.concurrency, args.runs)
        child = subprocess.run(
            [sys.executable, __file__, "--rss-only", stub.url, "--rss-episodes", str(args.rss_episodes)],
            capture_output=True,
            text=True,
            check=True,
        )
        memory = json.loads(child.stdout)
    finally:
        stub.close()

    print(
        f"stub latency {args.latency * 1000:.0f} ms, {args.tasks} episodes x 2 model requests, "
        f"median of {args.runs} runs"
    )
    print(
        f"{'concurrency':>11} {'requests':>8} {'ideal s':>8} {'wall s':>8} {'ideal/actual':>12} "
        f"{'bare client s':>13} {'bare ideal/actual':>17} {'passed':>7}"
    )
    for row in rows:
        print(
            f"{row['concurrency']:>11} {row['requests']:>8} {row['ideal_s']:>8.3f} {row['wall_s']:>8.3f} "
            f"{row['ideal_over_actual']:>12.3f} {row['bare_client_s']:>13.3f} {row['bare_ideal_over_actual']:>17.3f} "
            f"{row['passed']:>4}/{row['episodes']}"
        )
    print(
        f"peak RSS with {memory['episodes']} concurrent episodes: {memory['peak_mb']:.1f} MB "
        f"(after imports and warm-up: {memory['baseline_mb']:.1f} MB; wall {memory['wall_s']:.3f} s, "
        f"{memory['valid']} valid)"
    )
    print(json.dumps({"throughput": rows, "memory": memory}))


if __name__ == "__main__":
    main()
