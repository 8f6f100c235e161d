"""Seeded random kills: `author`, `review approve` and `recertify --commit`, each stopped at a random kill point
of its write→commit window (SIGKILL or Ctrl-C), then run again as the user would. After every rerun the
destination's HEAD holds one consistent commit of the persona (task files, lock, calibration and reviews agree),
nothing Taskforge owns is left uncommitted, and nothing is duplicated.

Deterministic from its seed (TASKFORGE_KILL_SEED, default 23); the kill lands at the chosen point because the
process waits there (tests/killpoints), not after a sleep. The default is a handful of kills so the suite stays
quick; TASKFORGE_KILLS=30 runs the long variant (about a third of the kills per command)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from tests.authoring.killing import git, new_repo, run_until, taskforge
from tests.authoring.test_cli_destination import TS, author, commits, consistent, desk  # noqa: F401

SEED = int(os.environ.get("TASKFORGE_KILL_SEED", "23"))
KILLS = int(os.environ.get("TASKFORGE_KILLS", "8"))


def _plan(rng: random.Random) -> list[tuple[str, str]]:
    """Which command each kill stops and how: author kills are the dear ones (a run each), so they are a
    quarter of the plan; every command meets both signals."""
    authors = max(2, KILLS // 4)
    rest = KILLS - authors
    kinds = ["author"] * authors + ["approve"] * (rest - rest // 2) + ["recertify"] * (rest // 2)
    hows = ["sigkill", "ctrl-c"] * (KILLS // 2 + 1)
    plan = list(zip(kinds, hows[: len(kinds)], strict=True))
    rng.shuffle(plan)
    return sorted(plan, key=lambda p: p[0] != "author")  # the destinations first, then the decisions


def _items(desk_dir: Path) -> list[dict]:
    done = taskforge(["review", "list", "--json", "--tasksets-dir", "../dest"], desk_dir)
    assert done.returncode == 0, done.stderr
    return [i for i in json.loads(done.stdout)["items"] if i["status"] == "open"]


def _stale(dest: Path) -> None:
    """A grader change as recertify sees one: every certificate issued under another grader, committed."""
    lock = dest / TS / "certificates.json"
    raw = json.loads(lock.read_text())
    for cert in raw["tasks"].values():
        cert["fingerprints"]["grader"] = "0" * 64
    lock.write_text(json.dumps(raw, indent=2) + "\n")
    git(dest, "commit", "-q", "-am", "a grader change")


def test_random_kills_leave_one_consistent_commit(desk, tmp_path):  # noqa: F811
    rng = random.Random(SEED)
    plan = _plan(rng)
    log: list[str] = []
    dest = tmp_path / "dest"
    window = 0
    for n, (kind, how) in enumerate(plan):
        if kind == "author":
            if dest.exists():  # every author kill into a fresh destination: a finished one is up to date
                dest.rename(tmp_path / f"dest-{n}")
            new_repo(dest, initial_commit=rng.random() < 0.5)
            at = rng.randint(
                1, window or 36
            )  # an author run has about 30 points; a run that ends first counts them
            args = author()
        elif kind == "approve":
            items = _items(desk)
            assert items, "the run left open minor items to decide"
            item = rng.choice(items)
            at = rng.randint(1, 8)
            args = ["review", "approve", item["id"], "--tasksets-dir", "../dest", "--note", f"kill {n}"]
        else:
            _stale(dest)
            at = rng.randint(1, 8)
            args = ["recertify", "--tasksets-dir", "../dest", "--world", "world", "--commit"]
        stopped = run_until(args, desk, dest, at=at, how=how)
        log.append(f"{n}: {kind} {how} at point {at}/{len(stopped.points)} paused={stopped.paused}")
        if kind == "author" and stopped.paused is None:
            window = len(stopped.points)
        rerun = taskforge(args, desk)
        assert rerun.returncode in ((0, 1) if kind == "approve" else (0,)), "\n".join(log) + rerun.stderr
        if kind == "approve" and rerun.returncode == 1:
            assert "already approved" in rerun.stderr, "\n".join(log) + rerun.stderr
        try:
            consistent(dest)
        except Exception as exc:
            raise AssertionError("\n".join(log) + "\n" + rerun.stdout + rerun.stderr) from exc
        assert len(commits(dest)) == 1, "\n".join(log)
        if kind == "approve":
            head = json.loads(git(dest, "show", f"HEAD:{TS}/reviews/desk_head.json"))
            assert [i["status"] for i in head["items"] if i["id"] == item["id"]] == ["approved"]
            lock = json.loads(git(dest, "show", f"HEAD:{TS}/certificates.json"))
            reviews = [
                r
                for cert in lock["tasks"].values()
                for r in cert["reviews"]
                if r["flag"] in (item["id"], item.get("flag"))
            ] + [
                r
                for p in lock["personas"].values()
                for r in p["calibration"].get("reviews", [])
                if r["flag"] in (item["id"], item.get("flag"))
            ]
            assert len(reviews) == 1, ("the decision is recorded once", "\n".join(log))
        if kind == "recertify":
            lock = json.loads(git(dest, "show", f"HEAD:{TS}/certificates.json"))
            assert all(c["fingerprints"]["grader"] != "0" * 64 for c in lock["tasks"].values()), "\n".join(
                log
            )
    assert len(log) == len(plan) == KILLS
    killed = sum(1 for line in log if not line.endswith("paused=None"))
    assert killed >= len(plan) // 2, "most kills landed inside the window:\n" + "\n".join(log)
