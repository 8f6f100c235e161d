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
import bisect
import itertools
import json
import statistics
import sys
import urllib.request
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
DEFINITIONS = """\
How a request is measured: as a provider's prefix cache sees it, the tool schemas first (a chat template renders
them into the system turn), then each message in order as compact JSON (so a tool result, a string inside its
message, is counted with its escapes); a token is four characters. Shares are of the input tokens of all the
trials of a level, each request's tokens counted once per request.
- episode: the tokens of each request that begin it exactly as the request before it in the same trial began
  (byte for byte); a trial's first request counts as unshared. `uncached` in the first table is the rest.
- ceiling: the most `episode` could be for these trials: requests only grow (the history is appended, never
  rewritten), so what a trial leaves unshared is at least its last request, at least its mean request: 1 - 1/N.
- runs: `episode`, plus each first request's system prompt and tool schemas when the trial run before it began
  with the same bytes (they are the same for every task, so a provider's cache keeps them across a run)."""


def rendered(body: dict[str, Any]) -> str:
    """The request as the model's prompt is laid out: tools first, then the messages in order."""
    return "\n".join(text for _, text in parts(body))


def parts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The request's parts in prompt order, each with what it is: the stable prefix (tool schemas, system
    prompt), the task's first message, the model's replies, each tool's results (by tool)."""
    out = [("prefix", json.dumps(body.get("tools") or [], separators=(",", ":"), ensure_ascii=False))]
    called: dict[str, str] = {}
    for n, m in enumerate(body["messages"]):
        text = json.dumps(m, separators=(",", ":"), ensure_ascii=False)
        if m["role"] == "system":
            out.append(("prefix", text))
        elif m["role"] == "assistant":
            called.update({c["id"]: c["function"]["name"] for c in m.get("tool_calls") or []})
            out.append(("model", text))
        elif m["role"] == "tool":
            out.append((called.get(m.get("tool_call_id", ""), "tool"), text))
        elif m["role"] == "user" and n == 1:
            out.append(("task", text))
        else:  # a json-mode result, or a nudge: said by the tool it answers when the model's reply named one
            out.append((_json_tool(body["messages"][n - 1]) or "user", text))
    return out


def _json_tool(reply: dict[str, Any]) -> str | None:
    """The tool a json-mode reply called (the result that follows is that tool's), if it parses."""
    try:
        action = json.loads(reply.get("content") or "")
    except (TypeError, ValueError):
        return None
    return str(action.get("tool")) if isinstance(action, dict) and action.get("tool") else None


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


class Template:
    """A llama.cpp server's own rendering of a request (its chat template, the tools included: /apply-template)
    and its tokenizer (/tokenize): the prompt and the tokens its prefix cache compares, instead of compact JSON
    at four characters a token."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/").removesuffix("/v1")

    def post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"{self.url}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=600) as reply:
            return json.loads(reply.read())

    def render(self, body: dict[str, Any]) -> bytes:
        request = {k: body[k] for k in ("messages", "tools") if body.get(k)}
        return str(self.post("/apply-template", request)["prompt"]).encode()

    def ends(self, prompt: bytes) -> list[int]:
        """Where each token of `prompt` ends, in bytes (from the pieces the tokenizer returns)."""
        reply = self.post(
            "/tokenize", {"content": prompt.decode(), "add_special": False, "with_pieces": True}
        )
        ends, at = [], 0
        for token in reply["tokens"]:
            piece = token["piece"]
            at += len(piece.encode()) if isinstance(piece, str) else len(piece)
            ends.append(at)
        if at != len(prompt):
            raise SystemExit(f"{self.url}/tokenize: the pieces make {at} bytes, the prompt {len(prompt)}")
        return ends


def prefix_measure(texts: list[Any], template: Template | None) -> tuple[float, float, Any]:
    """(input tokens, shared tokens, tokens(n): the tokens in the first n units of the last text) of one
    trial's requests, each compared with the one before."""
    if template is None:
        return (
            sum(len(t) for t in texts) / CHARS_PER_TOKEN,
            sum(common_prefix(a, b) for a, b in itertools.pairwise(texts)) / CHARS_PER_TOKEN,
            lambda n: n / CHARS_PER_TOKEN,
        )
    # one tokenisation per trial when every request is a prefix of the last (the history only appended), else
    # one per request; a shared prefix is counted in the tokens of the request that repeats it
    appended = all(b.startswith(a) for a, b in itertools.pairwise(texts))
    ends = [template.ends(texts[-1])] * len(texts) if appended else [template.ends(t) for t in texts]

    def upto(n: int, of: int = -1) -> float:
        return float(bisect.bisect_right(ends[of], n))

    return (
        sum(upto(len(t), i) for i, t in enumerate(texts)),
        sum(upto(common_prefix(texts[i - 1], texts[i]), i) for i in range(1, len(texts))),
        upto,
    )


