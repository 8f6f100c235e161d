"""What the destination holds for a persona, read from the destination itself.

"Up to date" is a claim about the destination repository: HEAD holds this persona's task files, lock record and
calibration record; they were produced from the current inputs (sources, world, options) and certified under the
current code; and the working tree does not change them. The same check run against the working tree tells a
finished but uncommitted run (its files are all there and verified by the lock) from a half-written one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from certify import LOCK_FILE, CertificateLock, CodePrints, TaskFileError, sha256_text, task_content_hash

from .outputs import Lister, Reader, disk_lister, disk_reader, persona_paths


@dataclass
class Holding:
    ok: bool
    reasons: list[str] = field(default_factory=list)
    lock: CertificateLock | None = None
    paths: list[Path] = field(default_factory=list)


def holding(
    root: Path,
    persona: str,
    inputs_sha256: str,
    current: CodePrints,
    *,
    read: Reader,
    listdir: Lister,
    inputs: dict[str, Any] | None = None,
) -> Holding:
    """Does this view of the destination (HEAD, or the working tree) hold the persona's output for these inputs?"""
    data = read(root / LOCK_FILE)
    if data is None:
        return Holding(False, ["no certificate lock"])
    try:
        lock = CertificateLock.parse(data, str(root / LOCK_FILE))
    except TaskFileError as exc:
        return Holding(False, [f"the lock is unreadable ({exc})"])
    record = lock.personas.get(persona)
    if record is None:
        return Holding(False, [f"the lock has no record of {persona}"], lock)
    reasons: list[str] = []
    if record.inputs_sha256 != inputs_sha256:
        changed = [k for k, v in (inputs or {}).items() if record.inputs.get(k) != v] if record.inputs else []
        reasons.append("inputs changed" + (f" ({', '.join(changed)})" if changed else ""))
    paths = [root / LOCK_FILE]
    names = set()
    stale = 0
    for task_id in record.tasks:
        cert = lock.tasks.get(task_id)
        if cert is None:
            reasons.append(f"the lock has no certificate for {task_id}")
            continue
        path = root / cert.path
        names.add(path.name)
        paths.append(path)
        content = read(path)
        raw = _json_of(content) if content is not None else None
        if content is None:
            reasons.append(f"{cert.path} is missing")
        elif raw is None or task_content_hash(raw) != cert.content_sha256:
            reasons.append(f"{cert.path} differs from its certificate")
        if not cert.certified or raw is None or cert.fingerprints != current.of_raw(raw, str(path)):
            stale += 1
    if stale:
        reasons.append(f"{stale} certificate(s) not current (grader, simulator, world or defaults changed)")
    extra = [n for n in listdir(root / persona) if n.endswith(".json") and n not in names]
    if extra:
        reasons.append(f"files no run certified: {', '.join(extra[:5])}")
    if not record.files:
        reasons.append("no calibration record")
    for rel, sha in record.files.items():
        content = read(root / rel)
        paths.append(root / rel)
        if content is None or sha256_text(content) != sha:
            reasons.append(f"{rel} differs from the run's calibration record")
    return Holding(not reasons, reasons, lock, paths)


def _json_of(content: bytes) -> Any:
    import json

    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return None


def tree_holding(
    root: Path, persona: str, inputs_sha256: str, current: CodePrints, inputs: dict[str, Any] | None = None
) -> Holding:
    return holding(
        root, persona, inputs_sha256, current, read=disk_reader, listdir=disk_lister, inputs=inputs
    )


__all__ = ["Holding", "holding", "persona_paths", "tree_holding"]
