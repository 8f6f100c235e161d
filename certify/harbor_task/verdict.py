"""Harbor's verifier for an exported taskforge task (run by test.sh; standard library only).

The workspace sidecar (`taskforge serve`) graded every episode with taskforge's grader when it ended and
appended it as a trial to its run; Harbor collected that run from the sidecar, where the agent cannot write.
This turns it into Harbor's reward files under $TASKFORGE_VERIFIER_DIR (default /logs/verifier):

- reward.txt: 1 or 0, the strict verdict of the task's episode;
- reward.json: {"reward": 1|0, "share": the share of checks passed} (Harbor accepts numbers only there);
- verdict.json: the verdict with its failure codes, how the episode ended, and how many episodes were played.

The task's episode is the first MCP session that made a call. A task is one episode, as in taskforge's own
harness: when a second session also made calls (a fresh workspace to try again in), the task fails with
`more_than_one_episode`. No session with a call at all is a do-nothing agent: reward 0, `no_episode`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def trials(runs: Path) -> list[dict]:
    found = []
    for file in sorted(runs.glob("*/trials.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(json.loads(line))
    return found


def judge(task_id: str, recorded: list[dict]) -> dict:
    mine = [t for t in recorded if t.get("task_id") == task_id]
    acted = sorted((t for t in mine if t.get("turns", 0) > 0), key=lambda t: t.get("repeat", 0))
    if not acted:
        return {
            "task_id": task_id,
            "passed": False,
            "share": 0.0,
            "failure_codes": ["no_episode"],
            "episodes": 0,
        }
    first = acted[0]
    codes = list(first.get("failure_codes") or [])
    passed = bool(first.get("valid", True) and first.get("passed"))
    if not first.get("valid", True):
        codes = [first.get("invalid_reason") or "invalid_trial", *codes]
    if len(acted) > 1:
        passed, codes = False, ["more_than_one_episode", *codes]
    return {
        "task_id": task_id,
        "passed": passed,
        "share": float(first.get("share") or 0.0),
        "failure_codes": codes,
        "ended_by": first.get("ended_by"),
        "turns": first.get("turns", 0),
        "invalid_calls": first.get("invalid_calls", 0),
        "agent": first.get("agent"),
        "episodes": len(acted),
    }


def main(expected_file: str) -> int:
    task_id = json.loads(Path(expected_file).read_text(encoding="utf-8"))["task_id"]
    runs = Path(os.environ.get("TASKFORGE_RUNS_DIR") or "/srv/runs")
    out = Path(os.environ.get("TASKFORGE_VERIFIER_DIR") or "/logs/verifier")
    out.mkdir(parents=True, exist_ok=True)
    verdict = judge(task_id, trials(runs) if runs.is_dir() else [])
    reward = 1 if verdict["passed"] else 0
    (out / "reward.txt").write_text(f"{reward}\n", encoding="utf-8")
    (out / "reward.json").write_text(
        json.dumps({"reward": reward, "share": verdict["share"]}) + "\n", encoding="utf-8"
    )
    (out / "verdict.json").write_text(json.dumps(verdict, indent=2) + "\n", encoding="utf-8")
    print(f"{task_id}: reward {reward} ({', '.join(verdict['failure_codes']) or 'every check holds'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
