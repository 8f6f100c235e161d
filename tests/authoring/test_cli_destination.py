"""`taskforge author` into a destination that is its own git repository (`--tasksets-dir ../dest`, the way a
team keeps tasksets apart from the tool), typed as a user types it: the files a run wrote are recognised as its
own — after `--no-commit`, after a kill before or after the lock is written, after the checkpoint store is
lost — and only changes Taskforge did not make are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.authoring.conftest import write_sources
from tests.authoring.killing import git, new_repo, run_until, taskforge
from tests.authoring.test_graph_routes import marked_oracle  # noqa: F401  (a fixture)
from tests.conftest import write_world

TS = "workspace_tasks"


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    """A working folder with the sources, a world and skills; the destination repository is ../dest from it."""
    work = tmp_path / "work"
    write_sources(work / "src")
    write_world(work / "world")
    (work / "skills").mkdir()
    (work / "skills" / "task-author.md").write_text("# task-author\n\n## Lessons\n")
    return work


def author(*extra: str) -> list[str]:
    return [
        "author",
        "--persona",
        "desk_head",
        "--world",
        "world",
        "--sources",
        "src",
        "--tasksets-dir",
        "../dest",
        "--skills-dir",
        "skills",
        "--baseline",
        "lived",
        "--repeats",
        "1",
        "--min-attempts",
        "2",
        "--reference-agent",
        "heuristic",
        *extra,
    ]


def commits(dest: Path) -> list[str]:
    import subprocess

    if subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=dest, capture_output=True
    ).returncode:
        return []
    return [s for s in git(dest, "log", "--format=%s").splitlines() if s.startswith("taskforge: certify")]


def consistent(dest: Path) -> None:
    """HEAD holds one consistent commit of the persona: every task file the lock lists with its hash, the
    calibration record's files, the review file; nothing under the taskset is left uncommitted."""
    from certify.lock import CertificateLock, sha256_text, task_content_hash

    lock = CertificateLock.parse(git(dest, "show", f"HEAD:{TS}/certificates.json"), "HEAD lock")
    record = lock.personas["desk_head"]
    names = set(git(dest, "ls-tree", "--name-only", f"HEAD:{TS}/desk_head").split())
    assert names == {f"{t}.json" for t in record.tasks}, "HEAD's task files are the lock's, no more, no less"
    for task_id in record.tasks:
        raw = json.loads(git(dest, "show", f"HEAD:{TS}/{lock.tasks[task_id].path}"))
        assert task_content_hash(raw) == lock.tasks[task_id].content_sha256
    for rel, sha in record.files.items():
        blob = subprocess_bytes(dest, f"HEAD:{TS}/{rel}")
        assert sha256_text(blob) == sha, rel
    reviews = json.loads(git(dest, "show", f"HEAD:{TS}/reviews/desk_head.json"))
    ids = [(i["id"], i["run"]) for i in reviews["items"]]
    assert len(ids) == len(set(ids)), "no review item twice"
    assert git(dest, "status", "--porcelain", "--untracked-files=all") == "", "nothing left uncommitted"


def subprocess_bytes(dest: Path, spec: str) -> bytes:
    import subprocess

    return subprocess.run(["git", "show", spec], cwd=dest, check=True, capture_output=True).stdout


@pytest.mark.parametrize("initial_commit", [False, True], ids=["empty-repo", "initial-commit"])
def test_no_commit_then_commit_into_its_own_repository(desk, tmp_path, initial_commit):
    dest = new_repo(tmp_path / "dest", initial_commit)
    first = taskforge(author("--no-commit"), desk)
    assert first.returncode == 0, first.stderr
    assert commits(dest) == [] and (dest / TS / "certificates.json").is_file()
    second = taskforge(author(), desk)
    assert second.returncode == 0, second.stderr
    assert "uncommitted changes" not in second.stderr
    assert "committed the finished run's files" in second.stdout
    assert len(commits(dest)) == 1
    consistent(dest)
    again = taskforge(author(), desk)
    assert again.returncode == 0 and "up to date" in again.stdout, again.stderr


def test_a_foreign_edit_beside_a_finished_run_is_still_refused(desk, tmp_path):
    dest = new_repo(tmp_path / "dest", True)
    assert taskforge(author("--no-commit"), desk).returncode == 0
    task = dest / TS / "desk_head" / "risk_repair_level0.json"
    task.write_text(task.read_text().replace('"prompt": "', '"prompt": "Edited. ', 1))
    refused = taskforge(author(), desk)
    assert refused.returncode == 2
    assert "uncommitted changes" in refused.stderr and "risk_repair_level0.json" in refused.stderr
    assert "morning_positions_level0.json" not in refused.stderr, "only the foreign change is named"
    assert commits(dest) == []


