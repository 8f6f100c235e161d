"""Running the authoring graph for one persona: the destination check, the checkpointer, resume, outcome.

One graph thread per run identity (every input that changes the output, plus the destination): rerunning the
same command resumes a killed run where its last checkpoint left it; changing an input starts a new run, which
supersedes the persona's older runs (their open review items are closed, their threads deleted). "Up to date"
is read from the destination repository, never from the local checkpoint store: a run's output counts once HEAD
holds it and the working tree leaves it alone. Finished runs are pruned from the store, so it holds only runs
that are in progress or waiting for review.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from certify import LOCK_FILE, code_prints
from simulator import World

from .destination import holding, tree_holding
from .failures import RoleUnavailable
from .flags import Flag
from .gitops import (
    GitError,
    PendingEdits,
    commit_paths,
    dirty_paths,
    find_repo,
    head_bytes,
    head_files,
    head_sha,
)
from .graph import CheckpointFormatError, Drivers, RunContext, build_graph, serializer
from .heap import settled_heap
from .identity import RunInputs, run_inputs, thread_id, thread_prefix
from .journal import foreign, settle, write_files
from .options import RunOptions
from .outputs import foreign_edits, persona_paths
from .review import ReviewFile, file_lock, merge_run, read_file, review_id, reviews_path, run_items, supersede
from .taskset import resolve_baseline, taskset_defaults

DEFAULT_CHECKPOINTS = Path(".taskforge") / "checkpoints.sqlite"


class RunError(Exception):
    """The run cannot start or finish (bad configuration, pending edits, unreadable store)."""


@dataclass
class Outcome:
    status: str  # committed | certified | up_to_date | needs_review | rejected | incomplete
    summary: str
    thread_id: str
    items: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    open_items: int = 0


@contextmanager
def checkpointer(url: str | None, path: Path = DEFAULT_CHECKPOINTS) -> Iterator[Any]:
    """SQLite under .taskforge/ by default; Postgres when a postgresql:// URL is given. Either way the
    serializer revives only our own state models."""
    if url and url.startswith(("postgresql://", "postgres://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row
        except ImportError as exc:
            raise RunError(
                "--checkpoint-url postgresql://… needs langgraph-checkpoint-postgres: "
                "pip install -e '.[postgres]'"
            ) from exc
        with Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as pg_conn:
            pg_saver = PostgresSaver(pg_conn, serde=serializer())
            pg_saver.setup()
            yield pg_saver
        return
    if url:
        raise RunError(f"unsupported --checkpoint-url '{url}' (use postgresql://… or omit it for SQLite)")
    from langgraph.checkpoint.sqlite import SqliteSaver

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False)
        try:
            # checkpoints are whole states (hundreds of KB): large pages make writing and deleting them walk
            # far fewer overflow pages (only takes effect while the file is new)
            conn.execute("PRAGMA page_size = 65536")
            saver = SqliteSaver(conn, serde=serializer())
            saver.setup()
            yield saver
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise RunError(
            f"the checkpoint store {path} is unreadable ({exc}); move it away to start afresh "
            "(review items are kept next to the tasksets, in reviews/)"
        ) from exc


def pending_items(snapshot: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for task in snapshot.tasks or ():
        for intr in task.interrupts or ():
            value = intr.value if isinstance(intr.value, dict) else {}
            items.extend(value.get("items", []))
    return items


@contextmanager
def invoke_errors(error: type[Exception], resume: str) -> Iterator[None]:
    """A graph invocation's expected failures as `error`: git refusing (pending edits, a git error) and a model
    endpoint that kept failing, where the run stays checkpointed and `resume` says how to go on."""
    try:
        yield
    except (PendingEdits, GitError) as exc:
        raise error(str(exc)) from exc
    except RoleUnavailable as exc:
        raise error(f"the model endpoint kept failing ({exc}); the run is checkpointed: {resume}") from exc


def run_config(thread: str) -> RunnableConfig:
    """A run's graph config: its thread, room for long runs, and enough workers that every story, validator
    and reviewer of a persona waits for its model at the same time."""
    return {"configurable": {"thread_id": thread}, "recursion_limit": 1000, "max_concurrency": 32}


def prepare(options: RunOptions, world: World, driver_name: str, force: bool) -> RunInputs:
    """Fix the run's identity into `options` (inputs, their hash, the thread id)."""
    baseline = resolve_baseline(options, world)
    inputs = run_inputs(options, world, baseline, driver_name)
    options.baseline = baseline
    options.inputs = inputs.model_dump()
    options.inputs_sha256 = inputs.sha256
    options.run_id = thread_id(
        inputs,
        options.persona,
        Path(options.tasksets_dir),
        nonce=f"force-{time.time_ns():x}" if force else "",
    )
    return inputs


