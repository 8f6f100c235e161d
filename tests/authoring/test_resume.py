"""A run killed halfway (SIGKILL) and started again gives the same tasks, none lost or duplicated, one commit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.authoring.conftest import git

ROOT = Path(__file__).resolve().parents[2]


def author_cmd(sources: Path, repo: Path, world: Path) -> list[str]:
    return [sys.executable, "-m", "authoring", "author", "--persona", "desk_head", "--world", str(world),
            "--sources", str(sources), "--tasksets-dir", str(repo / "tasksets"), "--skills-dir",
            str(repo / "skills"), "--baseline", "lived", "--repeats", "2", "--min-attempts", "2"]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def test_sigkill_halfway_then_resume(sources, repo, mini_world_path, tmp_path):
    clean = tmp_path / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    git(clean, "config", "user.email", "test@example.com")
    git(clean, "config", "user.name", "Test")
    done = subprocess.run(author_cmd(sources, clean, mini_world_path), cwd=clean, env=env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    proc = subprocess.Popen(author_cmd(sources, repo, mini_world_path), cwd=repo, env=env(),
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    seen = []
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if "risk_repair level1" in line:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    assert not (repo / "tasksets").exists(), "nothing is written before the commit node"
    assert "taskforge" not in git(repo, "log", "--format=%s")

    resumed = subprocess.run(author_cmd(sources, repo, mini_world_path), cwd=repo, env=env(), capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr
    assert "morning_positions level0" not in resumed.stderr, "finished levels are not authored twice"
    ours = sorted((repo / "tasksets" / "workspace_tasks" / "desk_head").glob("*.json"))
    theirs = sorted((clean / "tasksets" / "workspace_tasks" / "desk_head").glob("*.json"))
    assert [p.name for p in ours] == [p.name for p in theirs] and len(ours) == 10
    assert all(a.read_text() == b.read_text() for a, b in zip(ours, theirs, strict=True))
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert sum(1 for s in subjects if s.startswith("taskforge:")) == 1
