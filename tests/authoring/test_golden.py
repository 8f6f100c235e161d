"""The shipped `portfolio_manager` persona, authored again from the command line into a destination of its own, writes
the committed files byte for byte (time stamps and measured durations aside): a refactoring of the pipeline, the
rule author or the gates that changes a task, a certificate or a calibration shows up here first.

When a change is meant to alter what is authored, re-author the shipped taskset (`taskforge author --force`) and
commit it with the change; this test then holds again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.authoring.conftest import git

ROOT = Path(__file__).resolve().parents[2]
PERSONA = "portfolio_manager"
SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def _stable(record: Any) -> Any:
    """A record without what a rerun cannot reproduce (when it ran, how long a trial took)."""
    if isinstance(record, dict):
        return {
            k: _stable(v)
            for k, v in record.items()
            if k not in {"created_at", "duration_s", "certified_at", "regraded_at"}
        }
    if isinstance(record, list):
        return [_stable(v) for v in record]
    return record


@pytest.fixture(scope="module")
def authored(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("golden")
    git(dest, "init", "-q")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "authoring",
            "author",
            "--persona",
            PERSONA,
            "--sources",
            str(ROOT),
            "--tasksets-dir",
            str(dest / "tasksets"),
            "--skills-dir",
            str(dest / "skills"),
            "--no-commit",
        ],
        cwd=dest,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return dest / "tasksets" / "workspace_tasks"


def test_the_task_files_are_the_committed_ones_byte_for_byte(authored):
    shipped = sorted(p.name for p in (SHIPPED / PERSONA).glob("*.json"))
    assert len(shipped) == 20
    assert sorted(p.name for p in (authored / PERSONA).glob("*.json")) == shipped
    for name in shipped:
        assert (authored / PERSONA / name).read_bytes() == (SHIPPED / PERSONA / name).read_bytes(), name


def test_the_certificates_are_the_committed_ones(authored):
    ours = json.loads((authored / "certificates.json").read_text())
    theirs = json.loads((SHIPPED / "certificates.json").read_text())
    mine = {k: v for k, v in ours["tasks"].items() if k.startswith(tuple(_story_ids()))}
    assert len(mine) == 20
    assert _stable(mine) == _stable({k: theirs["tasks"][k] for k in mine})
    # the persona record hashes the calibration files, which carry the run's time stamp: compare the rest
    ours_p, theirs_p = (
        {k: v for k, v in r["personas"][PERSONA].items() if k not in {"files", "updated_at"}}
        for r in (ours, theirs)
    )
    assert _stable(ours_p) == _stable(theirs_p)
    assert set(ours["personas"][PERSONA]["files"]) == set(theirs["personas"][PERSONA]["files"])


def test_the_calibration_record_is_the_committed_one(authored):
    ours = authored / "calibration" / PERSONA
    theirs = SHIPPED / "calibration" / PERSONA
    assert _stable(json.loads((ours / "calibration.json").read_text())) == _stable(
        json.loads((theirs / "calibration.json").read_text())
    )
    mine = [_stable(json.loads(line)) for line in (ours / "trials.jsonl").read_text().splitlines()]
    shipped = [_stable(json.loads(line)) for line in (theirs / "trials.jsonl").read_text().splitlines()]
    assert mine == shipped
    assert (ours / "calibration.md").read_text() == (theirs / "calibration.md").read_text()


def _story_ids() -> list[str]:
    return [p.stem for p in (ROOT / "stories" / PERSONA).glob("*.md")]
