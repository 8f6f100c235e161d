"""A persona with two stories on the mini world, and a scratch git repository to author into."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
  policy: {phrase: the quarterly desk policy, carries: period, meaning: quarter-to-date}
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