@pytest.mark.parametrize("how", ["sigkill", "ctrl-c"])
def test_a_kill_after_the_first_task_file_before_the_lock_recovers(desk, tmp_path, how):
    dest = new_repo(tmp_path / "dest")
    stopped = run_until(author(), desk, dest, at=2, how=how, match=f"write {dest / TS / 'desk_head'}/")
    assert stopped.paused is not None, stopped.stderr
    if how == "sigkill":
        written = sorted((dest / TS / "desk_head").glob("*.json"))
        assert len(written) == 1, "killed after the first task file appeared"
        assert not (dest / TS / "certificates.json").exists(), "and before the lock was written"
    else:  # Ctrl-C stops the main thread; the worker writing the files finishes what it was doing
        assert stopped.returncode == 130, stopped.stderr
    rerun = taskforge(author(), desk)
    assert rerun.returncode == 0, rerun.stderr
    assert len(commits(dest)) == 1
    consistent(dest)


def test_a_kill_after_the_lock_before_the_commit_recovers(desk, tmp_path):
    dest = new_repo(tmp_path / "dest", True)
    stopped = run_until(author(), desk, dest, at=1, match="git commit")
    assert stopped.paused is not None, stopped.stderr
    assert (dest / TS / "certificates.json").is_file() and commits(dest) == []
    rerun = taskforge(author(), desk)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming" in rerun.stderr
    assert len(commits(dest)) == 1
    consistent(dest)


def test_a_killed_run_whose_checkpoints_are_lost_is_still_recognised(desk, tmp_path):
    """Resumed elsewhere: the checkpoint store is gone, so a new run starts; the files the killed run wrote are
    recognised by content (the journal in the destination's git directory) and overwritten, not refused."""
    dest = new_repo(tmp_path / "dest")
    stopped = run_until(author(), desk, dest, at=3, match=f"write {dest / TS / 'desk_head'}/")
    assert stopped.paused is not None, stopped.stderr
    (desk / ".taskforge" / "checkpoints.sqlite").unlink()
    rerun = taskforge(author(), desk)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming" not in rerun.stderr
    assert len(commits(dest)) == 1
    consistent(dest)


# items 3 and 5: every review id printed can be shown and decided; ids are unique across runs; hints name
# the folder -----------------------------------------------------------------------------------------------
@pytest.fixture
def inverted(marked_oracle, monkeypatch, desk):  # noqa: F811
    """A reference agent that fails every level-0 task the rule fixer cannot mend: the staircase stays inverted
    after the fixer's rounds, a blocker the review node raises itself."""
    monkeypatch.chdir(desk)
    return author("--reference-agent", "marked-oracle")


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from authoring.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return int(info.value.code or 0), out.out, out.err


def printed_items(out: str) -> dict[str, str]:
    import re

    return dict(re.findall(r"^\s*review (f[0-9a-f]{9}) (\w+)", out, re.M))


def test_every_printed_review_id_can_be_shown_and_approved(inverted, tmp_path, capsys):
    dest = new_repo(tmp_path / "dest", True)
    code, out, err = cli(inverted, capsys)
    assert code == 1, err
    items = printed_items(out)
    assert "staircase" in items.values(), out
    assert "staircase None" not in out and "staircase desk_head" in out
    # the staircase's fix line names what to change: the persona's stories at the inverted level, not a file
    # with no story in its name
    assert "fix .md" not in out
    assert "fix desk_head's stories at Execute" in " ".join(out.split()), out
    flat = " ".join(out.split())
    hint = flat[flat.index("open review item") :]
    assert hint.split(": ", 1)[1].startswith(
        "taskforge review list --taskset workspace_tasks --tasksets-dir ../dest"
    ), hint
    code, listed, err = cli(
        ["review", "list", "--json", "--taskset", "workspace_tasks", "--tasksets-dir", "../dest"], capsys
    )
    assert code == 0, err
    assert set(items) <= {i["id"] for i in json.loads(listed)["items"]}, "the hint lists the printed items"
    for item_id in items:
        code, shown, err = cli(["review", "show", item_id, "--tasksets-dir", "../dest"], capsys)
        assert code == 0, err
        assert shown.startswith(item_id)
    staircase = next(i for i, kind in items.items() if kind == "staircase")
    code, out, err = cli(["review", "approve", staircase, "--tasksets-dir", "../dest"], capsys)
    assert code == 0, err
    assert f"approve: {staircase}" in out
    head = json.loads(git(dest, "show", f"HEAD:{TS}/reviews/desk_head.json"))
    assert [i["status"] for i in head["items"] if i["id"] == staircase] == ["approved"]


def test_review_ids_are_unique_across_runs(inverted, desk, tmp_path, capsys):
    new_repo(tmp_path / "dest", True)
    code, first, err = cli(inverted, capsys)
    assert code == 1, err
    story = desk / "src" / "stories" / "desk_head" / "risk_repair.md"
    story.write_text(story.read_text() + "\nA second pass.\n")
    code, second, err = cli(inverted, capsys)
    assert code == 1, err
    assert "superseded" in err
    assert set(printed_items(first)).isdisjoint(printed_items(second)), "a new run's items are new items"
    code, listed, err = cli(["review", "list", "--all", "--json", "--tasksets-dir", "../dest"], capsys)
    ids = [i["id"] for i in json.loads(listed)["items"]]
    assert ids and len(ids) == len(set(ids)), "review list --all never shows one id twice"
    statuses = {i["id"]: i["status"] for i in json.loads(listed)["items"]}
    assert {statuses[i] for i in printed_items(first)} == {"superseded"}
    assert {statuses[i] for i in printed_items(second)} == {"open"}
