"""The review queue: what the pipeline could not settle, waiting for a person, recorded next to the taskset.

Items live in `<taskset>/reviews/<persona>.json`, a reviewable file committed with the persona (and on its
own when a run pauses for review or a decision lands), so losing `.taskforge/` loses nothing that matters.
They come from three places: blockers that paused a persona's run (deciding one resumes that run), minor
flags and notes of finished runs, and tasks a re-certification broke. A newer run of a persona supersedes the
open items of its older runs; deciding a superseded item is refused with that reason. Two people cannot decide
one item, nor resume one run, at the same time: a decision first claims the item (and its run) in the
checkpoint store, and every write of the file happens under an exclusive file lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from certify import now

from .flags import Finding, Flag, finding_of

REVIEWS_DIR = "reviews"
Source = Literal["graph", "run", "recertify"]
Status = Literal["open", "approved", "rejected", "fixed", "resolved", "superseded"]
VERDICT_STATUS: dict[str, Status] = {"approve": "approved", "reject": "rejected", "fix": "fixed"}
STALE_CLAIM = timedelta(minutes=30)


class ReviewError(Exception):
    """A review command cannot do what was asked (unknown item, superseded, corrupt file)."""


class AlreadyDecided(ReviewError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Decision(_Strict):
    verdict: Literal["approve", "reject", "fix"]
    by: str
    at: str
    note: str = ""
    result: str = ""


def list_command(tasksets_dir: Path | str, taskset: str | None = None) -> str:
    """The `taskforge review list` that shows these items: with the folder they are in, so following the hint
    never lists another taskset's items."""
    words = ["taskforge review list"] + ([f"--taskset {taskset}"] if taskset else [])
    return " ".join([*words, f"--tasksets-dir {tasksets_dir}"])


def review_id(flag_id: str, run: str) -> str:
    """A review item's id: its flag's, made unique across runs (a finding re-raised by the next run is another
    item, and `review list --all` never shows one id twice)."""
    return "f" + hashlib.sha256(f"{run}|{flag_id}".encode()).hexdigest()[:9]


class ReviewItem(Finding):
    WRITTEN = (
        "id",
        "flag",
        "run",
        "source",
        "role",
        "taskset",
        "persona",
        "story",
        "task_id",
        "level",
        "kind",
        "check",
        "severity",
        "reason",
        "evidence",
        "suggestion",
        "created_at",
        "status",
        "decision",
        "superseded_by",
    )

    id: str
    flag: str | None = None  # the flag's id inside its run; None in files written before ids were per run
    run: str
    source: Source
    role: str = "gate"
    taskset: str
    check: str = ""
    created_at: str
    status: Status = "open"
    decision: Decision | None = None
    superseded_by: str | None = None

    @property
    def flag_id(self) -> str:
        """The id the item's run knows it by (the key of its decision when the run resumes)."""
        return self.flag or self.id

    @property
    def blocking(self) -> bool:
        return self.source == "graph" and self.severity == "blocker" and self.status == "open"

    def age(self) -> str:
        try:
            seconds = (datetime.now(UTC) - datetime.fromisoformat(self.created_at)).total_seconds()
        except ValueError:
            return "?"
        for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
            if seconds >= size:
                return f"{int(seconds // size)}{unit}"
        return f"{int(seconds)}s"

    def to_dict(self) -> dict[str, Any]:
        return {**self.model_dump(), "blocking": self.blocking, "age": self.age()}


