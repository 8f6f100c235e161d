"""Each gate, with a task that fails it (and, where the gates allow, only it)."""

from __future__ import annotations

import itertools
import json

import pytest

from certify.gates import GATE_NAMES, certify_file, certify_task
from certify.task import TaskSet, load_task
from simulator import Workspace
from tests.certify.helpers import DELETE, raw, task
from tests.conftest import COMPAT_TASKS, COMPAT_WORLD, needs_compat


def failing(cert):
    return {name for name, result in cert.gates.items() if not result.ok}


def test_base_task_is_certified(mini_world):
    cert = certify_task(mini_world, task(), "desk_fix_level0.json")
    assert failing(cert) == set(), {k: v.detail for k, v in cert.gates.items()}
    assert list(cert.gates) == list(GATE_NAMES)
    assert "2 required step(s)" in cert.gates["load_bearing"].detail
    assert "skipped" in cert.gates["leak"].detail


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"setup.workspace_backends": ["ghost"]}, "workspace_backends[0]"),
        ({"setup.workspace_skills": ["ghost"]}, "workspace_skills[0]"),
        ({"setup.workspace_baseline": "ghost"}, "workspace_baseline"),
    ],
)
def test_schema_gate_names_missing_references(mini_world, change, field):
    cert = certify_task(mini_world, task(**change), "desk_fix_level0.json")
    assert not cert.gates["schema"].ok and field in cert.gates["schema"].detail


def test_schema_gate_unknown_backend_and_file_name(mini_world, tmp_path):
    cert = certify_task(mini_world, task(**{"setup.workspace_backends": ["ghost"]}), "desk_fix_level0.json")
    assert failing(cert) == set(GATE_NAMES)
    assert "workspace_backends[0]" in cert.gates["schema"].detail
    assert cert.gates["oracle"].detail == "not run: schema gate failed"
    cert = certify_task(mini_world, task(), "other_name.json")
    assert "differs from the file name" in cert.gates["schema"].detail


def test_malformed_file_fails_schema_and_names_the_field(mini_world, tmp_path):
    path = tmp_path / "desk_fix_level0.json"
    path.write_text(json.dumps(raw(**{"eval.required_widgets": [{"widget_id": "desk_overview_positions"}]})))
    cert = certify_file(mini_world, path)
    assert not cert.gates["schema"].ok
    assert "eval.required_widgets.0.origin" in cert.gates["schema"].detail
    assert str(path) in cert.gates["schema"].detail


def test_grounding_gate_value_outside_options(mini_world):
    create = {
        "tool": "create_widget",
        "args": {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Delta", "period": "QTD"},
        },
    }
    listing = {"tool": "list_available_widgets", "args": {"origin": "Acme Data"}, "optional": True}
    t = task(
        **{
            "eval.required_tools": [listing, create],
            "eval.required_widgets": [
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_overview_positions",
                    "data_args": {"fund": "Delta"},
                }
            ],
            "eval.required_generated_widgets": [],
        }
    )
    cert = certify_task(mini_world, t, "desk_fix_level0.json")
    assert failing(cert) == {"grounding"}
    assert "fund='Delta' is not among the declared options" in cert.gates["grounding"].detail


def test_grounding_gate_planted_fact_not_in_its_source(mini_world):
    meta = {
        "level": 3,
        "hidden": [{"kind": "planted", "value": "amber ledger stamp", "source": "skill:close-checklist"}],
    }
    assert "grounding" not in failing(certify_task(mini_world, task(meta=meta), "desk_fix_level0.json"))
    meta["hidden"][0]["source"] = "skill:morning-brief"
    cert = certify_task(mini_world, task(meta=meta), "desk_fix_level0.json")
    assert failing(cert) == {"grounding"}
    meta["hidden"][0]["source"] = "skill:ghost"
    assert (
        "does not exist"
        in certify_task(mini_world, task(meta=meta), "desk_fix_level0.json").gates["grounding"].detail
    )


def test_oracle_gate(mini_world):
    t = task(
        **{
            "eval.required_generated_widgets": [
                {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["0.0999"]}
            ]
        }
    )
    cert = certify_task(mini_world, t, "desk_fix_level0.json")
    assert failing(cert) == {"oracle", "load_bearing", "equivalence"}
    assert "missing_generated_widget" in cert.gates["oracle"].detail
    assert cert.gates["equivalence"].detail == "not run: the reference does not pass"


