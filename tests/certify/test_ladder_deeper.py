"""The capability ladder on the deeper levels: a fact set from a table row of a resource named by its title, from a
workspace prompt named in words, through a skill step that refers to another document, a tab retitled from a
quoted title, a built table keyed on the grounded value, and a policy said in the sentence after its widget. Each
task is passed by its own rung and failed by the rung below it."""

from __future__ import annotations

import asyncio
import json

import pytest

from certify.agents import resolve_agent
from certify.task import Task
from certify.trial import run_trial
from simulator import World
from tests.certify.ladder_tasks import ladder_raw, ladder_world

HANDBOOK = """---
uri: openbb://workspace/desk/handbook
title: Desk Handbook
description: The window each book is read over.
---
# Desk handbook

| Fund | Window |
|---|---|
| Alpha | the Alpha book is read on YTD |
| Beta | the Beta book is read on QTD |
"""
ROUTINE = {
    "slug": "desk-routine",
    "name": "Desk Routine",
    "description": "The desk's morning routine.",
    "content": 'Desk routine.\n1. Open the book; the board keeps its tab titled "Book Check".\n'
    "2. Read positions over the window of the fund (see openbb://workspace/desk/handbook).\n3. Sign off.",
}
CONTEXT = (
    "---\nname: workspace_session_context\ndescription: Context.\n---\nWork on the open dashboard.\n\n"
    "- Gamma reviews read positions over QTD.\n- Alpha reviews read positions over YTD.\n"
)
BOOK = "On the open Task Board, set Positions from Acme Data to fund {fund}."


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    root = ladder_world(tmp_path_factory.mktemp("deeper") / "world")
    (root / "resources" / "handbook.md").write_text(HANDBOOK)
    index = (root / "resources" / "index.md").read_text()
    (root / "resources" / "index.md").write_text(
        index + "| Desk Handbook | The window each book is read over. | openbb://workspace/desk/handbook |\n"
    )
    (root / "skills" / "routine.json").write_text(json.dumps(ROUTINE))
    (root / "prompts" / "context.md").write_text(CONTEXT)
    return World.load(root)


def task(prompt: str, args: dict[str, str], *, level: int = 3, tab: str | None = None, skills=None) -> Task:
    raw = ladder_raw(level, prompt=prompt)
    raw["setup"]["workspace_skills"] = skills or ["close-checklist", "desk-routine"]
    raw["setup"]["allowed_tools"] += ["get_workspace_prompt", "manage_navigation_bar"]
    update = {"tool": "update_widget", "args": {"widget_uuid": "w_pos", "data_args": args}, "outcome": True}
    raw["eval"]["required_tools"] = [{"tool": "get_workspace_snapshot", "args": {}, "optional": True}, update]
    raw["eval"]["required_widgets"][0]["data_args"] = args
    raw["eval"]["required_generated_widgets"] = []
    if tab is not None:
        raw["eval"]["required_tools"].append(
            {
                "tool": "manage_navigation_bar",
                "outcome": True,
                "args": {"operation": "rename_tabs", "rename_map": {"review": tab}},
            }
        )
        raw["eval"]["required_tab_names"] = [tab]
    return Task.model_validate(raw)


def run(world, t, rung):
    return asyncio.run(run_trial(world, t, resolve_agent(f"ladder-{rung}")))


