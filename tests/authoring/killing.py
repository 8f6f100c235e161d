"""Running `taskforge` as a user types it, into a destination repository of its own, and stopping it at an exact
kill point (see tests/killpoints/sitecustomize.py): the process reports each point on a pipe and waits at the
chosen one, so a kill lands there however loaded the machine is."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KILLPOINTS = ROOT / "tests" / "killpoints"
TASKFORGE = str(Path(sys.executable).parent / "taskforge")
PATIENCE = 600  # seconds a step may take on a loaded machine before the test gives up (never slept on)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def new_repo(path: Path, initial_commit: bool = False) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "T"]):
        git(path, *args)
    if initial_commit:
        (path / "README.md").write_text("tasksets\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "init")
    return path


def env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(KILLPOINTS), str(ROOT)]),
        "COLUMNS": "200",
        **extra,
    }


def taskforge(args: list[str], cwd: Path, timeout: float = PATIENCE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TASKFORGE, *args], cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout
    )


@dataclass
class Stopped:
    """A run stopped at a kill point (or one that finished before reaching it)."""

    points: list[str] = field(default_factory=list)
    paused: int | None = None
    returncode: int | None = None
    stderr: str = ""


def run_until(
    args: list[str], cwd: Path, watch: Path, at: int, how: str = "sigkill", match: str | None = None
) -> Stopped:
    """Run `taskforge args` and kill it (SIGKILL, or Ctrl-C to its process group) at its `at`-th kill point
    under `watch` — or, with `match`, at the `at`-th point whose line contains `match`. `at=0` never kills:
    the run finishes and its points are counted."""
    read, write = os.pipe()
    extra = {
        "TASKFORGE_KILLPOINTS": str(write),
        "TASKFORGE_KILLPOINT_DIR": str(watch),
        "TASKFORGE_KILLPOINT_MATCH": match or "",
    }
    proc = subprocess.Popen(
        [TASKFORGE, *args],
        cwd=cwd,
        env=env(**extra, TASKFORGE_KILLPOINT_AT=str(at)),
        pass_fds=(write,),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(write)
    out = Stopped()
    buffer = b""
    deadline = time.monotonic() + PATIENCE
    try:
        while True:
            ready, _, _ = select.select([read], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"taskforge {' '.join(args[:1])} reported nothing for {PATIENCE}s"
            chunk = os.read(read, 65536)
            if not chunk:
                break  # the process (and every child holding the pipe) is gone: it finished
            buffer += chunk
            *lines, rest = buffer.split(b"\n")
            buffer = rest
            for raw in lines:
                line = raw.decode()
                if line.startswith("paused "):
                    out.paused = int(line.split()[1])
                    break
                out.points.append(line)
            if out.paused is not None:
                break
        if out.paused is not None:
            if how == "sigkill":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=PATIENCE)
    finally:
        os.close(read)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out.returncode = proc.returncode
    out.stderr = proc.stderr.read() if proc.stderr else ""
    return out
