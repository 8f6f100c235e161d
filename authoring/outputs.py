"""A persona run's output files, rendered from the run's state, and their publication (write, then commit).

Rendering is pure: the same finished state gives the same bytes (every time stamp comes from the state), so a
run resumed after a kill between writing and committing recognises the files on disk as its own, and a commit
node run twice commits once. Files the run does not own are merged onto their committed version (the lock,
the review file, a skill gaining a lesson), never onto someone's uncommitted edit: a path whose uncommitted
content is not exactly what the run writes stops the publication before anything is touched.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from certify import (
    JUDGE_AUDIT_FILE,
    LOCK_FILE,
    CertificateLock,
    PersonaRecord,
    Review,
    TaskCertificate,
    code_prints,
    record_files,
    sha256_text,
    task_content_hash,
)
from simulator import World

from .gitops import (
    PendingEdits,
    commit_paths,
    find_repo,
    head_bytes,
    head_files,
    last_commit_touching,
)
from .journal import foreign, settle, write_files
from .judged import audit_file
from .options import RunOptions
from .review import ReviewFile, file_lock, merge_run, read_file, reviews_path, run_items
from .roles.fixer import with_lesson
from .taskset import manifest, taskset_defaults

if TYPE_CHECKING:  # the graph imports this module: its state is only named here
    from .graph.state import PipelineState

Reader = Callable[[Path], bytes | None]
Lister = Callable[[Path], list[str]]


@dataclass
class Outputs:
    """Path → bytes to write (None: delete), and the commit message that goes with them."""

    files: dict[Path, bytes | None]
    message: str
    summary: str
    notes: list[str] = field(default_factory=list)


def disk_reader(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def disk_lister(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def base_readers(root: Path, commit: bool) -> tuple[Reader, Lister]:
    """What outputs are merged onto: HEAD's version when the run commits, the disk's otherwise."""
    if not commit:
        return disk_reader, disk_lister
    repo = find_repo(root)
    return (lambda p: head_bytes(repo, p)), (lambda p: head_files(repo, p))


def persona_paths(root: Path, persona: str) -> list[Path]:
    """Every path a persona run owns or merges into, besides skills."""
    return [
        root / persona,
        root / LOCK_FILE,
        root / JUDGE_AUDIT_FILE,
        root / "calibration" / persona,
        reviews_path(root, persona),
    ]


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def render_outputs(
    options: RunOptions,
    state: PipelineState,
    world: World,
    defaults: dict[str, Any],
    manifest: dict[str, Any] | None,
    *,
    read: Reader,
    listdir: Lister,
) -> Outputs:
    """Everything a finished run writes, as bytes; `manifest` is the taskset.json to create when there is none."""
    root = options.taskset_root
    persona = options.persona
    stamp = state.get("stamp") or ""
    files: dict[Path, bytes | None] = {}
    if manifest is not None and read(root / "taskset.json") is None:
        files[root / "taskset.json"] = _json(manifest)
    persona_dir = root / persona
    tasks = state["tasks"]
    for authored in tasks.values():
        files[persona_dir / f"{authored.raw['id']}.json"] = _json(authored.raw)
    for name in listdir(persona_dir):
        if name.endswith(".json") and persona_dir / name not in files:
            files[persona_dir / name] = None

    record = state["calibration"]
    trials = state.get("calibration_trials", [])
    calibration_dir = root / "calibration" / persona
    calibration_files = {calibration_dir / name: data for name, data in record_files(record, trials).items()}
    files.update(calibration_files)

    base = read(root / LOCK_FILE)
    lock = (
        CertificateLock.parse(base, str(root / LOCK_FILE))
        if base is not None
        else CertificateLock(taskset=options.taskset)
    )
    code = code_prints(world, defaults)
    for old in [k for k, v in lock.tasks.items() if v.persona == persona]:
        lock.tasks.pop(old)
    flags = list(state.get("flags", {}).values())
    decided = [f for f in flags if f.decision]
    for task_id, authored in sorted(tasks.items()):
        raw = authored.raw
        reviews = [
            Review(
                verdict=str(f.decision.get("verdict")),
                by=str(f.decision.get("by") or "reviewer"),
                at=str(f.decision.get("at")),
                note=str(f.decision.get("note") or ""),
                flag=f.id,
            )
            for f in decided
            if f.task_id == task_id and f.decision
        ]
        lock.tasks[task_id] = TaskCertificate(
            path=f"{persona}/{raw['id']}.json",
            persona=persona,
            story=(raw.get("meta") or {}).get("story"),
            level=raw["difficulty"],
            content_sha256=task_content_hash(raw),
            fingerprints=code.of_raw(raw, str(persona_dir / f"{raw['id']}.json")),
            certified=authored.cert.certified,
            gates={k: g.model_dump() for k, g in authored.cert.gates.items()},
            reviews=reviews,
            certified_at=stamp,
        )
    persona_reviews = [f.model_dump() for f in decided if not f.task_id]
    calibration = {**record.summary(), "reviews": persona_reviews} if persona_reviews else record.summary()
    lock.personas[persona] = PersonaRecord(
        inputs_sha256=options.inputs_sha256,
        inputs=options.inputs,
        tasks=sorted(tasks),
        files={p.relative_to(root).as_posix(): sha256_text(data) for p, data in calibration_files.items()},
        calibration=calibration,
        updated_at=stamp,
    )
    files[root / LOCK_FILE] = lock.render()
    audits = audit_file(root, persona, [t.raw for t in tasks.values()], world, defaults, read, stamp)
    if audits is not None:
        files[root / JUDGE_AUDIT_FILE] = audits

    review_path = reviews_path(root, persona)
    review_base = read(review_path)
    review_file = (
        read_file(root, persona, review_base)
        if review_base is not None
        else ReviewFile(taskset=options.taskset, persona=persona)
    )
    items = run_items(flags, run=options.run_id, taskset=options.taskset, pending=set(), finished=True)
    merged = merge_run(review_file, options.run_id, items)
    if merged.items or review_base is not None:
        files[review_path] = merged.render()

    skills_dir = Path(options.skills_dir)
    for lesson in state.get("lessons", []):
        path = skills_dir / f"{lesson.skill}.md"
        before = files[path] if path in files else read(path)
        text = before.decode("utf-8") if before else None
        files[path] = with_lesson(
            text, lesson.skill, lesson.story or "-", lesson.level, lesson.lesson, stamp[:10]
        ).encode()

    certified = sum(1 for t in tasks.values() if t.cert.certified)
    levels = ", ".join(f"{s.level[-1]}:{(s.pass_rate or 0):.0%}" for s in record.levels)
    verdict = "staircase holds" if record.holds else record.verdict
    message = (
        f"taskforge: certify persona {persona} ({len(tasks)} tasks)\n\n"
        f"Authored by taskforge author; every task passes its certification gates.\n"
        f"Calibration with {record.agent} x{record.repeats}: {levels} ({verdict}).\n"
        f"Run {options.run_id}."
    )
    summary = f"{persona}: {certified}/{len(tasks)} certified, {verdict}"
    return Outputs(files, message, summary)


@dataclass
class Published:
    status: Literal["committed", "certified"]
    commit: str | None
    paths: list[str]
    summary: str


def foreign_edits(repo: Any, files: dict[Path, bytes | None], also: list[Path]) -> list[str]:
    """Uncommitted changes under the paths the outputs touch (and `also`) that are neither exactly the outputs
    nor a content Taskforge recorded writing (a killed run's files)."""
    return foreign(repo, [*files, *also], files)


def publish(
    outputs: Outputs,
    *,
    root: Path,
    persona: str,
    commit: bool,
    progress: Callable[[str], None] = lambda m: None,
) -> Published:
    """Check, write, commit. Idempotent: publishing the same outputs twice commits once."""
    repo = find_repo(root) if commit else None
    if repo is not None:
        foreign = foreign_edits(repo, outputs.files, persona_paths(root, persona))
        if foreign:
            raise PendingEdits(foreign)
    with ExitStack() as stack:
        for path in (root / LOCK_FILE, reviews_path(root, persona)):
            stack.enter_context(file_lock(path))
        write_files(repo if repo is not None else _repo_or_none(root), outputs.files)
        progress(
            f"wrote {sum(1 for d in outputs.files.values() if d is not None)} file(s) under {root}"
            + ("; committing" if repo is not None else "")
        )
        sha = None
        if repo is not None:
            sha = commit_paths(repo, sorted(outputs.files, key=str), outputs.message) or last_commit_touching(
                repo, root / LOCK_FILE
            )
            settle(repo, list(outputs.files))
    paths = sorted(str(p) for p in outputs.files)
    tail = f", committed {sha[:10]}" if sha else ", not committed"
    return Published("committed" if sha else "certified", sha, paths, outputs.summary + tail)


def _repo_or_none(root: Path) -> Any:
    """The repository around `root`, if any: a --no-commit run still journals what it writes there, so a later
    run that commits recognises those files as Taskforge's."""
    from .gitops import GitError

    try:
        return find_repo(root)
    except GitError:
        return None


def commit_outputs(
    options: RunOptions,
    state: PipelineState,
    world: World,
    progress: Callable[[str], None] = lambda m: None,
) -> Published:
    """Render the finished run's files, write them and (unless --no-commit) commit them."""
    read, listdir = base_readers(options.taskset_root, options.commit)
    outputs = render_outputs(
        options,
        state,
        world,
        taskset_defaults(options, world),
        manifest(options, world),
        read=read,
        listdir=listdir,
    )
    return publish(
        outputs, root=options.taskset_root, persona=options.persona, commit=options.commit, progress=progress
    )