def test_noop_gate(mini_world):
    steps = [{"tool": "get_workspace_snapshot", "args": {}, "optional": True}]
    t = task(
        **{"eval.required_tools": steps, "eval.required_widgets": [], "eval.required_generated_widgets": []}
    )
    cert = certify_task(mini_world, t, "desk_fix_level0.json")
    assert not cert.gates["noop"].ok and "doing nothing passes" in cert.gates["noop"].detail
    assert failing(cert) == {"noop", "load_bearing"}


def test_load_bearing_gate_catches_a_step_that_grades_nothing(mini_world):
    steps = raw()["eval"]["required_tools"]
    second_note = {
        "tool": "add_generative_widget",
        "args": {"widget_type": "note", "name": "Spare", "data": "spare"},
        "graded_args": ["widget_type"],
    }
    t = task(**{"eval.required_tools": [*steps, second_note]})
    cert = certify_task(mini_world, t, "desk_fix_level0.json")
    assert failing(cert) == {"load_bearing"}
    assert "still passes without #4 add_generative_widget;" in cert.gates["load_bearing"].detail


def test_load_bearing_reports_dead_checks(mini_world):
    cert = certify_task(mini_world, task(), "desk_fix_level0.json")
    assert "layout_mismatch: w_alert" in "; ".join(cert.notes["dead_checks"])


def test_leak_gate(mini_world):
    meta = {"level": 2, "hidden": [{"kind": "carried", "value": "QTD"}]}
    cert = certify_task(mini_world, task(meta=meta), "desk_fix_level0.json")
    assert failing(cert) == {"leak"} and "QTD" in cert.gates["leak"].detail
    quiet = task(
        meta=meta,
        prompt="On the open Task Board, set Positions to Gamma per the quarterly policy and "
        "leave a Desk Note with the weight served.",
    )
    assert failing(certify_task(mini_world, quiet, "desk_fix_level0.json")) == set()


def test_determinism_gate(mini_world, monkeypatch):
    counter = itertools.count()
    monkeypatch.setattr(Workspace, "state_hash", lambda self: f"h{next(counter)}")
    cert = certify_task(mini_world, task(), "desk_fix_level0.json")
    assert failing(cert) == {"determinism"}


def test_budget_too_small_for_the_reference(mini_world):
    cert = certify_task(mini_world, task(**{"eval.max_turns": 2}), "desk_fix_level0.json")
    assert "oracle" in failing(cert)


@pytest.mark.parametrize("spelling", ["reference_trace", "reference"])
def test_reference_trace_steps_carry_graded_args_and_optional(mini_world, tmp_path, spelling):
    """A foreign task whose trace marks discovery optional and narrows graded arguments certifies like the
    same steps under required_tools: the oracle replays every step, only required ones are dropped by the
    load-bearing gate, and graded_args narrows what the trace check compares."""
    steps = [
        {"tool": "get_workspace_snapshot", "args": {}, "optional": True},
        {
            "tool": "update_widget",
            "args": {
                "widget_uuid": "w_pos",
                "origin": "Acme Data",
                "data_args": {"fund": "Gamma", "period": "QTD"},
            },
            "graded_args": ["widget_uuid", "data_args"],
        },
        {
            "tool": "read_widget",
            "args": {"widget_id": "desk_overview_alerts", "origin": "Acme Data"},
            "optional": True,
        },
        {
            "tool": "add_generative_widget",
            "args": {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"},
            "graded_args": ["widget_type"],
        },
    ]
    path = tmp_path / "desk_fix_level0.json"
    path.write_text(
        json.dumps(
            raw(
                **{
                    "eval.required_tools": DELETE,
                    f"eval.{spelling}": steps,
                    "eval.calls_match_reference": True,
                }
            )
        )
    )
    cert = certify_file(mini_world, path)
    # Grading the uuid of the only Positions on the board is over-strict (it may be named by widget_id): the
    # equivalence gate says so, as it would for the same steps under required_tools; every other gate holds.
    assert failing(cert) == {"equivalence"}, {k: v.detail for k, v in cert.gates.items()}
    assert "missing_tool_call: update_widget" in cert.gates["equivalence"].detail
    assert "each of 2 required step(s)" in cert.gates["load_bearing"].detail
    t = load_task(path)
    assert [s.optional for s in t.eval.reference_steps()] == [True, False, True, False]
    assert [(s.tool, s.graded()) for s in t.eval.graded_steps()] == [
        ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}}),
        ("add_generative_widget", {"widget_type": "note"}),
    ]


