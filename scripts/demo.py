"""`make demo`: the main job on the embedded default (no API key, no network).

Until the authoring pipeline lands this checks the embedded default world and certifies the external
compatibility corpus when it is present beside the project.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT.parent / "shared" / "compat" / "workspacebench"
TASKFORGE = [sys.executable, "-m", "authoring"]


def run(*args: str) -> int:
    print("$ taskforge " + " ".join(args), flush=True)
    return subprocess.call([*TASKFORGE, *args], cwd=ROOT)


def main() -> int:
    status = run("world", "check")
    if COMPAT.is_dir():
        status |= run("world", "check", "--world", str(COMPAT / "world"))
        status |= run("certify", "--world", str(COMPAT / "world"), str(COMPAT / "tasksets" / "workspace_tasks"))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
