"""Kill points for tests that stop a `taskforge` process at an exact instant of its write→commit window.

Loaded at interpreter start-up when this folder leads PYTHONPATH and TASKFORGE_KILLPOINTS names a pipe's write
end. A point is an audit event of the process: a file renamed into place or removed under TASKFORGE_KILLPOINT_DIR
(files are written whole, a temporary renamed over the target), or a `git` command it runs. Each point is
reported on the pipe as one line (`<n> <kind> <path or git verb>`); at point number TASKFORGE_KILLPOINT_AT (counting
only the lines that contain TASKFORGE_KILLPOINT_MATCH, when set) the process stops there and waits, so the test kills it at that instant and no other (an event, not a sleep). A
Ctrl-C releases a waiting worker thread, as it would in real life: only the main thread is interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

_FD = os.environ.get("TASKFORGE_KILLPOINTS")
_VERBS = ("commit", "add", "status", "ls-files", "log", "rev-parse", "cat-file", "show", "diff")


def _install() -> None:
    fd = int(_FD or "-1")
    folder = os.path.realpath(os.environ.get("TASKFORGE_KILLPOINT_DIR", "/nonexistent"))
    at = int(os.environ.get("TASKFORGE_KILLPOINT_AT", "0") or 0)
    match = os.environ.get("TASKFORGE_KILLPOINT_MATCH", "")
    count = [0, 0]
    guard = threading.Lock()
    released = threading.Event()
    reporting = threading.local()

    def on_int(signum, frame):
        released.set()
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, on_int)

    def point(kind: str, what: str) -> None:
        with guard:
            count[0] += 1
            n = count[0]
            line = f"{n} {kind} {what}"
            count[1] += 1 if match in line else 0
            hit = count[1] == at and match in line
            reporting.busy = True
            try:
                os.write(fd, f"{line}\n".encode())
            finally:
                reporting.busy = False
        if hit:
            os.write(fd, f"paused {n}\n".encode())
            while not released.wait(1.0):
                pass

    def under(path) -> str | None:
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return None
        return real if real.startswith(folder + os.sep) and "/.git/" not in real else None

    def hook(event: str, args: tuple) -> None:
        if getattr(reporting, "busy", False):
            return
        if event == "os.rename" and len(args) >= 2:
            dst = under(args[1])
            if dst:
                point("write", dst)
        elif event == "os.remove" and args:
            path = under(args[0])
            if path:
                point("delete", path)
        elif event == "subprocess.Popen" and len(args) >= 2:
            argv = args[1]
            if isinstance(argv, (list, tuple)) and argv and os.path.basename(os.fsdecode(argv[0])) == "git":
                words = [os.fsdecode(a) for a in argv[1:]]
                point("git", next((w for w in words if w in _VERBS), "other"))

    sys.addaudithook(hook)


if _FD:
    _install()
