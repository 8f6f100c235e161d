"""Committing a persona's results with gitpython, and only them.

Never sweep anything else into the commit: other staged or unstaged changes stay where they are, and if a
path the persona writes holds someone's uncommitted edits, the run stops before touching it.
"""

from __future__ import annotations

from pathlib import Path

import git


class GitError(Exception):
    pass


def find_repo(path: Path) -> git.Repo:
    try:
        return git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError(f"{path} is not inside a git repository; run `git init` there or use --no-commit") from exc


def _rel(repo: git.Repo, path: Path) -> str:
    root = Path(repo.working_tree_dir or ".").resolve()
    return str(path.resolve().relative_to(root))


def dirty_paths(repo: git.Repo, paths: list[Path]) -> list[str]:
    """Paths under `paths` with uncommitted changes (staged, unstaged or untracked)."""
    rels = [_rel(repo, p) for p in paths]
    out = repo.git.status("--porcelain", "--untracked-files=all", "--", *rels)
    return [line[3:] for line in out.splitlines() if line.strip()]


def commit_paths(repo: git.Repo, paths: list[Path], message: str) -> str | None:
    """Commit exactly `paths` (added first); other changes in the index or tree are left alone."""
    top = Path(repo.working_tree_dir or ".").resolve()
    rels = [_rel(repo, p) for p in paths if p.exists() and p.resolve().is_relative_to(top)]
    if not rels:
        return None
    repo.git.add("--", *rels)
    if not repo.git.status("--porcelain", "--", *rels).strip():
        return None
    if not repo.head.is_valid():
        repo.git.commit("-m", message, "--", *rels)
    else:
        repo.git.commit("-m", message, "--only", "--", *rels)
    return repo.head.commit.hexsha
