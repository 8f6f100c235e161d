"""The review queue: what the pipeline could not settle, waiting for a person.

Items come from three places: flags that interrupted a persona's graph (blocking: deciding one resumes the
paused thread), minor flags and notes of finished runs (staircase noise, unprobed dead rungs, shortcut risks,
validator remarks), and tasks a re-certification broke. They live in the same SQLite file as the graph's
checkpoints, so they survive restarts; a decision first claims its item with a conditional update, so two
reviewers cannot both decide one item. Every decision is recorded in the certificate lock with its time and
note.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.types import Command

from certify.lock import CertificateLock, Review, now

from .pipeline import Drivers, build_graph

SCHEMA = """
CREATE TABLE IF NOT EXISTS taskforge_review_items (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    thread_id TEXT,
    taskset TEXT,
    persona TEXT,
    story TEXT,
    task_id TEXT,
    kind TEXT NOT NULL,
    severity TEXT NOT NULL,
    reason TEXT NOT NULL,
    evidence TEXT NOT NULL DEFAULT '',
    flag TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    decision TEXT,
    decided_by TEXT,
    decided_at TEXT
)
"""


class ReviewError(Exception):
    pass


class AlreadyDecided(ReviewError):
    pass


@dataclass
class Item:
    id: str
    source: str
    thread_id: str | None
    taskset: str | None
    persona: str | None
    story: str | None
    task_id: str | None
    kind: str
    severity: str
    reason: str
    evidence: str
    flag: dict[str, Any]
    created_at: str
    status: str
    decision: dict[str, Any] | None
    decided_by: str | None
    decided_at: str | None

    @property
    def blocking(self) -> bool:
        return self.source == "graph" and self.severity == "blocker"

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
        return {"id": self.id, "source": self.source, "taskset": self.taskset, "persona": self.persona,
                "story": self.story, "task_id": self.task_id, "kind": self.kind, "severity": self.severity,
                "blocking": self.blocking, "reason": self.reason, "age": self.age(), "status": self.status,
                "created_at": self.created_at, "decision": self.decision}


class ReviewQueue:
    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        db_path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute(SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    # -- filling ------------------------------------------------------------------------------------------
    def add(self, *, item_id: str, source: str, kind: str, severity: str, reason: str, taskset: str | None = None,
            persona: str | None = None, story: str | None = None, task_id: str | None = None,
            thread_id: str | None = None, evidence: str = "", flag: dict[str, Any] | None = None,
            created_at: str | None = None) -> bool:
        with self._db() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO taskforge_review_items (id, source, thread_id, taskset, persona, story, "
                "task_id, kind, severity, reason, evidence, flag, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (item_id, source, thread_id, taskset, persona, story, task_id, kind, severity, reason, evidence,
                 json.dumps(flag or {}), created_at or now()))
            return cur.rowcount == 1

    def sync_threads(self, saver: Any, drivers: Drivers) -> None:
        """Bring the queue up to date with the graph threads in the checkpoint store."""
        graph = build_graph(drivers, saver)
        threads = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
        for thread_id in sorted(threads):
            snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
            values = snapshot.values or {}
            options = values.get("options") or {}
            pending = {i["id"] for t in snapshot.tasks or () for intr in t.interrupts or ()
                       for i in (intr.value.get("items", []) if isinstance(intr.value, dict) else [])}
            for flag in (values.get("flags") or {}).values():
                if flag["status"] != "open":
                    continue
                source = "graph" if flag["id"] in pending else "run"
                if source == "run" and (flag["severity"] == "blocker" or not values.get("result")):
                    continue
                self.add(item_id=f"{flag['id']}", source=source, thread_id=thread_id,
                         taskset=options.get("taskset"), persona=flag.get("persona"), story=flag.get("story"),
                         task_id=flag.get("task_id"), kind=flag["kind"], severity=flag["severity"],
                         reason=flag["reason"], evidence=flag.get("evidence", ""), flag=flag,
                         created_at=flag.get("created_at") or None)

    # -- reading ------------------------------------------------------------------------------------------
    def items(self, *, status: str | None = "open", taskset: str | None = None) -> list[Item]:
        query = "SELECT * FROM taskforge_review_items WHERE 1=1"
        params: list[Any] = []
        if status is not None:
            query += " AND status = ?"
            params.append(status)
        if taskset is not None:
            query += " AND taskset = ?"
            params.append(taskset)
        query += " ORDER BY created_at, id"
        with self._db() as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(query, params).fetchall()
        return [_item(r) for r in rows]

    def get(self, item_id: str) -> Item:
        with self._db() as db:
            db.row_factory = sqlite3.Row
            row = db.execute("SELECT * FROM taskforge_review_items WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                rows = db.execute("SELECT * FROM taskforge_review_items WHERE id LIKE ?", (item_id + "%",)).fetchall()
                if len(rows) == 1:
                    row = rows[0]
        if row is None:
            raise ReviewError(f"no review item '{item_id}' (taskforge review list shows the open ones)")
        return _item(row)

    # -- deciding -----------------------------------------------------------------------------------------
    def claim(self, item_id: str, by: str) -> None:
        """Take the item for a decision; fails if someone else already did."""
        with self._db() as db:
            cur = db.execute("UPDATE taskforge_review_items SET status = 'deciding', decided_by = ? "
                             "WHERE id = ? AND status = 'open'", (by, item_id))
            if cur.rowcount != 1:
                row = db.execute("SELECT status, decided_by FROM taskforge_review_items WHERE id = ?",
                                 (item_id,)).fetchone()
                who = f" by {row[1]}" if row and row[1] else ""
                raise AlreadyDecided(f"item {item_id} is already {row[0] if row else 'gone'}{who}")

    def settle(self, item_id: str, decision: dict[str, Any], status: str = "decided") -> None:
        with self._db() as db:
            db.execute("UPDATE taskforge_review_items SET status = ?, decision = ?, decided_at = ? WHERE id = ?",
                       (status, json.dumps(decision), now(), item_id))

    def release(self, item_id: str) -> None:
        with self._db() as db:
            db.execute("UPDATE taskforge_review_items SET status = 'open', decided_by = NULL WHERE id = ? "
                       "AND status = 'deciding'", (item_id,))


def _item(row: sqlite3.Row) -> Item:
    return Item(id=row["id"], source=row["source"], thread_id=row["thread_id"], taskset=row["taskset"],
                persona=row["persona"], story=row["story"], task_id=row["task_id"], kind=row["kind"],
                severity=row["severity"], reason=row["reason"], evidence=row["evidence"],
                flag=json.loads(row["flag"] or "{}"), created_at=row["created_at"], status=row["status"],
                decision=json.loads(row["decision"]) if row["decision"] else None, decided_by=row["decided_by"],
                decided_at=row["decided_at"])


def decide(queue: ReviewQueue, saver: Any, drivers: Drivers, item_id: str, verdict: str, *, by: str, note: str = "",
           tasksets_dir: Path | None = None, commit: bool = True) -> dict[str, Any]:
    """Apply a person's decision (approve, reject, fix) to one item and say what happened."""
    if verdict not in ("approve", "reject", "fix"):
        raise ReviewError(f"unknown verdict '{verdict}' (approve, reject or fix)")
    item = queue.get(item_id)
    queue.claim(item.id, by)
    decision = {"verdict": verdict, "by": by, "note": note, "at": now()}
    try:
        if item.source == "graph":
            outcome = _resume(saver, drivers, item, decision)
        else:
            outcome = _record(item, decision, drivers, tasksets_dir, commit)
    except Exception:
        queue.release(item.id)
        raise
    still_open = outcome.pop("still_open", False)
    queue.settle(item.id, {**decision, **outcome}, "open" if still_open else "decided")
    return outcome