async def measure(world, task, mode: str, template: Template | None = None) -> dict[str, Any]:
    with ModelServer(play(task, mode)) as server:
        agent = OpenAIAgent(LLMConfig(model="stub-model", base_url=server.base_url, api_key="k", mode=mode))
        try:
            trial = await run_trial(world, task, agent)
        finally:
            await agent.aclose()
        bodies = list(server.requests)
    texts: list[Any] = [rendered(b) if template is None else template.render(b) for b in bodies]
    total, shared, tokens = prefix_measure(texts, template)
    # what the unshared characters are (in compact JSON): no request rewrites the one before, so they are the
    # last request's (the first request's prefix aside, which `runs` counts as shared with the trial before)
    unshared: dict[str, float] = {}
    json_texts = [rendered(b) for b in bodies]
    if json_texts and all(cur.startswith(prev) for prev, cur in itertools.pairwise(json_texts)):
        for what, text in parts(bodies[-1]):
            unshared[what] = unshared.get(what, 0) + (len(text) + 1) / CHARS_PER_TOKEN
    return {
        "task_id": task.id,
        "level": task.difficulty,
        "passed": bool(trial.passed),
        "requests": len(bodies),
        "input_tokens": total,
        "uncached_tokens": total - shared,
        "prefix_share": shared / total if total else 0.0,
        "first": texts[0] if texts else "",
        "first_json": json_texts[0] if json_texts else "",
        "tokens": tokens,
        "unshared": unshared,
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
        # across a run, by what it is: the tokens no cache can serve (the `runs` share's complement)
        "unshared_by_part": _by_part(rows),
        # the most a trial could leave uncached for `runs` to be 90%, and what it leaves (medians)
        "median_uncached_for_90": round(statistics.median(r["input_tokens"] / 10 for r in rows)),
        "median_uncached_across_trials": round(
            statistics.median(r["uncached_tokens"] - r["across_tokens"] for r in rows)
        ),
    }


def _by_part(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The share of the run's unshared tokens each part holds (the prefix's part is what the first trial, or a
    trial after a different prefix, sends anew)."""
    sums: dict[str, float] = {}
    for r in rows:
        for what, tokens in r["unshared"].items():
            sums[what] = sums.get(what, 0) + tokens
        sums["prefix"] = sums.get("prefix", 0) - r["across_json"]
    total = sum(sums.values())
    ranked = sorted(sums.items(), key=lambda kv: -kv[1])
    return {k: round(v / total, 4) for k, v in ranked if total and round(v / total, 4) > 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskset", type=Path, default=ROOT / "tasksets" / "workspace_tasks")
    parser.add_argument("--mode", choices=("tools", "json"), default="tools")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--template",
        metavar="URL",
        help="a llama.cpp server (e.g. scripts/local-model start): measure each request as its chat template "
        "renders it and its tokenizer counts it, instead of compact JSON at four characters a token",
    )
    args = parser.parse_args()
    template = Template(args.template) if args.template else None
    loaded = TaskSet.load(args.taskset)
    world = loaded.world(None)
    tasks = select_tasks(args.taskset)[: args.limit]
    rows = [asyncio.run(measure(world, t, args.mode, template)) for t in tasks]
    # Within an episode no request rewrites the one before it: what is not shared is the first request and each
    # turn's new content. Trials run back to back share more: the first request's system prompt and tool schemas,
    # the same for every task, which a provider's cache keeps across trials. Said apart, as the `runs` figure.
    previous: Any = rows[0]["first"][:0] if rows else ""
    previous_json = ""
    for r in rows:
        r["across_tokens"] = r.pop("tokens")(common_prefix(previous, r["first"]))
        r["across_json"] = common_prefix(previous_json, r["first_json"]) / CHARS_PER_TOKEN
        previous, previous_json = r.pop("first"), r.pop("first_json")
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
    unit = f"tokens of {args.template}'s template" if args.template else "~4 characters a token"
    print(f"input tokens per perfect trial ({args.mode} mode, {args.taskset}, {unit})")
    print(head)
    for name, s in [*report["levels"].items(), ("all", report["all"])]:
        print(
            f"{name:8} {s['trials']:>6} {s['median_input_tokens']:>10} {s['max_input_tokens']:>9} "
            f"{s['median_uncached_tokens']:>9} {s['median_requests']:>8} {s['prefix_share']:>8.1%} "
            f"{s['prefix_share_ceiling']:>8.1%} {s['prefix_share_across_trials']:>6.1%}"
        )
    print()
    print(DEFINITIONS)
    print()
    print("what no cache serves across a run (runs' complement), by part, and how far a trial is from 90%:")
    print(f"{'':8} {'uncached':>9} {'for 90%':>8}  largest parts of the unshared tokens")
    for name, s in [*report["levels"].items(), ("all", report["all"])]:
        top = ", ".join(f"{k} {v:.0%}" for k, v in list(s["unshared_by_part"].items())[:5])
        print(f"{name:8} {s['median_uncached_across_trials']:>9} {s['median_uncached_for_90']:>8}  {top}")
    print(
        "uncached: median tokens a trial sends that its own earlier requests and the trial before do not; "
        "for 90%: a tenth of its input tokens (median), the most it could leave uncached for a 90% share"
    )
    failed = report["all"]["trials"] - report["all"]["passed"]
    if failed:
        print(f"note: {failed} reference play(s) did not pass")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
