"""A person's decision on a review item: approve, reject, or send to the fixer.

A blocker of a paused run is decided by resuming that run with the decision (the run then goes on: waits for
its other blockers, commits, or ends rejected once every blocker is decided). An item of a finished run or of
a re-certification is decided in the lock and the review file, committed together. A superseded item, an
item someone else is deciding, or a fix that finds no repair is refused — nothing is recorded then.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from certify import LOCK_FILE, CertificateLock, Review, TaskSet, now

from .gitops import GitError, PendingEdits, commit_paths, find_repo, head_bytes
from .graph import Drivers, RunContext, build_graph
from .graph.repairs import Unrepaired, propose_for
from .graph.state import AuthoredTask, Certification, GateOutcome, repairing
from .journal import foreign, settle, write_files
from .options import RunOptions
from .outputs import persona_paths
from .review import (
    VERDICT_STATUS,
    AlreadyDecided,
    Claims,
    Decision,
    ReviewError,
    ReviewItem,
    file_lock,
    find_item,
    item_flag,
    list_command,
    read_file,
    reviews_path,
)
from .run import (
    RunError,
    _outcome,
    _record_pause,
    invoke,
    invoke_errors,
    pending_items,
    prune,
    read_state,
    run_config,
)
from .taskset import split_task_id


class NoRepair(ReviewError):
    """`review fix` found nothing to repair: the item stays open, no decision is recorded."""


def decide(
    tasksets_dir: Path,
    saver: Any,
    drivers: Drivers,
    item_id: str,
    verdict: str,
    *,
    by: str,
    note: str = "",
    commit: bool = True,
    sources_root: Path = Path("."),
    skills_dir: Path = Path("skills"),
) -> dict[str, Any]:
    if verdict not in VERDICT_STATUS:
        raise ReviewError(f"unknown verdict '{verdict}' (approve, reject or fix)")
    item = _interrupted(tasksets_dir, find_item(tasksets_dir, item_id), commit)
    if item.status == "superseded":
        raise ReviewError(
            f"item {item.id} was superseded by run {item.superseded_by}: a newer run of "
            f"{item.persona} replaced the run that raised it ({list_command(tasksets_dir)} shows the live "
            "items)"
        )
    if item.status != "open":
        who = f" by {item.decision.by}" if item.decision else ""
        raise AlreadyDecided(f"item {item.id} is already {item.status}{who}")
    claims = Claims(saver)
    keys = [f"item:{item.taskset}:{item.run}:{item.id}"] + (
        [f"run:{item.run}"] if item.source == "graph" else []
    )
    held: list[str] = []
    try:
        for key in keys:
            if not claims.claim(key, by):
                raise AlreadyDecided(
                    f"item {item.id} is being decided by someone else right now"
                    if key.startswith("item:")
                    else f"the run {item.run} is busy with another decision; try again when it is done"
                )
            held.append(key)
        decision = Decision(verdict=verdict, by=by, at=now(), note=note)
        root = tasksets_dir / item.taskset
        if item.source == "graph":
            return _resume(saver, drivers, item, decision, root)
        if verdict == "fix":
            return _fix_finished(saver, drivers, item, decision, root, commit, sources_root, skills_dir)
        return _record(item, decision, root, commit)
    finally:
        for key in held:
            claims.release(key)


def _interrupted(tasksets_dir: Path, item: ReviewItem, commit: bool) -> ReviewItem:
    """The item as HEAD holds it when the working tree's decided copy is Taskforge's own uncommitted write (a
    decision killed before its commit): deciding it again completes that decision instead of refusing it."""
    if item.status == "open" or not commit:
        return item
    root = tasksets_dir / item.taskset
    path = reviews_path(root, item.persona)
    try:
        repo = find_repo(root)
    except GitError:
        return item
    base = head_bytes(repo, path)
    if base is None or not path.is_file() or base == path.read_bytes() or foreign(repo, [path]):
        return item
    try:
        held = read_file(root, item.persona, base)
    except ReviewError:
        return item
    again = [i for i in held.items if i.id == item.id and i.run == item.run and i.status == "open"]
    return again[0] if again else item


def _resume(saver: Any, drivers: Drivers, item: ReviewItem, decision: Decision, root: Path) -> dict[str, Any]:
    graph = build_graph(saver)
    config = run_config(item.run)
    snapshot = _state(graph, config)
    if not snapshot.values:
        raise ReviewError(
            f"the run {item.run} that raised {item.id} is not in the checkpoint store (was .taskforge/ "
            f"removed?); run `taskforge author --persona {item.persona}` again: the new run re-raises "
            "whatever still holds"
        )
    value: Any = Command(resume={item.flag_id: decision.model_dump()})
    if item.flag_id not in {i["id"] for i in pending_items(snapshot)}:
        earlier = (snapshot.values.get("flags") or {}).get(item.flag_id)
        verdict = ((earlier.decision or {}).get("verdict") if earlier is not None else None) or None
        if verdict != decision.verdict or not snapshot.next:
            raise ReviewError(f"the run {item.run} no longer waits for {item.id}")
        # the same decision, interrupted (a kill) after the run took it and before it recorded the outcome:
        # finish the run from its checkpoint instead of deciding twice
        value = None
    options: RunOptions = snapshot.values["options"]
    repo = find_repo(root) if options.commit else None
    if repo is not None:
        pending = foreign(repo, persona_paths(root, item.persona))
        if pending:
            raise ReviewError(str(PendingEdits(pending, "resuming the run may commit these paths")))
    after, outcome = _run_on(
        graph,
        value,
        config,
        RunContext(options, drivers),
        repo,
        saver,
    )
    found = (after.values or {}).get("flags", {}).get(item.flag_id)
    flag = found.model_dump() if found is not None else {}
    if decision.verdict == "fix" and flag.get("status") == "open":
        raise NoRepair(f"the fixer found no repair for {item.id}; it stays open (approve or reject it)")
    return {
        "flag_status": flag.get("status"),
        "result": (flag.get("decision") or {}).get("result"),
        "run": outcome.status if outcome.status != "needs_review" else "waiting",
        "commit": outcome.result.get("commit"),
        "summary": outcome.result.get("summary", ""),
        "waiting": [i["id"] for i in outcome.items],
    }


def _state(graph: Any, config: RunnableConfig) -> Any:
    try:
        return read_state(graph, config)
    except RunError as exc:
        raise ReviewError(str(exc)) from exc


def _run_on(
    graph: Any, value: Any, config: RunnableConfig, context: RunContext, repo: Any, saver: Any
) -> tuple[Any, Any]:
    """Run (or resume) a persona's graph for a decision, then record what it came to: the review file of a run
    that waits again or ended rejected, the pruned checkpoints of a run that finished."""
    options = context.options
    with invoke_errors(ReviewError, "decide again or run `taskforge author` to resume it"):
        invoke(graph, value, config, context)
    after = graph.get_state(config)
    outcome = _outcome(options.run_id, after)
    if outcome.status == "needs_review":
        _record_pause(options, after, repo)
    elif outcome.status == "rejected":
        _record_pause(options, after, repo, finished=True)
    elif outcome.status in ("committed", "certified"):
        prune(saver, options.run_id)
    return after, outcome


def _record(item: ReviewItem, decision: Decision, root: Path, commit: bool) -> dict[str, Any]:
    """A decision on an item of a finished run or a re-certification: into the lock and the review file."""
    lock_path, review_path = root / LOCK_FILE, reviews_path(root, item.persona)
    try:
        repo = find_repo(root) if commit else None
    except GitError as exc:
        raise ReviewError(f"{exc}, or pass --no-commit") from exc
    with file_lock(review_path), file_lock(lock_path):
        # merged onto HEAD's versions when committing: a rerun after a kill between writing and committing
        # writes the decision once, not twice
        lock_base = head_bytes(repo, lock_path) if repo is not None else None
        lock = (
            CertificateLock.parse(lock_base, f"HEAD:{lock_path}")
            if lock_base is not None
            else CertificateLock.load(root)
        )
        if lock is None:
            raise ReviewError(f"no certificate lock in {root}")
        cert = lock.tasks.get(item.task_id or "")
        task_path = root / cert.path if cert is not None else None
        watched = [lock_path, review_path] + ([task_path] if task_path is not None else [])
        if repo is not None:
            pending = foreign(repo, watched)
            if pending:
                raise ReviewError(str(PendingEdits(pending, "a decision commits these files")))
        written = [lock_path, review_path]
        outcome: dict[str, Any] = {}
        review = Review(
            verdict=decision.verdict, by=decision.by, at=decision.at, note=decision.note, flag=item.flag_id
        )
        if cert is not None:
            cert.reviews.append(review)
        elif item.persona in lock.personas:
            record = lock.personas[item.persona]
            record.calibration = {
                **record.calibration,
                "reviews": [*record.calibration.get("reviews", []), review.model_dump()],
            }
        review_base = head_bytes(repo, review_path) if repo is not None else None
        file = read_file(root, item.persona, review_base)
        file.items = [
            i.model_copy(update={"status": VERDICT_STATUS[decision.verdict], "decision": decision})
            if i.id == item.id and i.run == item.run
            else i
            for i in file.items
        ]
        write_files(repo, {lock_path: lock.render(), review_path: file.render()})
        if repo is not None:
            sha = commit_paths(
                repo,
                written,
                f"taskforge: review {item.id} ({decision.verdict}) "
                f"{item.task_id or item.persona}\n\n{decision.note}".rstrip(),
            )
            settle(repo, written)
            outcome["commit"] = sha
        outcome["wrote"] = ", ".join(str(p) for p in written)
    return outcome


def _fix_finished(
    saver: Any,
    drivers: Drivers,
    item: ReviewItem,
    decision: Decision,
    root: Path,
    commit: bool,
    sources_root: Path,
    skills_dir: Path,
) -> dict[str, Any]:
    """`review fix` on an item of a finished run: the fixer's repair takes the run's one repair path — a run
    seeded with the persona's committed tasks re-certifies the patched task and sends it through the validator,
    ladder fairness and calibration before anything is committed (or it stops for review like any run)."""
    lock = CertificateLock.load(root)
    record = lock.personas.get(item.persona) if lock else None
    cert = lock.tasks.get(item.task_id or "") if lock else None
    if lock is None or record is None or cert is None:
        raise NoRepair(f"item {item.id} names no committed task to fix; approve or reject it")
    try:
        repo = find_repo(root) if commit else None
    except GitError as exc:
        raise ReviewError(f"{exc}, or pass --no-commit") from exc
    if repo is not None:
        pending = foreign(repo, persona_paths(root, item.persona))
        if pending:
            raise ReviewError(str(PendingEdits(pending, "a repair commits these paths")))
    world = TaskSet.load(root).world(None)
    raw = json.loads((root / cert.path).read_text(encoding="utf-8"))
    repair = propose_for(drivers.fixer, item_flag(item), raw, world, decision.model_dump())
    if isinstance(repair, Unrepaired):
        raise NoRepair(
            f"the fixer found no repair for {item.id} ({repair.reason or 'no known repair'}); it stays open"
        )
    inputs = record.inputs
    options = RunOptions(
        persona=item.persona,
        taskset=item.taskset,
        tasksets_dir=str(root.parent),
        sources_root=str(sources_root),
        skills_dir=str(skills_dir),
        world=str(world.path),
        baseline=inputs.get("baseline"),
        reference_agent=inputs.get("reference_agent", "heuristic"),
        frontier_agent=inputs.get("frontier_agent"),
        repeats=inputs.get("repeats", 3),
        min_attempts=inputs.get("min_attempts", 3),
        commit=commit,
        inputs_sha256=record.inputs_sha256,
        inputs=inputs,
        run_id=item.run,
    )
    tasks = {}
    for task_id in record.tasks:
        c = lock.tasks[task_id]
        story, level = split_task_id(task_id)
        tasks[task_id] = AuthoredTask(
            raw=json.loads((root / c.path).read_text(encoding="utf-8")),
            story=story,
            level=level,
            cert=Certification(
                certified=c.certified,
                gates={
                    k: GateOutcome(ok=bool(g.get("ok")), detail=str(g.get("detail", "")))
                    for k, g in c.gates.items()
                },
            ),
        )
    flags = {i.flag_id: item_flag(i) for i in read_file(root, item.persona).items if i.run == item.run}
    graph = build_graph(saver)
    config = run_config(item.run)
    if _state(graph, config).values:
        raise ReviewError(f"the run {item.run} is still in the checkpoint store; finish it first")
    after, outcome = _run_on(
        graph, repairing(options, tasks, flags, repair), config, RunContext(options, drivers), repo, saver
    )
    found = (after.values or {}).get("flags", {}).get(item.flag_id)
    if found is None or found.status != "fixed":
        raise NoRepair(f"the fixer's repair of {item.id} ({repair.repaired}) did not certify; it stays open")
    return {
        "flag_status": found.status,
        "result": repair.repaired,
        "run": outcome.status if outcome.status != "needs_review" else "waiting",
        "commit": outcome.result.get("commit"),
        "summary": outcome.result.get("summary", ""),
        "waiting": [i["id"] for i in outcome.items],
    }


__all__ = ["NoRepair", "RunError", "decide"]