def run_persona(
    options: RunOptions,
    drivers: Drivers,
    *,
    driver_name: str,
    checkpoint_url: str | None = None,
    checkpoint_path: Path = DEFAULT_CHECKPOINTS,
    force: bool = False,
    events: Callable[[dict[str, Any]], None] | None = None,
) -> Outcome:
    world = World.load(options.world)
    with settled_heap():
        return _run(options, drivers, world, driver_name, checkpoint_url, checkpoint_path, force, events)


def _run(
    options: RunOptions,
    drivers: Drivers,
    world: World,
    driver_name: str,
    checkpoint_url: str | None,
    checkpoint_path: Path,
    force: bool,
    events: Callable[[dict[str, Any]], None] | None,
) -> Outcome:
    inputs = prepare(options, world, driver_name, force)
    root = options.taskset_root
    current = code_prints(world, taskset_defaults(options))
    tid = options.run_id
    repo = None
    if options.commit:
        try:
            repo = find_repo(root)
        except GitError as exc:
            raise RunError(f"{exc}, or pass --no-commit") from exc
    _readable_base(root, repo)
    if not force:
        done = _already_done(options, inputs, current, repo)
        if done is not None:
            done.open_items = _open_count(options)
            return done
    config = run_config(tid)
    with checkpointer(checkpoint_url, checkpoint_path) as saver:
        graph = build_graph(saver)
        snapshot = read_state(graph, config)
        if snapshot.values and pending_items(snapshot):
            outcome = _outcome(tid, snapshot)
            _record_pause(options, snapshot, repo)
            return outcome
        if snapshot.values and not snapshot.next:
            finished = _outcome(tid, snapshot)
            if finished.status not in ("committed", "certified"):
                return finished
            # a finished run that was not pruned (killed after its commit): the destination does not hold its
            # output (it would be up to date above), so the store's word is not taken: start afresh
            prune(saver, tid)
            snapshot = read_state(graph, config)
        if snapshot.values and snapshot.next:
            if repo is not None and "commit" not in snapshot.next and "finalize" not in snapshot.next:
                _refuse_dirty(repo, options)
            drivers.progress(f"resuming {tid} at {', '.join(snapshot.next)}")
            # the run's options, but whether it commits is this command's (a --no-commit run resumed without it)
            stored = snapshot.values["options"].model_copy(update={"commit": options.commit})
            _invoke(graph, None, config, RunContext(stored, drivers), events)
        else:
            if repo is not None:
                committed = _commit_tree_output(options, inputs, current, repo, drivers)
                if committed is not None:
                    return committed
                _refuse_dirty(repo, options)
            superseded = _supersede(saver, options, repo)
            if superseded:
                drivers.progress(
                    f"superseded {len(superseded)} earlier run(s) of {options.persona}: "
                    + ", ".join(superseded)
                )
            _invoke(graph, {"options": options}, config, RunContext(options, drivers), events)
        after = graph.get_state(config)
        outcome = _outcome(tid, after)
        if outcome.status == "needs_review":
            _record_pause(options, after, repo)
        elif outcome.status == "rejected":
            _record_pause(options, after, repo, finished=True)
        elif outcome.status in ("committed", "certified"):
            prune(saver, tid)
        outcome.open_items = _open_count(options)
        return outcome


def _open_count(options: RunOptions) -> int:
    return sum(1 for i in read_file(options.taskset_root, options.persona).items if i.status == "open")


def _readable_base(root: Path, repo: Any) -> None:
    """The lock a run will merge into must be readable: say so before any work, not after it."""
    from certify import CertificateLock

    path = root / LOCK_FILE
    data = head_bytes(repo, path) if repo is not None else (path.read_bytes() if path.is_file() else None)
    if data is not None:
        CertificateLock.parse(data, f"HEAD:{path}" if repo is not None else str(path))


def read_state(graph: Any, config: RunnableConfig) -> Any:
    """A run's latest checkpoint; one another version of taskforge wrote, and this one cannot read, is a
    one-line error saying how to start afresh."""
    try:
        return graph.get_state(config)
    except CheckpointFormatError as exc:
        raise RunError(
            f"the checkpoint of run {config['configurable']['thread_id']} was written by another version of "
            f"taskforge and cannot be resumed: {exc}; run the same command with --force to author afresh, or "
            "move the checkpoint store away (review items are kept next to the tasksets, in reviews/)"
        ) from exc


