"""What a perfect trial costs in input tokens (issue 24): every task of a taskset played by a scripted model over
the wire — the task's reference calls, then final_answer — through the real openai:<model> agent and client, and
each request the server receives measured.

    .venv/bin/python scripts/trial_cost.py [--taskset tasksets/workspace_tasks] [--mode tools|json] [--json]

A request is measured as a provider's prefix cache sees it: the tool schemas first (a chat template renders them
into the system turn), then the messages in order, each serialised compactly; tokens are estimated at four
characters. Printed per level and overall: median and max input tokens per trial, median uncached tokens, and
three shares of the input tokens:

- `episode`: in a prefix each request shares byte for byte with the request before it in the same episode
  (what a prefix cache serves within one trial; the first request counts as unshared, and the median uncached
  figure is this one's complement).
- `ceiling`: the most `episode` could be for these trials however the requests were laid out. Requests only grow
  (the history is appended, never rewritten), so a trial's unshared part within its episode is at least its
  last request, which is at least the mean request: the share is at most 1 - 1/N for N requests, and that
  bound is met only if nothing new were sent after the first request.
- `runs`: as `episode`, and the first request's prefix counted as shared when the trial before it (the tasks
  run back to back) began with the same bytes — the system prompt and tool schemas, which are the same for every
  task, so a provider's cache keeps them across the trials of a run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from certify.agents.llm import LLMConfig, OpenAIAgent  # noqa: E402
from certify.episode import reference_calls  # noqa: E402
from certify.evaluate import select_tasks  # noqa: E402
from certify.task import TaskSet  # noqa: E402
from certify.trial import run_trial  # noqa: E402
from tests.model_server import ModelServer, completion  # noqa: E402

CHARS_PER_TOKEN = 4


def rendered(body: dict[str, Any]) -> str:
    """The request as the model's prompt is laid out: tools first, then the messages in order."""
    parts = [json.dumps(body.get("tools") or [], separators=(",", ":"), ensure_ascii=False)]
    parts += [json.dumps(m, separators=(",", ":"), ensure_ascii=False) for m in body["messages"]]
    return "\n".join(parts)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix (a binary search over slice comparisons, which run in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def play(task, mode: str) -> list[Any]:
    steps = [*reference_calls(task), ("final_answer", {"text": task.eval.reference_answer or "Done."})]
    if mode == "tools":
        return [completion(tool_calls=[step]) for step in steps]
    return [completion(json.dumps({"tool": t, "args": a})) for t, a in steps]


async def measure(world, task, mode: str) -> dict[str, Any]:
    with ModelServer(play(task, mode)) as server:
        agent = OpenAIAgent(LLMConfig(model="stub-model", base_url=server.base_url, api_key="k", mode=mode))
        try:
            trial = await run_trial(world, task, agent)
        finally:
            await agent.aclose()
        bodies = list(server.requests)
    texts = [rendered(b) for b in bodies]
    total = sum(len(t) for t in texts)
    shared = sum(common_prefix(prev, cur) for prev, cur in itertools.pairwise(texts))
    return {
        "task_id": task.id,
        "level": task.difficulty,
        "passed": bool(trial.passed),
        "requests": len(bodies),
        "input_tokens": total / CHARS_PER_TOKEN,
        "uncached_tokens": (total - shared) / CHARS_PER_TOKEN,
        "prefix_share": shared / total if total else 0.0,
        "first": texts[0] if texts else "",
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    total = sum(r["input_tokens"] for r in rows)
    episode = sum(r["input_tokens"] * r["prefix_share"] for r in rows)
    mean_request = sum(r["input_tokens"] / r["requests"] for r in rows if r["requests"])
    return {
        "trials": len(rows),
        "passed": sum(r["passed"] for r in rows),
        "median_input_tokens": round(statistics.median(r["input_tokens"] for r in rows)),
        "max_input_tokens": round(max(r["input_tokens"] for r in rows)),
        "median_uncached_tokens": round(statistics.median(r["uncached_tokens"] for r in rows)),
        "prefix_share": round(episode / total, 4),
        "prefix_share_ceiling": round(1 - mean_request / total, 4),
        "prefix_share_across_trials": round((episode + sum(r["across_tokens"] for r in rows)) / total, 4),
        "median_requests": statistics.median(r["requests"] for r in rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskset", type=Path, default=ROOT / "tasksets" / "workspace_tasks")
    parser.add_argument("--mode", choices=("tools", "json"), default="tools")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    loaded = TaskSet.load(args.taskset)
    world = loaded.world(None)
    tasks = select_tasks(args.taskset)[: args.limit]
    rows = [asyncio.run(measure(world, t, args.mode)) for t in tasks]
    # Within an episode no request rewrites the one before it: what is not shared is the first request and each
    # turn's new content. Trials run back to back share more: the first request's system prompt and tool schemas,
    # the same for every task, which a provider's cache keeps across trials. Said apart, as the `runs` figure.
    previous = ""
    for r in rows:
        r["across_tokens"] = common_prefix(previous, r["first"]) / CHARS_PER_TOKEN
        previous = r.pop("first")
    levels = sorted({r["level"] for r in rows})
    report = {
        "mode": args.mode,
        "all": summary(rows),
        "levels": {lv: summary([r for r in rows if r["level"] == lv]) for lv in levels},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    head = (
        f"{'':8} {'trials':>6} {'median in':>10} {'max in':>9} {'uncached':>9} {'requests':>8} "
        f"{'episode':>8} {'ceiling':>8} {'runs':>6}"
    )
    print(f"input tokens per perfect trial ({args.mode} mode, {args.taskset}, ~4 characters a token)")
    print(head)
    for name, s in [*report["levels"].items(), ("all", report["all"])]:
        print(
            f"{name:8} {s['trials']:>6} {s['median_input_tokens']:>10} {s['max_input_tokens']:>9} "
            f"{s['median_uncached_tokens']:>9} {s['median_requests']:>8} {s['prefix_share']:>8.1%} "
            f"{s['prefix_share_ceiling']:>8.1%} {s['prefix_share_across_trials']:>6.1%}"
        )
    print(
        "share of input tokens in a stable prefix — episode: shared with the request before in the same trial "
        "(uncached = the rest); ceiling: the most `episode` can be with N requests a trial (1 - 1/N, history "
        "appended, never rewritten); runs: also counting the first request's system prompt and tool schemas, "
        "the same for every task, as shared with the trial run before it"
    )
    failed = report["all"]["trials"] - report["all"]["passed"]
    if failed:
        print(f"note: {failed} reference play(s) did not pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
