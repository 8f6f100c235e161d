"""The reviewer's view (`taskforge report --prompts`, and the site's level cells): each prompt next to what its eval
grades, in words derived from the eval block (certify/graded.py), checked through the CLI on shipped tasks."""

from __future__ import annotations

from typer.testing import CliRunner

from authoring.cli import app
from certify import graded_items, parse_task
from tests.conftest import ROOT


def flat(text: str) -> str:
    return " ".join(text.split())


def run(*args: str):
    return CliRunner().invoke(
        app, ["report", "--tasksets-dir", str(ROOT / "tasksets"), *args], terminal_width=200
    )


def test_a_shipped_repair_with_a_note_and_an_analysis_is_said_as_what_is_graded():
    result = run("--prompts", "--task", "keel_europe_tilt_level3")
    assert result.exit_code == 0, result.output
    out = flat(result.stdout)
    assert out.startswith("keel_europe_tilt_level3 prompt: ")
    graded = out[out.index("graded: ") :]
    for said in (
        # (Ground works on a stand-in of the target Find hides, Sector Tilt vs Benchmark: `factcheck.working`)
        "at most one Country Exposure on fund Keel Core Equity and region Europe on tab Overlay",
        "the Country Exposure on fund Keel Core Equity and region North America kept as seeded",
        "a note named Keel IC Desk Note holding",
        "the portfolio-morning-brief skill read",
        "an answer judged on 4 key point(s)",
        "nothing else added",
    ):
        assert said in graded, said


def test_a_built_app_is_said_with_its_backend_tab_and_widget():
    out = flat(run("--prompts", "--task", "brennan_calendar_year_returns_level4").stdout)
    assert "backend Client Review Service serving a table Review Tracker with parameter(s) period" in out
    assert (
        "app Client Review App on backend Client Review Service showing Review Tracker on tab Review" in out
    )


def test_every_shipped_task_is_listed_with_its_graded_line():
    out = run("--prompts").stdout
    assert flat(out).count(" graded: ") == flat(out).count(" prompt: ") == 120


def test_an_unknown_task_is_a_usage_error():
    result = run("--prompts", "--task", "no_such_task")
    assert result.exit_code == 2 and "no task no_such_task" in flat(result.output)


def test_the_words_follow_the_eval_not_the_prompt():
    task = parse_task(
        {
            "id": "desk_fix_level0",
            "difficulty": "level0",
            "prompt": "Anything at all.",
            "eval": {
                "required_widgets": [{"origin": "Acme", "widget_id": "w1", "data_args": {"fund": "Beta"}}],
                "required_values_in_answer": ["42"],
                "max_unrequested_widgets": 2,
            },
        },
        "desk_fix_level0.json",
    )
    assert graded_items(task) == [
        "a w1 on fund Beta",
        "an answer stating 42",
        "at most 2 other widget(s) added",
    ]


def test_a_shipped_repair_is_said_as_put_back_from_what_the_board_seeds():
    out = flat(run("--prompts", "--task", "lantern_factsheet_stage_level3").stdout)
    graded = out[out.index("graded: ") :]
    # (Ground repairs a stand-in of the target Find hides, Factsheet Builds, on the values it declares)
    assert (
        "the Client Report Requests back on status Draft (seeded on status Sent) on tab Reporting" in graded
    )
    assert "the Client Report Requests on status In Review kept as seeded" in graded