def _resume(saver: Any, drivers: Drivers, item: Item, decision: dict[str, Any]) -> dict[str, Any]:
    graph = build_graph(drivers, saver)
    config = {"configurable": {"thread_id": item.thread_id}, "recursion_limit": 500}
    snapshot = graph.get_state(config)
    if not snapshot.next:
        raise ReviewError(f"the run {item.thread_id} is no longer waiting for review")
    graph.invoke(Command(resume={item.id: decision}), config, durability="sync")
    after = graph.get_state(config)
    values = after.values or {}
    flag = (values.get("flags") or {}).get(item.id, {})
    result = values.get("result") or {}
    waiting = [i["id"] for t in after.tasks or () for intr in t.interrupts or ()
               for i in (intr.value.get("items", []) if isinstance(intr.value, dict) else [])]
    return {"flag_status": flag.get("status"), "result": (flag.get("decision") or {}).get("result"),
            "run": result.get("status") or ("waiting" if waiting else "running"),
            "commit": result.get("commit"), "summary": result.get("summary", ""), "waiting": waiting,
            "still_open": flag.get("status") == "open"}


def _record(item: Item, decision: dict[str, Any], drivers: Drivers, tasksets_dir: Path | None,
            commit: bool) -> dict[str, Any]:
    """A decision on an item of a finished run or a re-certification: into the lock (and git)."""
    from .gitops import commit_paths, find_repo

    if tasksets_dir is None or item.taskset is None:
        raise ReviewError("this item belongs to a taskset on disk: pass --tasksets-dir")
    root = tasksets_dir / item.taskset
    lock = CertificateLock.load(root)
    if lock is None:
        raise ReviewError(f"no certificate lock in {root}")
    written = [root / "certificates.json"]
    outcome: dict[str, Any] = {}
    if decision["verdict"] == "fix":
        outcome = _fix_on_disk(item, lock, root, drivers)
        if outcome.get("path"):
            written.append(Path(outcome["path"]))
    review = Review(verdict=decision["verdict"], by=decision["by"], at=decision["at"], note=decision["note"],
                    flag=item.id)
    cert = lock.tasks.get(item.task_id or "")
    if cert is not None:
        cert.reviews.append(review)
    elif item.persona in lock.personas:
        record = lock.personas[item.persona]
        record.calibration = {**record.calibration, "reviews": [*record.calibration.get("reviews", []),
                                                                review.model_dump()]}
    lock.write(root)
    if commit:
        sha = commit_paths(find_repo(root), written, f"taskforge: review {item.id} ({decision['verdict']}) "
                                                      f"{item.task_id or item.persona}\n\n{decision['note']}")
        outcome["commit"] = sha
    return outcome


