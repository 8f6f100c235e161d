"""Statuses checked against the truth: each scenario where `author`, `review` or `recertify` used to report
success that did not happen, reproduced, with the outcome it must have now."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from authoring.cli import app, main
from authoring.run import RunError, run_persona
from tests.authoring.conftest import author_args, git
from tests.authoring.test_pipeline import drivers, options

TS = Path("tasksets") / "workspace_tasks"
LOCK = TS / "certificates.json"


def taskforge_commits(repo: Path) -> list[str]:
    return [s for s in git(repo, "log", "--format=%s").splitlines() if s.startswith("taskforge: certify")]


def head_holds(repo: Path, n_tasks: int = 10) -> bool:
    lock = json.loads(git(repo, "show", f"HEAD:{LOCK}"))
    names = git(repo, "ls-tree", "--name-only", f"HEAD:{TS / 'desk_head'}").split()
    return len(lock["personas"]["desk_head"]["tasks"]) == n_tasks and len(names) == n_tasks


def run(sources, repo, world, db, **kw):
    force = kw.pop("force", False)
    return run_persona(
        options(sources, repo, world, **kw), drivers(), driver_name="rules", checkpoint_path=db, force=force
    )


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """The console entry point in-process: exit status, stdout, stderr."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return int(info.value.code or 0), out.out, out.err


# 1 ------------------------------------------------------------------------------------------------------------
def test_no_commit_then_author_commits_instead_of_claiming_up_to_date(
    sources, repo, mini_world_path, tmp_path
):
    db = tmp_path / "cp.sqlite"
    first = run(sources, repo, mini_world_path, db, commit=False)
    assert first.status == "certified" and taskforge_commits(repo) == []
    again = run(sources, repo, mini_world_path, db, commit=False)
    assert again.status == "up_to_date" and "not committed" in again.summary
    second = run(sources, repo, mini_world_path, db)
    assert second.status == "committed", second.summary
    assert len(taskforge_commits(repo)) == 1 and head_holds(repo)
    assert git(repo, "status", "--porcelain", "--", "tasksets") == ""
    assert run(sources, repo, mini_world_path, db).status == "up_to_date"


# 2 ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["sigkill", "ctrl-c"])
def test_a_kill_between_writing_and_committing_resumes_into_one_commit(
    sources, repo, mini_world_path, tmp_path, how
):
    """Stopped at its commit (a kill point the process waits at, so the kill lands there on a loaded machine
    too): SIGKILL leaves the files written and nothing committed; Ctrl-C interrupts the main thread, and the
    worker that writes and commits finishes what it was doing. Either way the rerun ends in one commit."""
    from tests.authoring.killing import run_until, taskforge

    args = author_args(sources, repo, mini_world_path)
    stopped = run_until(args, repo, repo, at=1, how=how, match="git commit")
    assert stopped.paused is not None, stopped.stderr
    if how == "sigkill":
        assert taskforge_commits(repo) == [], "the kill landed before the commit"
        assert (repo / LOCK).is_file(), "the files were written"
    else:
        assert stopped.returncode == 130, stopped.stderr
        assert len(taskforge_commits(repo)) <= 1
    resumed = taskforge(args, repo)
    assert resumed.returncode == 0, resumed.stderr
    if how == "sigkill":
        assert "resuming" in resumed.stderr and "at commit" in resumed.stderr
    assert len(taskforge_commits(repo)) == 1 and head_holds(repo)
    assert git(repo, "status", "--porcelain", "--", "tasksets") == ""
    again = taskforge(args, repo)
    assert again.returncode == 0 and "up to date" in again.stdout


# 3 ------------------------------------------------------------------------------------------------------------
def test_a_deleted_lock_is_reported_or_rebuilt_never_called_committed(
    sources, repo, mini_world_path, tmp_path
):
    db = tmp_path / "cp.sqlite"
    assert run(sources, repo, mini_world_path, db).status == "committed"
    (repo / LOCK).unlink()
    with pytest.raises(RunError, match=r"working tree changes it .*certificates.json.*git checkout HEAD"):
        run(sources, repo, mini_world_path, db)
    assert not (repo / LOCK).exists(), "nothing was touched"
    git(repo, "rm", "-q", "--cached", str(LOCK))
    git(repo, "commit", "-q", "-m", "drop the lock")
    rebuilt = run(sources, repo, mini_world_path, db)
    assert rebuilt.status == "committed" and head_holds(repo) and (repo / LOCK).is_file()
    assert git(repo, "status", "--porcelain", "--", "tasksets") == ""