def invoke(
    graph: Any,
    value: Any,
    config: RunnableConfig,
    context: RunContext,
    events: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Run the graph with `context` (the run's options, drivers and caches), streaming progress events to
    `events`."""
    for chunk in graph.stream(value, config, context=context, stream_mode="custom", durability="sync"):
        if events is not None:
            events(chunk)


def _invoke(
    graph: Any,
    value: Any,
    config: RunnableConfig,
    context: RunContext,
    events: Callable[[dict[str, Any]], None] | None,
) -> None:
    with invoke_errors(RunError, "run the same command again to resume it"):
        invoke(graph, value, config, context, events)


def _already_done(options: RunOptions, inputs: RunInputs, current: Any, repo: Any) -> Outcome | None:
    """Up to date, read from the destination; or a clear error when HEAD holds it but the tree changes it."""
    root, persona, tid = options.taskset_root, options.persona, options.run_id
    if repo is None:
        tree = tree_holding(root, persona, inputs.sha256, current, inputs.model_dump())
        if tree.ok:
            return Outcome(
                "up_to_date",
                f"{persona}: the files under {root} are this run's certified output "
                "(not committed: --no-commit); up to date",
                tid,
            )
        return None
    head = holding(
        root,
        persona,
        inputs.sha256,
        current,
        read=lambda p: head_bytes(repo, p),
        listdir=lambda p: head_files(repo, p),
        inputs=inputs.model_dump(),
    )
    if not head.ok:
        return None
    dirty = dirty_paths(repo, persona_paths(root, persona))
    sha = head_sha(repo) or ""
    if not dirty:
        return Outcome(
            "up_to_date",
            f"{persona}: HEAD {sha[:10]} holds the certified output of these sources, "
            "world and options; up to date",
            tid,
        )
    raise RunError(
        f"{persona}: HEAD {sha[:10]} holds the up-to-date output, but the working tree changes it "
        f"({', '.join(dirty[:6])}); `git checkout HEAD -- <path>` restores a path, or commit your "
        "change and run again"
    )


def _commit_tree_output(
    options: RunOptions, inputs: RunInputs, current: Any, repo: Any, drivers: Drivers
) -> Outcome | None:
    """A finished run whose files are on disk but not committed (--no-commit, or a kill before the commit):
    verified against its lock record, then committed — and nothing else."""
    root, persona = options.taskset_root, options.persona
    tree = tree_holding(root, persona, inputs.sha256, current, inputs.model_dump())
    if not tree.ok or tree.lock is None:
        return None
    lock_path = root / LOCK_FILE
    committed = head_bytes(repo, lock_path)
    if committed is not None:
        from certify import CertificateLock

        before = CertificateLock.parse(committed, f"HEAD:{lock_path}")
        others = {k: v for k, v in tree.lock.tasks.items() if v.persona != persona}
        if others != {k: v for k, v in before.tasks.items() if v.persona != persona} or {
            k: v for k, v in tree.lock.personas.items() if k != persona
        } != {k: v for k, v in before.personas.items() if k != persona}:
            raise RunError(str(PendingEdits([str(lock_path)], "it also changes other personas' records")))
    paths = list(tree.paths)
    review = reviews_path(root, persona)
    if review.exists():
        paths.append(review)
    manifest = root / "taskset.json"
    if manifest.is_file() and head_bytes(repo, manifest) is None:
        paths.append(manifest)
    listed = {p.resolve() for p in paths}
    gone = [
        root / persona / n
        for n in head_files(repo, root / persona)
        if (root / persona / n).resolve() not in listed
    ]
    foreign = [
        p
        for p in foreign_edits(
            repo, {p: p.read_bytes() for p in paths} | {g: None for g in gone}, persona_paths(root, persona)
        )
    ]
    if foreign:
        raise RunError(str(PendingEdits(foreign)))
    count = len(tree.lock.personas[persona].tasks)
    sha = commit_paths(
        repo,
        paths + gone,
        f"taskforge: certify persona {persona} ({count} tasks)\n\nThe finished "
        "run's files, verified against the lock and committed by taskforge author.",
    )
    settle(repo, paths + gone)
    drivers.progress(f"{persona}: the working tree holds a finished run's verified output; committed it")
    if sha is None:
        return None
    return Outcome(
        "committed",
        f"{persona}: committed the finished run's files found in the working tree, {sha[:10]}",
        options.run_id,
        result={"status": "committed", "commit": sha},
    )


def _refuse_dirty(repo: Any, options: RunOptions) -> None:
    """Refuse to start over uncommitted changes Taskforge did not make; its own (a killed run's files, named by
    the journal) are the new run's to overwrite."""
    dirty = foreign(repo, persona_paths(options.taskset_root, options.persona))
    if dirty:
        raise RunError(str(PendingEdits(dirty, "a new run would overwrite them")))


def _supersede(saver: Any, options: RunOptions, repo: Any) -> list[str]:
    """Close the open items of the persona's older runs into this destination and delete their threads."""
    prefix = thread_prefix(options.taskset, options.persona)
    dest = str(Path(options.tasksets_dir).resolve())
    older = []
    for thread in _threads(saver):
        if not thread.startswith(prefix) or thread == options.run_id:
            continue
        try:
            latest = saver.get_tuple({"configurable": {"thread_id": thread}})
        except CheckpointFormatError:  # another version's run: its destination cannot be read, so it stays
            continue
        values = (latest.checkpoint.get("channel_values") or {}) if latest else {}
        theirs = getattr(values.get("options"), "tasksets_dir", None)
        if theirs is not None and str(Path(theirs).resolve()) != dest:
            continue
        older.append(thread)
        saver.delete_thread(thread)
    path = reviews_path(options.taskset_root, options.persona)
    if path.is_file():
        with file_lock(path):
            before = read_file(options.taskset_root, options.persona)
            after = supersede(before, options.run_id)
            if after != before:
                write_files(repo, {path: after.render()})
            if repo is not None and (after != before or head_bytes(repo, path) != path.read_bytes()):
                commit_paths(
                    repo,
                    [path],
                    f"taskforge: run {options.run_id} supersedes the open review "
                    f"items of earlier {options.persona} runs",
                )
                settle(repo, [path])
    return older


def _threads(saver: Any) -> list[str]:
    """The runs in the store, listed without reading their checkpoints back (one may be another version's)."""
    query = "SELECT DISTINCT thread_id FROM checkpoints"
    if isinstance(getattr(saver, "conn", None), sqlite3.Connection):
        with saver.lock:
            return sorted(row[0] for row in saver.conn.execute(query))
    if type(saver).__module__.startswith("langgraph.checkpoint.postgres"):
        with saver._cursor() as cur:  # the saver's own connection and lock, as the review claims use them
            cur.execute(query)
            return sorted(row["thread_id"] for row in cur.fetchall())
    return sorted({c.config["configurable"]["thread_id"] for c in saver.list(None)})


def _record_pause(options: RunOptions, snapshot: Any, repo: Any, finished: bool = False) -> None:
    """Write (and commit, alone) the review file of a run that waits for review or was rejected."""
    values = snapshot.values or {}
    waiting = pending_items(snapshot)
    pending = {i["id"] for i in waiting}
    flags = dict(values.get("flags", {}))
    # a blocker the review node raised itself (the staircase) is only in the interrupt until it is decided
    flags.update({i["id"]: Flag.model_validate(i) for i in waiting if i["id"] not in flags})
    items = run_items(
        flags.values(),
        run=options.run_id,
        taskset=options.taskset,
        pending=pending,
        finished=finished,
    )
    record_run_items(
        options.taskset_root,
        options.persona,
        options.run_id,
        items,
        repo,
        f"taskforge: {options.persona} waits for review ({len(pending)} blocking item(s))"
        if not finished
        else f"taskforge: {options.persona} run rejected in review",
    )


def record_run_items(root: Path, persona: str, run: str, items: list[Any], repo: Any, message: str) -> None:
    """Merge a run's items into the persona's review file and commit it alone. Merged onto HEAD's version when
    committing, so a rerun after a kill between writing and committing writes the same file and commits it."""
    path = reviews_path(root, persona)
    with file_lock(path):
        base = head_bytes(repo, path) if repo is not None else None
        if repo is None:
            before = read_file(root, persona)
        elif base is None:
            before = ReviewFile(taskset=root.name, persona=persona)
        else:
            before = read_file(root, persona, base)
        after = merge_run(before, run, items)
        data = after.render()
        on_disk = path.read_bytes() if path.is_file() else None
        if on_disk == data and (repo is None or base == data):
            return
        if repo is not None:
            pending = foreign(repo, [path], {path: data})
            if pending:
                raise RunError(str(PendingEdits(pending)))
        write_files(repo, {path: data})
        if repo is not None:
            commit_paths(repo, [path], message)
            settle(repo, [path])


def prune(saver: Any, thread: str) -> None:
    """Drop a finished run's checkpoints: the destination holds its output, the review file its items."""
    saver.delete_thread(thread)
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        with saver.lock:
            conn.commit()
            conn.execute("VACUUM")


def _outcome(tid: str, snapshot: Any) -> Outcome:
    values = snapshot.values or {}
    # the ids a person types are the review items' (unique across runs); "flag" is the run's own id
    items = [{**i, "flag": i["id"], "id": review_id(i["id"], tid)} for i in pending_items(snapshot)]
    if items:
        return Outcome("needs_review", f"{len(items)} item(s) wait for review", tid, items, state=values)
    result = values.get("result")
    if result is None:
        return Outcome("incomplete", "the run stopped before it finished", tid, state=values)
    return Outcome(result.status, result.summary, tid, result=result.model_dump(), state=values)