def _fix_on_disk(item: Item, lock: CertificateLock, root: Path, drivers: Drivers) -> dict[str, Any]:
    from certify.calibrate import Defect
    from certify.gates import certify_task
    from certify.lock import fingerprints, task_content_hash
    from certify.task import TaskSet, load_task, parse_task
    from simulator import DEFAULT_WORLD, World

    cert = lock.tasks.get(item.task_id or "")
    if cert is None:
        return {"result": "no task to fix", "still_open": True}
    path = root / cert.path
    raw = json.loads(path.read_text(encoding="utf-8"))
    taskset = TaskSet.load(root)
    world = World.load(taskset.manifest.world or DEFAULT_WORLD)
    defect = Defect(task_id=cert.path, level=raw["difficulty"], fingerprint=[item.reason, item.evidence], attempts=0,
                    repeats=[])
    result = drivers.fixer.repair(raw, defect, [], world)
    if result.task is None:
        return {"result": result.escalate or "no repair", "still_open": True}
    task = parse_task(result.task, str(path), taskset.defaults())
    verdict = certify_task(world, task, str(path))
    if not verdict.certified:
        return {"result": f"the repair does not certify: {verdict.gates}", "still_open": True}
    path.write_text(json.dumps(result.task, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    cert.content_sha256 = task_content_hash(result.task)
    cert.gates = {k: v.to_dict() for k, v in verdict.gates.items()}
    cert.certified = True
    cert.fingerprints = fingerprints(world, taskset.defaults())
    cert.certified_at = now()
    load_task(path, taskset)
    return {"result": result.repaired, "path": str(path)}


__all__ = ["AlreadyDecided", "Item", "ReviewError", "ReviewQueue", "decide"]