# 4 ------------------------------------------------------------------------------------------------------------
def test_options_that_change_the_output_start_a_new_run_and_force_always_reauthors(
    sources, repo, mini_world_path, tmp_path
):
    db = tmp_path / "cp.sqlite"
    first = run(sources, repo, mini_world_path, db)
    assert first.status == "committed"
    other = run(sources, repo, mini_world_path, db, baseline="")
    assert other.status == "committed" and other.thread_id != first.thread_id
    lock = json.loads((repo / LOCK).read_text())
    assert lock["personas"]["desk_head"]["inputs"]["baseline"] == ""
    task = json.loads((repo / TS / "desk_head" / "risk_repair_level0.json").read_text())
    assert task["setup"]["workspace_baseline"] == ""
    messages: list[str] = []
    forced = run_persona(
        options(sources, repo, mini_world_path, baseline=""),
        drivers(messages),
        driver_name="rules",
        checkpoint_path=db,
        force=True,
    )
    assert forced.status == "committed" and any("level0 (Execute): certified" in m for m in messages)
    again: list[str] = []
    run_persona(
        options(sources, repo, mini_world_path, baseline=""),
        drivers(again),
        driver_name="rules",
        checkpoint_path=db,
        force=True,
    )
    assert any("level0 (Execute): certified" in m for m in again), "a second --force re-authors too"
    assert len(taskforge_commits(repo)) == 4


# 5 ------------------------------------------------------------------------------------------------------------
def test_a_second_destination_gets_its_own_commit(sources, repo, mini_world_path, tmp_path):
    db = tmp_path / "cp.sqlite"
    assert run(sources, repo, mini_world_path, db).status == "committed"
    other = tmp_path / "other"
    other.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@e.com"], ["config", "user.name", "T"]):
        git(other, *args)
    second = run(sources, other, mini_world_path, db)
    assert second.status == "committed"
    assert second.result["commit"] == git(other, "rev-parse", "HEAD").strip()
    assert head_holds(other) and len(taskforge_commits(other)) == 1
    assert len(taskforge_commits(repo)) == 1


# 9 ------------------------------------------------------------------------------------------------------------
def _args(sources, repo, world, *extra) -> list[str]:
    return author_args(sources, repo, world, *extra)


def one_line_error(code: int, err: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.startswith("error")]
    assert len(lines) == 1, err


