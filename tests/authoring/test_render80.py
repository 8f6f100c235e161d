"""Every command's output at an 80-column terminal: ids whole, reasons whole (wrapped at word boundaries, listed
under tables), gates as one-character marks with a legend, and bracketed text from data printed as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from authoring import render
from authoring.cli import app
from certify.gates import GATE_NAMES as GATES
from tests.authoring.conftest import ADD_STORY
from tests.certify.helpers import raw

runner = CliRunner()
WIDTH = 80
LONG_ID = "reedbed_rights_election_shortfall_level4"  # 40 characters


def run80(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": str(WIDTH)})


def flat(text: str) -> str:
    return " ".join(text.split())


def assert_fits(text: str) -> None:
    """No line past 80 columns, unless one unbreakable token (a long temporary path) is what overflows."""
    for line in text.splitlines():
        if len(line) > WIDTH:
            assert max(len(w) for w in line.split()) > 40, f"line of {len(line)} columns: {line!r}"


def assert_whole(text: str, *tokens: str) -> None:
    """Each token (an id, a path) appears unbroken on one line."""
    for token in tokens:
        assert any(token in line for line in text.splitlines()), f"{token!r} is cut or wrapped:\n{text}"


def write_taskset(root: Path, tasks: dict[str, object], *, folder: str = "desk") -> Path:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "taskset.json").write_text(json.dumps({"taskset_id": "t80", "task_defaults": {}}))
    for name, body in tasks.items():
        (root / folder / f"{name}.json").write_text(body if isinstance(body, str) else json.dumps(body))
    return root


def test_gate_table_columns_come_from_the_results_and_fit():
    gates = GATES
    ok = {g: {"ok": True, "detail": "fine"} for g in gates}
    bad = {**ok, "shortcuts": {"ok": False, "detail": "the note stuffer passes: data_contains [5.24%] alone"}}
    skipped = {g: {"ok": False, "detail": "not run: schema gate failed"} for g in gates}
    skipped["schema"] = {"ok": False, "detail": "x/src[old]/broken.json: (file): invalid JSON"}
    out = Console(width=WIDTH, record=True, force_terminal=False)
    render.gate_table(out, "Certification", [(LONG_ID, ok), ("short_level0", bad), ("broken", skipped)])
    text = out.export_text()
    assert_fits(text)
    assert_whole(text, LONG_ID, "short_level0")
    header = next(line for line in text.splitlines() if line.startswith("task"))
    assert header.split()[1:] == ["sc", "gr", "or", "no", "lo", "le", "de", "eq", "sh", "co", "ju", "pr"]
    assert "gates: sc schema, gr grounding" in flat(
        text
    ) and "sh shortcuts, co counterfactual, ju judge, pr prose; ✓ passed, ✗ failed, · not run" in flat(text)
    row = next(line for line in text.splitlines() if line.startswith("broken"))
    assert row.split()[1:] == ["✗", *["·"] * (len(gates) - 1)]
    assert "shortcuts: the note stuffer passes: data_contains [5.24%] alone" in flat(text)
    assert "schema: x/src[old]/broken.json: (file): invalid JSON" in flat(text)
    seven = Console(width=WIDTH, record=True)
    render.gate_table(seven, "t", [("a", {g: ok[g] for g in gates[:7]})])
    assert "eq" not in seven.export_text().split("\n")[1]


def test_say_wraps_at_words_and_keeps_brackets():
    out = Console(width=WIDTH, record=True)
    message = ("pip install -e '.[postgres]' then look in src[old]/tasks for the " + "word " * 30).strip()
    render.say(out, message, prefix="error: ")
    text = out.export_text()
    assert_fits(text)
    assert "'.[postgres]'" in text and "src[old]/tasks" in text
    assert all(line.startswith("       ") for line in text.splitlines()[1:])
    assert flat(text) == flat("error: " + message)


def test_certify_at_80_columns(mini_world_path, tmp_path):
    ts = write_taskset(
        tmp_path / "ts",
        {
            "desk_fix_level0": raw(),
            LONG_ID: raw(
                id=LONG_ID,
                **{
                    "eval.required_tools": [{"tool": "get_workspace_snapshot", "args": {}, "optional": True}],
                    "eval.required_widgets": [],
                    "eval.required_generated_widgets": [],
                },
            ),
        },
    )
    write_taskset(ts, {"broken_level0": "{ not json"}, folder="src[old]")
    result = run80("certify", "--world", str(mini_world_path), str(ts))
    assert result.exit_code == 1
    out = result.stdout
    assert_fits(out)
    assert_whole(out, "desk_fix_level0", LONG_ID, "broken_level0", "src[old]")
    assert "Certification (1/3 certified)" in out
    assert "noop: doing nothing passes" in flat(out)
    assert f"{LONG_ID}: noop:" in flat(out)


def test_world_commands_at_80_columns(mini_world_path):
    for args, token in (
        (["world", "list"], "acme-x"),
        (["world", "show"], "openbb://workspace/specs/layout-grid"),
        (["world", "show", "Positions"], "desk_overview_positions"),
        (["world", "check"], "ok"),
    ):
        result = run80(*args, "--world", str(mini_world_path))
        assert result.exit_code == 0, result.output
        assert_fits(result.stdout)
        assert_whole(result.stdout, token)


def test_check_at_80_columns_keeps_bracketed_names(sources, mini_world_path):
    story = sources / "stories" / "desk_head" / "morning_positions.md"
    story.write_text(ADD_STORY.replace("{widget: Positions,", "{widget: 'Positions [old]',"))
    result = run80(
        "check",
        "desk_head",
        "--sources",
        str(sources),
        "--world",
        str(mini_world_path),
        "--reference-agent",
        "heuristic",
    )
    assert result.exit_code == 2
    assert_fits(result.stderr)
    assert (
        "facts.targets[0].widget: no widget named 'Positions [old]' in app 'Desk App' in 'Acme Data' (did you "
        "mean 'Positions'?)" in flat(result.stderr)
    )


def test_eval_and_calibrate_at_80_columns(mini_world_path, tmp_path):
    ts = write_taskset(
        tmp_path / "ts",
        {"desk_fix_level0": raw(), LONG_ID: raw(id=LONG_ID, difficulty="level4", persona="desk")},
    )
    result = run80(
        "eval",
        "--taskset",
        str(ts),
        "--agent",
        "noop",
        "--repeats",
        "2",
        "--world",
        str(mini_world_path),
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    assert_whole(result.stdout, "desk_fix_level0", LONG_ID)
    assert re.search(rf"{LONG_ID}\s+level4\s+✗ ✗\s+0/2", result.stdout)
    assert_fits(result.stderr)
    (run_dir,) = (tmp_path / "runs").iterdir()
    cal = run80(
        "calibrate",
        "--taskset",
        str(ts),
        "--persona",
        "desk",
        "--world",
        str(mini_world_path),
        "--regrade",
        str(run_dir),
        "--out",
        str(tmp_path / "cal"),
        "--min-attempts",
        "1",
    )
    assert cal.exit_code == 0, cal.output
    assert_fits(cal.stdout)
    assert "level4  Compose (dead)" in cal.stdout, cal.stdout
    # noop is deterministic: each task ran once, nothing was sampled, so no interval is drawn
    assert "0.00-0.79" not in cal.stdout and "Wilson" in cal.stdout


def test_run_errors_keep_bracketed_text(monkeypatch, sources, tmp_path):
    import authoring.run

    def refuse(*args, **kwargs):
        raise authoring.run.RunError(
            "--checkpoint-url postgresql://… needs langgraph-checkpoint-postgres: "
            "pip install -e '.[postgres]'"
        )

    monkeypatch.setattr(authoring.run, "run_persona", refuse)
    result = run80(
        "author", "--persona", "desk_head", "--sources", str(sources), "--checkpoint-url", "postgresql://x"
    )
    assert result.exit_code == 2
    assert "pip install -e '.[postgres]'" in flat(result.stderr)
    missing = run80("eval", "--taskset", str(tmp_path / "src[old]"), "--agent", "noop")
    assert missing.exit_code == 2 and "--taskset " + str(tmp_path / "src[old]") + ": no such folder" in flat(
        missing.stderr
    )


@pytest.fixture
def authored(sources, repo, mini_world_path, monkeypatch):
    monkeypatch.chdir(repo)
    result = run80(
        "author",
        "--persona",
        "desk_head",
        "--world",
        str(mini_world_path),
        "--sources",
        str(sources),
        "--tasksets-dir",
        "tasksets",
        "--skills-dir",
        "skills",
        "--baseline",
        "lived",
        "--repeats",
        "1",
        "--min-attempts",
        "2",
        "--no-commit",
        "--reference-agent",
        "heuristic",
    )
    return result, repo / "tasksets" / "workspace_tasks"


def test_author_recertify_and_review_at_80_columns(authored, mini_world_path):
    result, root = authored
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    assert_fits(result.stderr)
    ids = [f"{story}_level{n}" for story in ("morning_positions", "risk_repair") for n in range(5)]
    assert_whole(result.stdout, *ids)
    assert "loaded persona desk_head" in result.stderr

    manifest = json.loads((root / "taskset.json").read_text())
    manifest["task_defaults"]["eval"]["trace_checks"]["max_invalid_tool_calls"] = 3
    (root / "taskset.json").write_text(json.dumps(manifest))
    recert = run80("recertify", "--tasksets-dir", "tasksets", "--world", str(mini_world_path))
    assert recert.exit_code in (0, 1), recert.output
    assert_fits(recert.stdout)
    assert_whole(recert.stdout, *ids)

    listed = run80("review", "list")
    assert listed.exit_code == 0, listed.output
    assert_fits(listed.stdout)
    items = json.loads(run80("review", "list", "--json").stdout)["items"]
    assert items
    assert_whole(listed.stdout, *{i["id"] for i in items})
    for item in items:
        assert flat(item["reason"]) in flat(listed.stdout)
    shown = run80("review", "show", items[0]["id"])
    assert shown.exit_code == 0, shown.output
    assert_fits(shown.stdout)
    assert flat(items[0]["reason"]) in flat(shown.stdout)


def test_a_table_too_wide_folds_into_a_compact_layout():
    gates = {g: {"ok": g != "leak", "detail": "the prompt names the target"} for g in GATES}
    out = Console(width=50, record=True)
    render.gate_table(out, "Certification", [(LONG_ID, gates)], extra=[("level", ["level4"])])
    text = out.export_text()
    lines = text.splitlines()
    assert LONG_ID in lines
    marks = lines[lines.index(LONG_ID) + 1]
    assert "level4" in marks and "le ✗" in marks and "sc ✓" in marks
    assert "leak: the prompt names the target" in flat(text)
