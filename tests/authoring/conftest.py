"""A persona with two stories on the mini world, and a scratch git repository to author into."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

PERSONA = """---
voice:
  openers: ["Quick one.", "Desk here."]
  deadlines: ["Before the open, please.", "Needed by noon."]
  signoffs: ["Thanks."]
  tone: terse
---
# Persona: Desk head

Runs the Acme desk. Wants views up before the open and numbers exact.
"""

ADD_STORY = """---
facts:
  dashboard: Desk Morning
  targets:
    - {widget: Positions, app: Desk App, origin: Acme Data}
  params: {fund: Gamma, period: QTD}
  find_hint: the holdings book
  policy: {phrase: the Thursday desk policy, carries: period, meaning: quarter-to-date}
  governance: {skill: close-checklist}
  build: {backend: Book Service, table: Book Register, app: Book App, tab: Book}
---
# Morning positions

The desk head wants the Gamma book quarter-to-date on the morning board.
"""

REPAIR_STORY = """---
facts:
  dashboard: Risk Board
  targets:
    - {widget: Alerts, app: Desk App, origin: Acme Data}
  params: {severity: Low, status: Closed}
  seeded_wrong: {status: Open}
  find_hint: the risk flags
  policy: {phrase: the quiet-book policy, carries: severity, meaning: low severity}
  governance: {skill: morning-brief}
  build: {backend: Risk Service, table: Risk Log}
---
# Risk board repair

Someone left the alerts view on open items; the review needs the closed low-severity ones.
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def write_sources(root: Path) -> Path:
    (root / "personas").mkdir(parents=True)
    (root / "stories" / "desk_head").mkdir(parents=True)
    (root / "personas" / "desk_head.md").write_text(PERSONA)
    (root / "stories" / "desk_head" / "morning_positions.md").write_text(ADD_STORY)
    (root / "stories" / "desk_head" / "risk_repair.md").write_text(REPAIR_STORY)
    return root


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    return write_sources(tmp_path / "sources")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


def init_repo(root: Path) -> Path:
    """A scratch git repository with the role skills committed, to author into."""
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "test@example.com")
    git(root, "config", "user.name", "Test")
    (root / "README.md").write_text("scratch\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "init")
    (root / "skills").mkdir()
    (root / "skills" / "task-author.md").write_text("# task-author\n\n## Lessons\n")
    git(root, "add", "skills")
    git(root, "commit", "-q", "-m", "skills")
    return root


@pytest.fixture
def postgres_database() -> Iterator[Callable[[], str]]:
    """Makes fresh databases on the suite's PostgreSQL server (a run's thread id is derived from its inputs, so
    two runs of one persona sharing a database would share a thread) and drops them afterwards; skips, saying
    why, when there is no server."""
    url = os.environ.get("TASKFORGE_TEST_PG_URL")
    if not url:
        pytest.skip(
            "no PostgreSQL server: set TASKFORGE_TEST_PG_URL, or run the suite under scripts/with-postgres"
        )
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    made: list[str] = []

    def new() -> str:
        name = f"taskforge_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))

    yield new
    with psycopg.connect(url, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def author_args(sources: Path, repo: Path, world: Path, *extra: str, repeats: int = 1) -> list[str]:
    """`taskforge author` for the fixture persona into `repo`: two stories, so calibration measures each level on
    two tasks; the fixture's stories predate policy documents, so the heuristic is the reference."""
    return [
        "author",
        "--persona",
        "desk_head",
        "--world",
        str(world),
        "--sources",
        str(sources),
        "--tasksets-dir",
        str(repo / "tasksets"),
        "--skills-dir",
        str(repo / "skills"),
        "--baseline",
        "lived",
        "--repeats",
        str(repeats),
        "--min-attempts",
        "2",
        "--reference-agent",
        "heuristic",
        *extra,
    ]