def test_bad_inputs_end_in_one_line_errors(sources, repo, mini_world_path, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli([*_args(sources, repo, mini_world_path)[:-4], "--baseline", "nope"], capsys)
    one_line_error(code, err)
    assert "--baseline 'nope'" in err

    code, _, err = cli(_args(sources, repo, mini_world_path), capsys)
    assert code == 0, err
    lock = repo / LOCK
    lock.write_text(lock.read_text()[:200])
    code, _, err = cli(_args(sources, repo, mini_world_path), capsys)
    one_line_error(code, err)
    assert "certificates.json" in err
    git(repo, "commit", "-q", "-am", "a corrupt lock, committed")
    code, _, err = cli(_args(sources, repo, mini_world_path, "--force"), capsys)
    one_line_error(code, err)
    assert "certificates.json" in err and "invalid JSON" in err.replace("Invalid JSON", "invalid JSON")

    store = tmp_path / ".taskforge" / "checkpoints.sqlite"
    store.write_bytes(b"this is not a database" * 100)
    git(repo, "revert", "--no-edit", "HEAD")
    code, _, err = cli(_args(sources, repo, mini_world_path, "--force"), capsys)
    one_line_error(code, err)
    assert "checkpoint store" in err
    code, _, err = cli(
        ["review", "approve", "fnope", "--checkpoints", str(store), "--tasksets-dir", str(repo / "tasksets")],
        capsys,
    )
    one_line_error(code, err)

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, out, err = cli(["certify", "--json", "--world", str(mini_world_path), str(deep)], capsys)
    assert code == 1 and "Traceback" not in err
    assert "nested too deeply" in json.loads(out)["tasks"][0]["gates"]["schema"]["detail"]


def test_a_read_only_destination_is_one_line(sources, repo, mini_world_path, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = Path.write_bytes

    def refuse(self, data):
        if "tasksets" in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, data)

    real_replace = os.replace

    def refuse_replace(src, dst):
        if "tasksets" in str(dst):
            raise PermissionError(13, "Permission denied", str(dst))
        return real_replace(src, dst)

    monkeypatch.setattr(Path, "write_bytes", refuse)
    monkeypatch.setattr(os, "replace", refuse_replace)  # files are written whole: a temporary, then a rename
    code, _, err = cli(_args(sources, repo, mini_world_path), capsys)
    one_line_error(code, err)
    assert "permission denied" in err and "tasksets" in err
    monkeypatch.setattr(Path, "write_bytes", real)
    monkeypatch.setattr(os, "replace", real_replace)
    code, _, err = cli(_args(sources, repo, mini_world_path), capsys)
    assert code == 0 and "resuming" in err, "the run resumes at its commit once the folder is writable"


# 10 -----------------------------------------------------------------------------------------------------------
def test_a_decision_refuses_a_pending_edit_of_the_lock(
    sources, repo, mini_world_path, tmp_path, capsys, monkeypatch
):
    from tests.authoring.test_review import flagged_run

    db = tmp_path / "cp.sqlite"
    committed = run(sources, repo, mini_world_path, tmp_path / "first.sqlite")
    assert committed.status == "committed"
    story = sources / "stories" / "desk_head" / "risk_repair.md"
    story.write_text(story.read_text() + "\nA second pass.\n")
    outcome = flagged_run(sources, repo, mini_world_path, db)
    lock = repo / LOCK
    edited = lock.read_text().replace('"taskset": "workspace_tasks"', '"taskset": "workspace_tasks" ', 1)
    lock.write_text(edited)
    head = git(repo, "rev-parse", "HEAD")
    code, _, err = cli(
        [
            "review",
            "approve",
            outcome.items[0]["id"],
            "--checkpoints",
            str(db),
            "--tasksets-dir",
            str(repo / "tasksets"),
        ],
        capsys,
    )
    one_line_error(code, err)
    assert "certificates.json" in err and "uncommitted changes" in err
    assert git(repo, "rev-parse", "HEAD") == head and lock.read_text() == edited
    git(repo, "checkout", "--", str(LOCK))
    code, out, err = cli(
        [
            "review",
            "approve",
            outcome.items[0]["id"],
            "--checkpoints",
            str(db),
            "--tasksets-dir",
            str(repo / "tasksets"),
        ],
        capsys,
    )
    assert code == 0 and "run: committed" in out, err


def test_calibrate_leaves_committed_files_alone(
    sources, repo, mini_world_path, tmp_path, capsys, monkeypatch
):
    assert run(sources, repo, mini_world_path, tmp_path / "cp.sqlite").status == "committed"
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(
        [
            "calibrate",
            "--taskset",
            str(repo / TS),
            "--persona",
            "desk_head",
            "--world",
            str(mini_world_path),
            "--repeats",
            "1",
        ],
        capsys,
    )
    assert code in (0, 1), err
    assert git(repo, "status", "--porcelain", "--", "tasksets") == "", "no tracked file was rewritten"
    record = json.loads(
        (
            tmp_path / ".taskforge" / "calibrate" / "workspace_tasks" / "desk_head" / "calibration.json"
        ).read_text()
    )
    assert record["taskset"] == "workspace_tasks"
    assert "wrote" in out and ".taskforge/calibrate" in out


def test_recertify_says_what_it_wrote_and_checks_the_repository_first(
    sources, repo, mini_world_path, tmp_path
):
    assert run(sources, repo, mini_world_path, tmp_path / "cp.sqlite", commit=False).status == "certified"
    runner = CliRunner()
    args = ["recertify", "--tasksets-dir", str(repo / "tasksets"), "--world", str(mini_world_path)]
    lock = repo / LOCK
    raw = json.loads(lock.read_text())
    for cert in raw["tasks"].values():
        cert["fingerprints"]["grader"] = "0" * 64
    lock.write_text(json.dumps(raw))
    before = lock.read_text()
    dry = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert dry.exit_code == 0, dry.output
    assert "dry run: nothing written" in dry.output and lock.read_text() == before
    outside = tmp_path / "loose"
    (outside / "tasksets").mkdir(parents=True)
    subprocess.run(["cp", "-r", str(repo / TS), str(outside / "tasksets")], check=True)
    result = runner.invoke(
        app,
        [
            "recertify",
            "--tasksets-dir",
            str(outside / "tasksets"),
            "--world",
            str(mini_world_path),
            "--commit",
        ],
    )
    assert result.exit_code == 2 and "not inside a git repository" in result.output
    assert "--no-commit" not in result.output
    assert (outside / LOCK).read_text() == before


def test_review_fix_without_a_repair_exits_1_and_author_points_at_the_queue(
    sources, repo, mini_world_path, tmp_path, capsys, monkeypatch
):
    from tests.authoring.test_review import flagged_run

    db = tmp_path / "cp.sqlite"
    outcome = flagged_run(sources, repo, mini_world_path, db)
    code, _, err = cli(
        [
            "review",
            "fix",
            outcome.items[0]["id"],
            "--checkpoints",
            str(db),
            "--tasksets-dir",
            str(repo / "tasksets"),
        ],
        capsys,
    )
    assert code == 1 and "no repair" in err and "stays open" in err

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@e.com"], ["config", "user.name", "T"]):
        git(fresh, *args)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(_args(sources, fresh, mini_world_path), capsys)
    assert code == 0, err
    assert "open review item(s), none blocking: taskforge review list --taskset workspace_tasks" in " ".join(
        out.split()
    )


def test_a_run_keeps_what_lives_at_its_start_out_of_the_collector_and_gives_it_back(
    sources, repo, mini_world_path, tmp_path, monkeypatch
):
    import gc

    from authoring.roles.validator import RuleValidator

    seen: list[int] = []

    class Watching(RuleValidator):
        def review(self, task, world, persona):
            seen.append(gc.get_freeze_count())
            return super().review(task, world, persona)

    before = gc.get_freeze_count()
    outcome = run_persona(
        options(sources, repo, mini_world_path),
        drivers(validator=Watching()),
        driver_name="rules",
        checkpoint_path=tmp_path / "cp.sqlite",
    )
    assert outcome.status == "committed"
    assert seen and min(seen) > before, "frozen while the run works"
    assert gc.get_freeze_count() == before, "and unfrozen when it ends"


def test_a_new_checkpoint_store_uses_large_pages(tmp_path):
    from authoring.run import checkpointer

    with checkpointer(None, tmp_path / "cp.sqlite") as saver:
        assert saver.conn.execute("PRAGMA page_size").fetchone()[0] == 65536
