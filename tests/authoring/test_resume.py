"""A run killed halfway (SIGKILL) and started again gives the same tasks, none lost or duplicated, one commit:
with the default SQLite checkpoints and with Postgres (`--checkpoint-url`), when a server is given."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.authoring.conftest import author_args, git

ROOT = Path(__file__).resolve().parents[2]


def author_cmd(sources: Path, repo: Path, world: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "authoring", *author_args(sources, repo, world, *extra, repeats=2)]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def sigkill_halfway_then_resume(
    sources: Path,
    repo: Path,
    world: Path,
    clean: Path,
    clean_args: tuple[str, ...] = (),
    run_args: tuple[str, ...] = (),
    after_kill: Callable[[], None] | None = None,
) -> None:
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    git(clean, "config", "user.email", "test@example.com")
    git(clean, "config", "user.name", "Test")
    done = subprocess.run(
        author_cmd(sources, clean, world, *clean_args),
        cwd=clean,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr

    proc = subprocess.Popen(
        author_cmd(sources, repo, world, *run_args),
        cwd=repo,
        env=env(),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
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
    if after_kill is not None:
        after_kill()

    resumed = subprocess.run(
        author_cmd(sources, repo, world, *run_args),
        cwd=repo,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stderr
    assert "morning_positions level0" not in resumed.stderr, "finished levels are not authored twice"
    ours = sorted((repo / "tasksets" / "workspace_tasks" / "desk_head").glob("*.json"))
    theirs = sorted((clean / "tasksets" / "workspace_tasks" / "desk_head").glob("*.json"))
    assert [p.name for p in ours] == [p.name for p in theirs] and len(ours) == 10
    assert all(a.read_text() == b.read_text() for a, b in zip(ours, theirs, strict=True))
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert sum(1 for s in subjects if s.startswith("taskforge:")) == 1


def test_sigkill_halfway_then_resume(sources, repo, mini_world_path, tmp_path):
    sigkill_halfway_then_resume(sources, repo, mini_world_path, tmp_path / "clean")
    assert (repo / ".taskforge" / "checkpoints.sqlite").is_file()


def test_sigkill_halfway_then_resume_on_postgres(sources, repo, mini_world_path, tmp_path, postgres_database):
    import psycopg

    reference, shared = postgres_database(), postgres_database()

    def threads() -> set[str]:
        with psycopg.connect(shared) as conn:
            return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}

    def killed_run_is_in_postgres() -> None:
        assert len(threads()) == 1, "the killed run's checkpoints are in Postgres"

    sigkill_halfway_then_resume(
        sources,
        repo,
        mini_world_path,
        tmp_path / "clean",
        ("--checkpoint-url", reference),
        ("--checkpoint-url", shared),
        after_kill=killed_run_is_in_postgres,
    )
    assert not (repo / ".taskforge" / "checkpoints.sqlite").exists(), "no SQLite store was made"
    assert threads() == set(), "the finished run is pruned from the store"
