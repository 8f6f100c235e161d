"""Committing a persona's results with gitpython, and only them; reading what the destination's HEAD holds.

Never sweep anything else into the commit: other staged or unstaged changes stay where they are, and if a
path the persona writes holds someone's uncommitted edits, the command stops before touching it. The
destination repository is the truth about what is committed: statuses are read from HEAD, never assumed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # gitpython is imported where a repository is opened: `check` never opens one
    import git


class GitError(Exception):
    pass


class PendingEdits(GitError):
    """Paths a command would write hold uncommitted changes it did not make."""

    def __init__(self, paths: list[str], hint: str = "") -> None:
        self.paths = paths
        shown = ", ".join(paths[:8]) + (f" (+{len(paths) - 8} more)" if len(paths) > 8 else "")
        super().__init__(
            f"uncommitted changes in paths this command writes: {shown}; commit or stash them first"
            + (f" ({hint})" if hint else "")
        )


def find_repo(path: Path) -> git.Repo:
    import git

    anchor = next((p for p in [path, *path.resolve().parents] if p.exists()), path)
    try:
        return git.Repo(anchor, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError(f"{path} is not inside a git repository; run `git init` there") from exc


def top(repo: git.Repo) -> Path:
    return Path(repo.working_tree_dir or ".").resolve()


def rel(repo: git.Repo, path: Path) -> str:
    return path.resolve().relative_to(top(repo)).as_posix()


def inside(repo: git.Repo, path: Path) -> bool:
    return path.resolve().is_relative_to(top(repo))


def dirty_paths(repo: git.Repo, paths: list[Path]) -> list[str]:
    """Paths under `paths` with uncommitted changes (staged, unstaged or untracked), relative to the top."""
    rels = [rel(repo, p) for p in paths if inside(repo, p)]
    if not rels:
        return []
    out = repo.git.status("--porcelain", "--untracked-files=all", "--no-renames", "--", *rels)
    return sorted({line[3:].strip('"') for line in out.splitlines() if line.strip()})


def head_sha(repo: git.Repo) -> str | None:
    return repo.head.commit.hexsha if repo.head.is_valid() else None


def head_bytes(repo: git.Repo, path: Path) -> bytes | None:
    """The content of `path` at HEAD, or None when HEAD does not hold it."""
    if not repo.head.is_valid() or not inside(repo, path):
        return None
    try:
        blob = repo.head.commit.tree / rel(repo, path)
    except KeyError:
        return None
    if blob.type != "blob":
        return None
    return blob.data_stream.read()


def head_files(repo: git.Repo, folder: Path) -> list[str]:
    """Names of the files directly inside `folder` at HEAD."""
    if not repo.head.is_valid() or not inside(repo, folder):
        return []
    try:
        tree = repo.head.commit.tree / rel(repo, folder)
    except KeyError:
        return []
    return sorted(b.name for b in tree.blobs) if tree.type == "tree" else []


def last_commit_touching(repo: git.Repo, path: Path) -> str | None:
    if not repo.head.is_valid():
        return None
    sha = repo.git.log("-1", "--format=%H", "--", rel(repo, path)).strip()
    return sha or None


def commit_paths(repo: git.Repo, paths: list[Path], message: str) -> str | None:
    """Commit exactly `paths` (written or deleted); other changes in the index or tree are left alone.

    Returns the new commit, or None when HEAD already holds every path as it is on disk.
    """
    rels = [rel(repo, p) for p in paths if inside(repo, p)]
    if not rels:
        return None
    tracked = set(repo.git.ls_files("--", *rels).splitlines())
    present = [r for r in rels if (top(repo) / r).exists() or r in tracked]
    if not present:
        return None
    repo.git.add("--all", "--", *present)
    if not repo.git.status("--porcelain", "--", *present).strip():
        return None
    if not repo.head.is_valid():
        repo.git.commit("-m", message, "--", *present)
    else:
        repo.git.commit("-m", message, "--only", "--", *present)
    return repo.head.commit.hexsha
