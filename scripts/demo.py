"""`make demo`: the main job on the embedded default — no API key, no network.

Authors one shipped persona with the rule drivers and the capability ladder (the default reference) into a scratch git
repository under .taskforge/demo (so the project's working tree stays clean), then prints where everything went.
Running it again reports the persona up to date.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / ".taskforge" / "demo"
PERSONA = "portfolio_manager"


def git(*args: str) -> None:
    subprocess.run(["git", *args], cwd=DEMO, check=True, capture_output=True)


def main() -> int:
    if not (DEMO / ".git").is_dir():
        DEMO.mkdir(parents=True, exist_ok=True)
        git("init", "-q")
        git("config", "user.email", "demo@taskforge.invalid")
        git("config", "user.name", "taskforge demo")
        shutil.copytree(ROOT / "skills", DEMO / "skills", dirs_exist_ok=True)
        (DEMO / "README.md").write_text("Scratch repository of `make demo`.\n")
        git("add", "README.md", "skills")
        git("commit", "-q", "-m", "demo: role skills")
    cmd = [
        sys.executable,
        "-m",
        "authoring",
        "author",
        "--persona",
        PERSONA,
        "--sources",
        str(ROOT),
        "--tasksets-dir",
        str(DEMO / "tasksets"),
        "--skills-dir",
        str(DEMO / "skills"),
    ]
    print("$ taskforge author --persona", PERSONA, "(into", DEMO.relative_to(ROOT), ")", flush=True)
    status = subprocess.call(cmd, cwd=DEMO)
    if status == 0:
        log = subprocess.run(
            ["git", "log", "--oneline", "-3"], cwd=DEMO, capture_output=True, text=True
        ).stdout
        print(f"\nscratch repository {DEMO.relative_to(ROOT)}:\n{log}")
        print(f"tasks:       {DEMO.relative_to(ROOT)}/tasksets/workspace_tasks/{PERSONA}/")
        print(
            f"calibration: {DEMO.relative_to(ROOT)}/tasksets/workspace_tasks/calibration/{PERSONA}/calibration.md"
        )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
