"""Running the authoring graph for one persona: up-to-date check, checkpointer, resume, outcome.

One graph thread per persona run, keyed by the taskset, the persona and a hash of everything the run reads
(persona and story files, the world, the author driver): rerunning the same command resumes a killed run where
its last checkpoint left it; changing a story starts a fresh thread.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from certify.lock import CertificateLock, code_fingerprints, fingerprints, task_content_hash
from simulator import World

from .pipeline import Drivers, RunOptions, build_graph, calibration_dir, taskset_defaults
from .sources import SourceError, load_persona, story_paths

DEFAULT_CHECKPOINTS = Path(".taskforge") / "checkpoints.sqlite"


class RunError(Exception):
    """The run cannot start (bad configuration, dirty paths, missing optional dependency)."""


@dataclass
class Outcome:
    status: str  # committed | certified | up_to_date | needs_review | rejected
    summary: str
    thread_id: str
    items: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)


def sources_hash(options: RunOptions, world: World, driver: str) -> str:
    """Everything a persona's tasks are derived from, besides the code (which the lock fingerprints)."""
    root = Path(options.sources_root)
    persona = load_persona(root, options.persona)
    digest = hashlib.sha256()
    for path in [Path(persona.file), *story_paths(root, options.persona)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(world.fingerprint.encode())
    digest.update(f"{driver}|{options.reference_agent}|{options.repeats}|{options.taskset}".encode())
    return digest.hexdigest()


def thread_id(options: RunOptions) -> str:
    return f"{options.taskset}:{options.persona}:{options.sources_sha256[:12]}"


def up_to_date(options: RunOptions, world: World) -> bool:
    root = options.taskset_root
    lock = CertificateLock.load(root) if (root / "certificates.json").is_file() else None
    record = lock.personas.get(options.persona) if lock else None
    if lock is None or record is None or record.sources_sha256 != options.sources_sha256:
        return False
    current = fingerprints(world, taskset_defaults(options))
    for task_id in record.tasks:
        cert = lock.tasks.get(task_id)
        if cert is None or not cert.certified or cert.fingerprints != current:
            return False
        path = root / cert.path
        if not path.is_file() or task_content_hash(json.loads(path.read_text(encoding="utf-8"))) != cert.content_sha256:
            return False
    return (calibration_dir(options) / "calibration.json").is_file()


@contextmanager
def checkpointer(url: str | None, path: Path = DEFAULT_CHECKPOINTS) -> Iterator[Any]:
    """SQLite under .taskforge/ by default; Postgres when a postgresql:// URL is given."""
    if url and url.startswith(("postgresql://", "postgres://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
        except ImportError as exc:
            raise RunError("--checkpoint-url postgresql://… needs langgraph-checkpoint-postgres: "
                           "pip install -e '.[postgres]'") from exc
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver
        return
    if url:
        raise RunError(f"unsupported --checkpoint-url '{url}' (use postgresql://… or omit it for SQLite)")
    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


def pending_items(snapshot: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for task in snapshot.tasks or ():
        for intr in task.interrupts or ():
            value = intr.value if isinstance(intr.value, dict) else {}
            items.extend(value.get("items", []))
    return items


def run_persona(options: RunOptions, drivers: Drivers, *, driver_name: str, checkpoint_url: str | None = None,
                checkpoint_path: Path = DEFAULT_CHECKPOINTS, force: bool = False) -> Outcome:
    world = World.load(options.world)
    try:
        options.sources_sha256 = sources_hash(options, world, driver_name)
    except SourceError:
        raise
    tid = thread_id(options)
    if not force and up_to_date(options, world):
        return Outcome("up_to_date", f"{options.persona}: sources and certificates unchanged; up to date", tid)
    if force:
        tid += ":" + hashlib.sha256(str(code_fingerprints()).encode()).hexdigest()[:6]
    if options.commit:
        _check_clean(options)
    config = {"configurable": {"thread_id": tid}, "recursion_limit": 500}
    with checkpointer(checkpoint_url, checkpoint_path) as saver:
        graph = build_graph(drivers, saver)
        snapshot = graph.get_state(config)
        if snapshot.values and not snapshot.next and snapshot.values.get("result"):
            return _outcome(tid, snapshot)
        if snapshot.values and pending_items(snapshot):
            return _outcome(tid, snapshot)
        if snapshot.values and snapshot.next:
            drivers.progress(f"resuming {tid} at {', '.join(snapshot.next)}")
            graph.invoke(None, config, durability="sync")
        else:
            graph.invoke({"options": options.model_dump()}, config, durability="sync")
        return _outcome(tid, graph.get_state(config))


def _outcome(tid: str, snapshot: Any) -> Outcome:
    values = snapshot.values or {}
    items = pending_items(snapshot)
    if items:
        return Outcome("needs_review", f"{len(items)} item(s) wait for review (taskforge review list)", tid, items,
                       state=values)
    result = values.get("result") or {}
    status = result.get("status", "incomplete")
    return Outcome(status, result.get("summary", status), tid, result=result, state=values)


def _check_clean(options: RunOptions) -> None:
    from .gitops import GitError, dirty_paths, find_repo

    root = options.taskset_root
    anchor = next(p for p in [root, *root.resolve().parents] if p.exists())
    try:
        repo = find_repo(anchor)
    except GitError as exc:
        raise RunError(str(exc)) from exc
    top = Path(repo.working_tree_dir or ".").resolve()
    paths = [p for p in (root / options.persona, root / "certificates.json", calibration_dir(options),
                         Path(options.skills_dir)) if p.exists() and p.resolve().is_relative_to(top)]
    dirty = dirty_paths(repo, paths) if paths else []
    if dirty:
        raise RunError("uncommitted changes in paths this persona writes (commit or stash them first, or use "
                       f"--no-commit): {', '.join(dirty[:5])}")