def test_no_reference_at_all(mini_world):
    t = task(**{"eval.required_tools": DELETE})
    cert = certify_task(mini_world, t, "desk_fix_level0.json")
    assert "no reference" in cert.gates["schema"].detail


@needs_compat
def test_compat_corpus_certifies_as_published():
    """The external corpus is the acceptance test: every published task's oracle passes and no-op fails."""
    from simulator import World

    world = World.load(COMPAT_WORLD)
    taskset = TaskSet.load(COMPAT_TASKS)
    results = [certify_file(world, path, taskset) for path in taskset.task_files()]
    assert len(results) >= 25
    bad = {r.id: r.gates["oracle"].detail for r in results if not r.gates["oracle"].ok}
    assert bad == {}
    free = [r.id for r in results if not r.gates["noop"].ok]
    assert free == []
    assert all(r.gates["schema"].ok and r.gates["determinism"].ok for r in results)


# Findings about the visible corpus (the closing notes of issues 12 and 20 give the reasons): its tasks grade calls
# and ids an equivalent solution does differently, and some of its Find/Derive tasks let a shortcut pass. Per task:
#   client_review_level4, nav_close_repair_level4: a built widget id graded though the prompt never states it
#     (other_ids); breach_repair_level4 too, and its repair graded by exact arguments (minimal_repair);
#   breach_repair_level0, meeting_prep_level3/4: a repair graded by its exact arguments (minimal_repair), and at
#     meeting_prep_level3/4 a read graded by its exact call (addressing); case_handoff_level3: the same read;
#   a shortcut passes: client_review_level1 (bag_of_words: the hint nearly names the widget),
#     proposal_pack_level2 and form_tooling_level2 (enumerator: no cap on extra widgets), document_room_level3
#     (note_stuffer), nav_close_repair_level1 (every shortcut: the Find target alone on the board).
# Not findings: a schema read before the catalog listing (the inserted reads list first, as the source's
# list-before-use rule asks), which alone rejected client_review_level3, holdings_watch_level1,
# nav_close_repair_level0 and settlement_watch_level3 before.
COMPAT_FINDINGS = {
    "client_review_level1": {"shortcuts"},
    "client_review_level4": {"equivalence"},
    "meeting_prep_level3": {"equivalence"},
    "meeting_prep_level4": {"equivalence"},
    "proposal_pack_level2": {"shortcuts"},
    "breach_repair_level0": {"equivalence"},
    "breach_repair_level4": {"equivalence"},
    "case_handoff_level3": {"equivalence"},
    "document_room_level3": {"shortcuts"},
    "form_tooling_level2": {"shortcuts"},
    "nav_close_repair_level1": {"shortcuts"},
    "nav_close_repair_level4": {"equivalence"},
    # "period set by the same-day fails policy": the phrase guesser takes 1D from "same-day" (the finance
    # lexicon's word for it) without reading the policy
    "settlement_watch_level2": {"shortcuts"},
}


@needs_compat
def test_compat_additional_gates_snapshot():
    """The corpus certifies as published (oracle pass, no-op fail, and the rest of the first seven gates); the two
    validity gates report findings about it, listed here rather than hidden."""
    from simulator import World

    world = World.load(COMPAT_WORLD)
    taskset = TaskSet.load(COMPAT_TASKS)
    results = [certify_file(world, path, taskset) for path in taskset.task_files()]
    assert all(r.gates[name].ok for r in results for name in GATE_NAMES[:7])
    assert {r.id: failing(r) for r in results if not r.certified} == COMPAT_FINDINGS


def test_leak_gate_catches_a_hidden_targets_id_and_uuid():
    """A Find prompt that hands the agent the target's catalog id or its seeded uuid gives the target away as
    surely as its name; the shipped prompt (neither) states nothing."""
    from pathlib import Path

    from certify.gates import leaked_values, target_refs

    shipped = Path(__file__).resolve().parents[2] / "tasksets" / "workspace_tasks"
    taskset = TaskSet.load(shipped)
    world = taskset.world(None)
    found = load_task(shipped / "client_advisor" / "lantern_factsheet_stage_level1.json", taskset)
    assert leaked_values(world, found) == []
    refs = dict((ref, name) for name, ref in target_refs(world, found))
    uuids = [r for r in refs if r.startswith("w_")]
    assert "report_foundry_factsheets_factsheet_builds" in refs and len(uuids) == 1
    for ref in refs:
        leaky = found.model_copy(update={"prompt": f"{found.prompt} (it is {ref}.)"})
        assert leaked_values(world, leaky) == [f"{ref} (the id of hidden target 'Factsheet Builds')"]
