"""`taskforge report`: the static site of an authored taskset (ladders, gates, calibration, review items, transcripts),
escaped against untrusted text, and loaded from disk in a real headless Chromium."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app
from authoring.report import build_report
from authoring.review import ReviewItem, read_file, reviews_path
from certify.agents import resolve_agent
from certify.evaluate import evaluate, select_tasks
from certify.task import TaskSet
from simulator import World
from tests.authoring.conftest import init_repo, write_sources
from tests.authoring.test_review import decide_now, flagged_run
from tests.conftest import write_world

HOSTILE = "<img src=x onerror=alert(1)> src[old] & '.[postgres]'"
CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A persona authored on the mini world with one blocker approved (a decided item) and its minor notes open,
    a hostile review item, and a noop evaluation run; then the report."""
    base = tmp_path_factory.mktemp("report")
    world_path = write_world(base / "world")
    sources = write_sources(base / "sources")
    repo = init_repo(base / "repo")
    db = base / "cp.sqlite"
    outcome = flagged_run(sources, repo, world_path, db)
    decide_now(repo, db, outcome.items[0]["id"], "approve", note="reads fine")
    root = repo / "tasksets" / "workspace_tasks"
    file = read_file(root, "desk_head")
    file.items.append(
        ReviewItem(
            id="hostile",
            run="recertify",
            source="recertify",
            taskset="workspace_tasks",
            persona="desk_head",
            task_id="morning_positions_level1",
            kind="recertify_broken",
            severity="blocker",
            reason=HOSTILE,
            evidence=f"evidence: {HOSTILE}",
            created_at="2025-01-01T00:00:00+00:00",
        )
    )
    reviews_path(root, "desk_head").write_bytes(file.render())
    world = World.load(world_path)
    runs = base / "runs"
    asyncio.run(
        evaluate(
            world,
            select_tasks(root),
            resolve_agent("noop"),
            repeats=2,
            runs_dir=runs,
            taskset=TaskSet.load(root).manifest.taskset_id,
        )
    )
    out = base / "site"
    index = build_report(root, out, world=world, runs_dir=runs)
    return index, out


def page(out: Path, name: str) -> str:
    return (out / name).read_text(encoding="utf-8")


def test_the_site_has_every_part(site):
    index, out = site
    assert index == out / "index.html"
    names = {p.name for p in out.glob("*.html")}
    run_page = next(n for n in names if n.startswith("run-"))
    assert {"index.html", "review.html", "persona-desk_head.html", "trials-desk_head.html"} <= names
    assert (out / "report.js").is_file() and (out / "report.css").is_file()
    assert (out / "assets" / "desk_head-staircase.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    persona = page(out, "persona-desk_head.html")
    for story in ("morning_positions", "risk_repair"):
        assert all(f'id="{story}_level{n}"' in persona for n in range(5))
    assert persona.count('class="ladder"') == 2
    # each level shows what its eval grades beside its prompt (tests/authoring/test_report_prompts.py: the words)
    assert persona.count('<p class="graded">graded: ') == 10
    assert 'title="oracle: reference passes' in persona and "dead rung: unprobed" in persona
    assert re.search(r"<td>level0</td><td>Execute</td>\s*<td class=\"num\">\d+</td>", persona)
    trials = page(out, "trials-desk_head.html")
    assert 'id="cal-morning_positions_level1-r0"' in trials and "Failing checks" in trials
    assert "stored compact: the envelopes shown come from replaying" in trials
    run = page(out, run_page)
    assert "pass^k" in run and "doing nothing" not in run and "missing_tool_call" in run
    review = page(out, "review.html")
    assert 'id="open-items"' in review and 'id="decided-items"' in review
    decided = review[review.index('id="decided-items"') :]
    assert "approve" in decided and "reads fine" in decided and "ana" in decided
    assert "dead_rung" in review[: review.index('id="decided-items"')]


def test_untrusted_text_is_escaped(site):
    _, out = site
    review = page(out, "review.html")
    assert "<img src=x" not in review
    assert "&lt;img src=x onerror=alert(1)&gt; src[old] &amp; &#39;.[postgres]&#39;" in review
    assert "<script" not in review.replace('<script src="report.js"></script>', "")


def test_the_command_writes_the_site(site, tmp_path):
    _, out = site
    tasksets = out.parent / "repo" / "tasksets"
    result = CliRunner().invoke(
        app,
        [
            "report",
            "--tasksets-dir",
            str(tasksets),
            "--out",
            str(tmp_path / "s"),
            "--world",
            str(out.parent / "world"),
            "--runs-dir",
            str(tmp_path / "none"),
        ],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s" / "index.html").is_file() and "file://" in result.stdout
    assert not (tmp_path / "none").exists()
    missing = CliRunner().invoke(app, ["report", "--taskset", "nope", "--tasksets-dir", str(tasksets)])
    assert missing.exit_code == 2 and "no taskset.json" in missing.stderr


def chromium(tmp_path: Path, url: str, *flags: str) -> tuple[str, str]:
    """Load `url` in headless Chromium; returns (stdout, the console lines it logged)."""
    profile = tmp_path / "chromium-profile"
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *flags,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, "\n".join(console)


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)",
)
def test_the_report_renders_in_a_browser_from_disk(site, tmp_path):
    _, out = site
    dom, console = chromium(tmp_path, (out / "persona-desk_head.html").as_uri(), "--dump-dom")
    assert console == ""
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-ready="1"' in body and 'data-broken-images="0"' in body
    assert 'id="staircase-plot"' in dom and dom.count('class="ladder"') == 2 and 'id="levels"' in dom

    dom, console = chromium(
        tmp_path, (out / "trials-desk_head.html").as_uri() + "?q=level1&failed=1", "--dump-dom"
    )
    assert console == ""
    items = re.findall(r"<li data-verdict=\"(\w+)\" data-text=\"([^\"]*)\"( hidden=\"\")?>", dom)
    shown = [(v, text) for v, text, hidden in items if not hidden]
    assert shown and len(shown) < len(items)
    assert all("level1" in text and verdict != "pass" for verdict, text in shown)
    assert re.search(rf'id="shown-count">{len(shown)}<', dom)

    dom, console = chromium(tmp_path, (out / "review.html").as_uri(), "--dump-dom")
    assert console == ""
    assert 'id="item-hostile"' in dom and '<img src="x"' not in dom

    shot = tmp_path / "persona.png"
    chromium(
        tmp_path, (out / "persona-desk_head.html").as_uri(), f"--screenshot={shot}", "--window-size=1400,1000"
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_a_script_error_would_be_caught(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, console = chromium(tmp_path, broken.as_uri(), "--dump-dom")
    assert "Uncaught ReferenceError" in console