CASES = {
    "table row of a named resource": (
        BOOK.format(fund="Beta")
        + " Take the period from the row for Beta in the Desk Handbook workspace resource, "
        "on the window the book is read over.",
        {"fund": "Beta", "period": "QTD"},
        None,
    ),
    "workspace prompt named in words": (
        BOOK.format(fund="Gamma")
        + " For the period, go by the point on Gamma reviews in the workspace session "
        "context prompt.",
        {"fund": "Gamma", "period": "QTD"},
        None,
    ),
    "a step that refers to another document": (
        BOOK.format(fund="Beta")
        + " Read the Desk Routine skill and use step 2 of its workflow and the reference "
        "it gives, the row for Beta, for the period.",
        {"fund": "Beta", "period": "QTD"},
        None,
    ),
    "a tab retitled from a quoted title": (
        "On the open Task Board, set Positions from Acme Data to fund Beta and period QTD. Rename the Review tab "
        "to the title in the first step of the Desk Routine skill's workflow.",
        {"fund": "Beta", "period": "QTD"},
        "Book Check",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_ground_sets_what_its_source_says_and_the_rung_below_does_not(world, case):
    prompt, args, tab = CASES[case]
    t = task(prompt, args, tab=tab)
    assert asyncio.run(run_trial(world, t, resolve_agent("oracle"))).passed
    own = run(world, t, 3)
    assert own.passed, (own.fingerprint, [(e["tool"], e["args"]) for e in own.events])
    assert run(world, t, 2).passed is False


def test_ground_follows_the_reference_once_and_reads_the_named_resource_by_its_title(world):
    prompt, args, _ = CASES["a step that refers to another document"]
    reads = [
        (e["tool"], e["args"])
        for e in run(world, task(prompt, args), 3).events
        if e["tool"] in ("get_skill_content", "read_workspace_resource")
    ]
    assert reads == [
        ("get_skill_content", {"slug": "desk-routine"}),
        ("read_workspace_resource", {"uri": "openbb://workspace/desk/handbook"}),
    ]
    prompt, args, _ = CASES["table row of a named resource"]
    trial = run(world, task(prompt, args), 3)
    assert [e["args"]["uri"] for e in trial.events if e["tool"] == "read_workspace_resource"] == [
        "openbb://workspace/app-builder/index",
        "openbb://workspace/desk/handbook",
    ]
    assert not any(e["tool"] == "add_generative_widget" for e in trial.events), (
        "a fact that sets a value is no note"
    )


def test_compose_keys_the_built_table_on_the_grounded_value_and_places_it_with_that_value(world):
    prompt = (
        "First, add a Desk Watch Service backend serving a Watch Register table keyed on period, publish Desk "
        "Watch App with Watch Register on its Watch tab, instantiate the app, and put the built Watch Register "
        "on Task Board, set to the same period as the rest of the work. "
        + CASES["table row of a named resource"][0]
    )
    raw = task(prompt, {"fund": "Beta", "period": "QTD"}, level=4).model_dump(exclude_none=True)
    raw["eval"]["required_widgets"].append(
        {
            "origin": "Desk Watch Service",
            "name": "Watch Register",
            "data_args": {"period": "QTD"},
            "tab_id": "review",
            "max_count": 1,
        }
    )
    raw["eval"]["required_widget_defs"] = [
        {
            "backend_name": "Desk Watch Service",
            "name": "Watch Register",
            "params_include": [{"paramName": "period"}],
        }
    ]
    raw["eval"]["required_tools"] = [
        s for s in raw["eval"]["required_tools"] if s["tool"] != "manage_backends"
    ]
    t = Task.model_validate(raw)
    own = run(world, t, 4)
    assert own.passed, own.fingerprint
    built = next(e for e in own.events if e["tool"] == "manage_backends")["args"]["widgets_json"][
        "watch_register"
    ]
    assert built["params"][0]["paramName"] == "period" and len(built["params"][0]["options"]) == 3
    assert run(world, t, 3).passed is False


def test_derive_applies_a_policy_said_in_the_sentence_after_its_widget(world):
    prompt = (
        "Positions from Acme Data on the open Task Board answers the wrong question. Fix it by setting fund "
        "Beta and the period the quarter-end book rule calls for."
    )
    t = task(prompt, {"fund": "Beta", "period": "QTD"}, level=2)
    assert run(world, t, 2).passed and run(world, t, 1).passed is False


def test_reading_ignores_asides_names_and_a_from_that_belongs_to_a_named_widget(world):
    aside = task(
        "On the open Task Board (not the view that needs the memo), set Positions from Acme Data to fund "
        "Beta and period QTD.",
        {"fund": "Beta", "period": "QTD"},
        level=0,
    )
    assert run(world, aside, 0).passed
    named = task(
        "The Task Board board should carry Positions from Acme Data; reset it to fund Beta and period QTD.",
        {"fund": "Beta", "period": "QTD"},
        level=0,
    )
    trial = run(world, named, 1)
    assert trial.passed and not any("found" in str(x.get("reasoning")) for x in trial.transcript)


def test_derive_adds_the_copy_a_clause_asks_for_on_the_value_its_own_rule_sets(world):
    # Derive's second view, asked in the clause of the carried values: the copy keeps the stated fund and takes
    # the period of the rule said in its clause; the first view keeps the period of its own rule
    prompt = (
        "Positions on the open Task Board answers the wrong question. Fix it by setting fund Beta and the "
        "period the quarter-end book rule calls for, plus a copy beside it per the year-end book rule."
    )
    t = task(prompt, {"fund": "Beta", "period": "QTD"}, level=2)
    raw = t.model_dump(mode="json", exclude_none=True)
    raw["eval"]["required_widgets"].append(
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Beta", "period": "YTD"},
            "tab_id": "review",
            "max_count": 1,
        }
    )
    both = Task.model_validate(raw)
    trial = run(world, both, 2)
    assert trial.passed, trial.fingerprint
    created = [e["args"] for e in trial.events if e["tool"] == "create_widget"]
    assert [c["data_args"] for c in created] == [{"fund": "Beta", "period": "YTD"}]
    assert run(world, both, 1).passed is False
