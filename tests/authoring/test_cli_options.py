"""The options commands share mean one thing everywhere: one flag and one help text across every
command; `--world` defaults to the taskset's own world in every command that has a taskset, and a world that
does not load is the same one-line error (exit 2) whichever command met it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from typer.testing import CliRunner

from authoring.cli import app
from authoring.cli.options import grouped
from certify.evaluate import load_record, load_run
from tests.authoring.conftest import author_args, git
from tests.certify.helpers import raw
from tests.conftest import write_world

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def commands(group: typer.core.TyperGroup, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if isinstance(command, typer.core.TyperGroup):
            yield from commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_a_shared_flag_has_one_help_text_per_meaning():
    seen: dict[str, dict[str, list[str]]] = {}
    for name, command in commands(typer.main.get_command(app)):
        for param in command.params:
            if isinstance(param, typer.core.TyperOption) and param.name != "help":
                flag = max(param.opts, key=len)
                seen.setdefault(flag, {}).setdefault(param.help or "", []).append(name)
    world = seen["--world"]
    assert len(world) == 1, f"--world is declared with {len(world)} help texts: {world}"
    (users,) = world.values()
    assert set(users) >= {"author", "calibrate", "certify", "check", "eval", "new story", "recertify"}
    assert {"report", "serve", "world check", "world list", "world show"} <= set(users)
    for flag in ("--json", "--tasksets-dir", "--runs-dir", "--sources", "--skills-dir", "--strict"):
        assert len(seen[flag]) == 1, f"{flag}: {seen[flag]}"
    # --taskset names a folder under --tasksets-dir, or is the folder itself, or narrows a listing: three
    # meanings, one declaration each.
    assert len(seen["--taskset"]) == 3, seen["--taskset"]


@dataclass(frozen=True)
class Limits:
    most: Annotated[int, typer.Option("--most", help="At most.")] = 3
    quiet: Annotated[bool, typer.Option("--quiet")] = False


def test_a_group_of_options_stands_in_the_place_of_its_parameter():
    got = []
    demo = typer.Typer()

    @demo.command("one")
    @grouped
    def one(name: str, limits: Limits = Limits(), tail: Annotated[str, typer.Option("--tail")] = "t") -> None:
        """A command with a group in the middle."""
        got.append((name, limits, tail))

    @demo.command("two")
    def two() -> None:
        """Keeps `one` addressable by name."""

    result = runner.invoke(demo, ["one", "x", "--most", "5", "--tail", "u"])
    assert result.exit_code == 0, result.output
    assert got == [("x", Limits(most=5, quiet=False), "u")]
    params = [p.name for p in typer.main.get_command(demo).commands["one"].params]
    assert params == ["name", "most", "quiet", "tail"]
    assert one.__doc__ == "A command with a group in the middle."


# --- the world of a taskset ---------------------------------------------------------------------------------


def taskset(root: Path, world: Path | None, *tasks: str) -> Path:
    """A taskset folder whose manifest names `world`, with one mini-world task per id."""
    (root / "desk").mkdir(parents=True)
    manifest = {"taskset_id": root.name, **({"world": str(world)} if world else {})}
    (root / "taskset.json").write_text(json.dumps(manifest))
    for task_id in tasks:
        (root / "desk" / f"{task_id}.json").write_text(json.dumps(raw(id=task_id)))
    return root


def test_eval_runs_in_the_world_its_taskset_names_and_a_retry_keeps_it(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "ts", mini_world_path, "desk_fix_level0", "desk_other_level0")
    runs = tmp_path / "runs"
    first = invoke("eval", "--taskset", str(ts), "--agent", "oracle", "--runs-dir", str(runs), "--json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["levels"][0]["rate"] == 1.0, "the oracle passes only in the mini world"
    (run_dir,) = runs.iterdir()
    assert load_record(run_dir).world == str(mini_world_path)
    trials = (run_dir / "trials.jsonl").read_text().splitlines()
    (run_dir / "trials.jsonl").write_text(trials[0] + "\n")  # the second trial never finished

    again = invoke("eval", "--retry", run_dir.name, "--runs-dir", str(runs), "--json")
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)
    assert report["trials"] == 2 and report["levels"][0]["rate"] == 1.0
    assert len(load_run(run_dir)) == 2 and load_record(run_dir).retries[0]["planned"] == 1


def test_a_retry_refuses_what_it_cannot_honour(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "ts", mini_world_path, "desk_fix_level0")
    runs = tmp_path / "runs"
    assert invoke("eval", "--taskset", str(ts), "--agent", "noop", "--runs-dir", str(runs)).exit_code == 0
    (run_dir,) = runs.iterdir()
    for args, message in (
        (["--retry", "nope"], "--retry nope: not a run folder (no readable run.json)"),
        (
            ["--retry", str(run_dir), "--repeats", "2"],
            "--task, --limit, --persona and --repeats do not apply",
        ),
        (["--retry", str(run_dir), "--agent", "oracle"], "the run measured 'noop', not 'oracle'"),
        (
            ["--retry", str(run_dir), "--mode", "tools"],
            "--mode only apply to openai:<model> agents, not 'noop'",
        ),
    ):
        result = invoke("eval", "--runs-dir", str(runs), *args)
        assert result.exit_code == 2 and message in " ".join(result.stderr.split()), (args, result.stderr)
    nothing = invoke("eval", "--retry", str(run_dir))
    assert nothing.exit_code == 0 and "no invalid or unfinished trial to retry" in nothing.stderr


def test_certify_checks_each_taskset_in_its_own_world(mini_world_path, tmp_path):
    other = write_world(tmp_path / "other-world")
    first = taskset(tmp_path / "a", mini_world_path, "desk_fix_level0")
    second = taskset(tmp_path / "b", other, "desk_fix_level1")
    result = invoke("certify", "--json", str(first), str(second))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["summary"]["certified"] == 2
    missing = taskset(tmp_path / "c", tmp_path / "gone", "desk_fix_level2")
    result = invoke("certify", str(first), str(missing))
    assert result.exit_code == 2
    assert f"cannot load world {tmp_path / 'gone'}" in " ".join(result.stderr.split())


def test_a_world_that_does_not_load_is_the_same_error_in_every_command(mini_world_path, tmp_path):
    ts = taskset(tmp_path / "tasksets" / "ts", None, "desk_fix_level0")
    gone = str(tmp_path / "gone")
    for args in (
        ["world", "list"],
        ["world", "check"],
        ["world", "show"],
        ["check", "desk_head"],
        ["new", "story", "p", "s", "--sources", str(tmp_path / "src"), "--widget", "Positions"],
        ["certify", str(ts)],
        ["calibrate", "--taskset", str(ts)],
        ["eval", "--taskset", str(ts), "--agent", "noop"],
        ["recertify", "--tasksets-dir", str(tmp_path / "tasksets"), "--taskset", "ts"],
        ["report", "--tasksets-dir", str(tmp_path / "tasksets"), "--taskset", "ts"],
        ["serve", "--taskset", str(ts), "--task", "desk_fix_level0"],
    ):
        result = invoke(*args, "--world", gone)
        assert result.exit_code == 2, (args, result.output)
        assert f"error: cannot load world {gone}: {gone}: path: world directory does not exist" in " ".join(
            result.stderr.split()
        ), (args, result.stderr)


def test_author_defaults_to_the_world_its_taskset_names(sources, repo, mini_world_path, monkeypatch):
    monkeypatch.chdir(repo)
    first = invoke(*author_args(sources, repo, mini_world_path))
    assert first.exit_code == 0, first.output
    manifest = json.loads((repo / "tasksets" / "workspace_tasks" / "taskset.json").read_text())
    assert manifest["world"] == str(mini_world_path.resolve())
    args = author_args(sources, repo, mini_world_path)
    at = args.index("--world")
    again = invoke(*args[:at], *args[at + 2 :])
    assert again.exit_code == 0, again.output
    assert git(repo, "status", "--porcelain", "--", "tasksets") == ""