class ReviewFile(_Strict):
    taskset: str
    persona: str
    items: list[ReviewItem] = Field(default_factory=list)

    def render(self) -> bytes:
        return (self.model_dump_json(indent=2) + "\n").encode("utf-8")

    @classmethod
    def parse(cls, data: bytes, where: str) -> ReviewFile:
        try:
            return cls.model_validate_json(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "(root)"
            raise ReviewError(f"{where}: {loc}: {err['msg']}") from exc


def reviews_path(taskset_root: Path, persona: str) -> Path:
    return taskset_root / REVIEWS_DIR / f"{persona}.json"


def read_file(taskset_root: Path, persona: str, data: bytes | None = None) -> ReviewFile:
    """The persona's review file (from `data` when given, else from disk); empty when there is none."""
    path = reviews_path(taskset_root, persona)
    if data is None:
        if not path.is_file():
            return ReviewFile(taskset=taskset_root.name, persona=persona)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ReviewError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return ReviewFile.parse(data, str(path))


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` for a read-modify-write, held outside the repository (no stray files)."""
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    folder = Path(tempfile.gettempdir()) / "taskforge-locks"
    folder.mkdir(exist_ok=True)
    with (folder / f"{key}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ------------------------------------------------------------------------------------------------ from runs
def run_items(
    flags: Iterable[dict[str, Any] | Flag], *, run: str, taskset: str, pending: set[str], finished: bool
) -> list[ReviewItem]:
    """The review items a run's flags amount to: its paused blockers, its decided flags, and (once the run has
    finished) its open minor findings."""
    items = []
    for raw in flags:
        flag = raw if isinstance(raw, Flag) else Flag.model_validate(raw)
        decision = None
        if flag.decision:
            d = flag.decision
            decision = Decision(
                verdict=d.get("verdict", "approve"),
                by=str(d.get("by") or "reviewer"),
                at=str(d.get("at") or now()),
                note=str(d.get("note") or ""),
                result=str(d.get("result") or ""),
            )
        if flag.status == "open":
            if flag.id in pending:
                source: Source = "graph"
            elif finished:
                source = "run"
            else:
                continue
            status: Status = "open"
        elif flag.status in ("approved", "rejected", "fixed") and decision is not None:
            source, status = ("graph" if flag.severity == "blocker" else "run"), flag.status
        else:
            continue
        items.append(
            ReviewItem(
                id=review_id(flag.id, run),
                flag=flag.id,
                run=run,
                source=source,
                role=flag.role,
                taskset=taskset,
                check=flag.check,
                created_at=flag.created_at or now(),
                status=status,
                decision=decision,
                **finding_of(flag),
            )
        )
    return items


def item_flag(item: ReviewItem) -> Flag:
    """The flag a review item was made from, as a finished run's state holds it."""
    role = (
        item.role
        if item.role in ("gate", "validator", "fairness", "calibration", "fixer", "recertify")
        else "gate"
    )
    status = item.status if item.status in ("open", "approved", "rejected", "fixed") else "resolved"
    return Flag(
        id=item.flag_id,
        role=role,
        check=item.check or item.kind,
        status=status,
        created_at=item.created_at,
        decision=item.decision.model_dump() if item.decision else None,
        **finding_of(item),
    )


def merge_run(file: ReviewFile, run: str, items: list[ReviewItem]) -> ReviewFile:
    """The file with `run`'s items replaced by `items`; other runs' open items are superseded by `run`."""
    kept = []
    for item in file.items:
        if item.run == run:
            continue
        if item.status == "open" and item.source != "recertify":
            item = item.model_copy(update={"status": "superseded", "superseded_by": run})
        kept.append(item)
    return file.model_copy(update={"items": [*kept, *items]})


def supersede(file: ReviewFile, by_run: str) -> ReviewFile:
    return merge_run(file, by_run, [i for i in file.items if i.run == by_run])


# ------------------------------------------------------------------------------------------------ finding
def all_items(tasksets_dir: Path, taskset: str | None = None) -> list[ReviewItem]:
    out: list[ReviewItem] = []
    roots = [tasksets_dir / taskset] if taskset else sorted(p for p in tasksets_dir.glob("*") if p.is_dir())
    for root in roots:
        for path in sorted((root / REVIEWS_DIR).glob("*.json")):
            out += read_file(root, path.stem).items
    return out


def find_item(tasksets_dir: Path, item_id: str) -> ReviewItem:
    """An item by id or unique prefix, across every taskset under `tasksets_dir`; the live one (open, newest)
    wins over superseded copies of the same finding."""
    items = all_items(tasksets_dir)
    exact = [i for i in items if i.id == item_id]
    matches = exact or [i for i in items if i.id.startswith(item_id)]
    if not matches:
        raise ReviewError(
            f"no review item '{item_id}' under {tasksets_dir} ({list_command(tasksets_dir)} shows the open "
            "ones; --tasksets-dir names another folder)"
        )
    if len({i.id for i in matches}) > 1:
        raise ReviewError(f"'{item_id}' matches several items: {', '.join(sorted({i.id for i in matches}))}")
    order = {"open": 0, "approved": 1, "rejected": 1, "fixed": 1, "resolved": 2, "superseded": 3}
    return sorted(matches, key=lambda i: (order[i.status], _neg(i.created_at)))[0]


def _neg(stamp: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in stamp)


# ------------------------------------------------------------------------------------------------ claims
def _dead_here(holder: str) -> bool:
    """Was this claim taken by a process of this machine that no longer runs?"""
    _, _, rest = holder.partition("|")
    host, _, pid = rest.rpartition("|")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class Claims:
    """Exclusive claims on items and runs, in the checkpoint store (SQLite file or Postgres), so two reviewers
    never decide one item or resume one run at once. A claim left by a crashed process expires."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.kind = (
            "postgres" if type(saver).__module__.startswith("langgraph.checkpoint.postgres") else "sqlite"
        )
        self._execute(
            "CREATE TABLE IF NOT EXISTS taskforge_claims (key TEXT PRIMARY KEY, holder TEXT NOT NULL, "
            "at TEXT NOT NULL)"
        )

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        if self.kind == "postgres":
            with self.saver._cursor() as cur:  # the saver's own connection (pool or single) and lock
                cur.execute(sql.replace("?", "%s"), params)
                return cur.rowcount
        conn: sqlite3.Connection = self.saver.conn
        with self.saver.lock:
            cur = conn.execute(sql, params)
            conn.commit()
            return cur.rowcount

    def claim(self, key: str, holder: str) -> bool:
        """Claim `key` for `holder`; a claim left by a process of this machine that is gone (killed mid-decision)
        is taken over at once, any other after STALE_CLAIM."""
        stale = (datetime.now(UTC) - STALE_CLAIM).isoformat(timespec="seconds")
        self._execute("DELETE FROM taskforge_claims WHERE key = ? AND at < ?", (key, stale))
        for held in self._holders(key):
            if _dead_here(held):
                self._execute("DELETE FROM taskforge_claims WHERE key = ? AND holder = ?", (key, held))
        return (
            self._execute(
                "INSERT INTO taskforge_claims (key, holder, at) VALUES (?, ?, ?) ON CONFLICT (key) "
                "DO NOTHING",
                (key, f"{holder}|{socket.gethostname()}|{os.getpid()}", now()),
            )
            == 1
        )

    def _holders(self, key: str) -> list[str]:
        sql = "SELECT holder FROM taskforge_claims WHERE key = ?"
        if self.kind == "postgres":
            with self.saver._cursor() as cur:
                cur.execute(sql.replace("?", "%s"), (key,))
                return [row["holder"] for row in cur.fetchall()]
        with self.saver.lock:
            return [row[0] for row in self.saver.conn.execute(sql, (key,))]

    def release(self, key: str) -> None:
        self._execute("DELETE FROM taskforge_claims WHERE key = ?", (key,))


__all__ = [
    "AlreadyDecided",
    "Claims",
    "Decision",
    "ReviewError",
    "ReviewFile",
    "ReviewItem",
    "all_items",
    "file_lock",
    "find_item",
    "list_command",
    "merge_run",
    "read_file",
    "review_id",
    "reviews_path",
    "run_items",
    "supersede",
]
