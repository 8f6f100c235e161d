"""What Taskforge wrote into a destination repository and has not committed yet, so a rerun knows its own files.

Every command that writes into a repository (author's publication and its review file, a review decision,
recertify) first records here, per path, the content it is about to write (its sha256, or "absent" for a
deletion), then writes each file atomically. A kill anywhere in the write→commit window leaves files whose
content the journal names: the next command recognises them as Taskforge's own by content and goes on (the
rerun overwrites or commits them), while a change nobody recorded — someone's edit — is still refused. The
journal lives in the repository's git directory: never in the working tree, never committed, and it travels
with the files it describes (a clone has no uncommitted files to recognise). Entries whose path is clean again
are dropped, so it holds only what is pending.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .gitops import dirty_paths
from .review import file_lock

ABSENT = "absent"
_UMASK = os.umask(0)
os.umask(_UMASK)
KEEP = 8  # contents remembered per path: enough for the runs a kill window can leave behind


def _dir(repo: Any) -> Path:
    return Path(repo.git_dir) / "taskforge"


def _path(repo: Any) -> Path:
    return _dir(repo) / "journal.json"


def _top(repo: Any) -> Path:
    return Path(repo.working_tree_dir or ".").resolve()


def _rel(repo: Any, path: Path) -> str | None:
    resolved = Path(path).resolve()
    top = _top(repo)
    return resolved.relative_to(top).as_posix() if resolved.is_relative_to(top) else None


def digest(data: bytes | None) -> str:
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


def _read(repo: Any) -> dict[str, list[str]]:
    try:
        data = json.loads(_path(repo).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    paths = data.get("paths") if isinstance(data, dict) else None
    if not isinstance(paths, dict):
        return {}
    return {k: [s for s in v if isinstance(s, str)] for k, v in paths.items() if isinstance(v, list)}


def _write(repo: Any, paths: dict[str, list[str]]) -> None:
    _dir(repo).mkdir(parents=True, exist_ok=True)
    atomic_write(_path(repo), (json.dumps({"paths": paths}, indent=1, sort_keys=True) + "\n").encode(), repo)


def intend(repo: Any, files: dict[Path, bytes | None]) -> None:
    """Record what is about to be written (None: deleted), before anything is."""
    with file_lock(_path(repo)):
        paths = _read(repo)
        for path, data in files.items():
            rel = _rel(repo, path)
            if rel is None:
                continue
            known = [s for s in paths.get(rel, []) if s != digest(data)]
            paths[rel] = [*known, digest(data)][-KEEP:]
        _write(repo, paths)


def ours(repo: Any, rel: str) -> bool:
    """Is the working tree's state of `rel` (relative to the top) one Taskforge recorded writing?"""
    recorded = _read(repo).get(rel)
    if not recorded:
        return False
    path = _top(repo) / rel
    try:
        current = digest(path.read_bytes()) if path.is_file() else ABSENT if not path.exists() else None
    except OSError:
        return False
    return current is not None and current in recorded


def forget_clean(repo: Any, clean: set[str]) -> None:
    """Drop the entries of paths that are clean again (committed, or restored)."""
    if not _path(repo).is_file():
        return
    with file_lock(_path(repo)):
        paths = _read(repo)
        kept = {k: v for k, v in paths.items() if k not in clean}
        if kept != paths:
            _write(repo, kept)


def foreign(repo: Any, watched: list[Path], expected: dict[Path, bytes | None] | None = None) -> list[str]:
    """Uncommitted changes under `watched` (and the paths of `expected`) that Taskforge did not make: neither
    exactly what this command is about to write (`expected`, None meaning deleted) nor a content the journal
    recorded writing. Relative to the top of the repository."""
    want = {Path(p).resolve(): d for p, d in (expected or {}).items()}
    paths = sorted({*map(Path, watched), *map(Path, want)}, key=str)
    top = _top(repo)
    out = []
    for rel in dirty_paths(
        repo, [p for p in paths if p.exists() or p.resolve() in want or p.parent.exists()]
    ):
        path = top / rel
        if path in want:
            data = want[path]
            if (data is None and not path.exists()) or (
                data is not None and path.is_file() and path.read_bytes() == data
            ):
                continue
        if ours(repo, rel):
            continue
        out.append(rel)
    return out


def write_files(repo: Any, files: dict[Path, bytes | None]) -> None:
    """Record, then write (atomically) or delete, `files`; without a repository, just write them."""
    if repo is not None:
        intend(repo, files)
    for path, data in files.items():
        path = Path(path)
        if data is None:
            path.unlink(missing_ok=True)
            continue
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, repo)


def settle(repo: Any, paths: list[Path]) -> None:
    """After a commit: forget the journal entries of `paths` that are clean now."""
    rels = {r for p in paths if (r := _rel(repo, p)) is not None}
    if not rels:
        return
    dirty = set(dirty_paths(repo, [p for p in paths if _rel(repo, p) is not None]))
    forget_clean(repo, rels - dirty)


def atomic_write(path: Path, data: bytes, repo: Any = None) -> None:
    """Write `path` whole or not at all: a kill mid-write leaves the old content, never half the new one. The
    temporary file sits in the git directory when there is a repository (no stray file in the working tree),
    else beside the target."""
    path = Path(path)
    folder = _dir(repo) / "tmp" if repo is not None else path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".taskforge-")
    try:
        os.fchmod(fd, path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            path.write_bytes(data)  # the git directory is on another filesystem: write in place
            os.unlink(tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["atomic_write", "digest", "foreign", "forget_clean", "intend", "ours", "settle", "write_files"]
