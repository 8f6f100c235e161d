"""Each check type: a passing and a failing case, with its stable issue code."""

from __future__ import annotations

import pytest

from certify.episode import reference_calls, replay
from certify.grader import CHECKS, grade
from certify.grader.match import phrase_matches, subset, text_contains
from tests.certify.helpers import DELETE, raw, task

UPDATE = ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}})
NOTE = (
    "add_generative_widget",
    {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"},
)


def outcome(world, t, steps, final_answer=None):
    return grade(t, replay(world, t, steps, final_answer))


def codes(result, passed):
    return {c.code for c in result.checks if c.passed is passed}


def test_reference_passes_and_noop_fails(mini_world):
    t = task()
    assert outcome(mini_world, t, reference_calls(t)).passed
    noop = outcome(mini_world, t, [])
    assert not noop.passed
    assert codes(noop, False) == {"missing_widget", "missing_generated_widget"}
    assert 0 < noop.share < 1


def test_required_calls_use_graded_args_and_successful_calls_only(mini_world):
    steps = raw()["eval"]["required_tools"]
    steps[2] = {**steps[2], "outcome": False, "graded_args": ["widget_type"]}
    t = task(**{"eval.required_tools": steps})
    bad_note = ("add_generative_widget", {"widget_type": "table", "data": "oops"})
    result = outcome(mini_world, t, [UPDATE, bad_note])
    failing = [c for c in result.failures if c.code == "missing_tool_call"]
    assert len(failing) == 1 and "add_generative_widget" in failing[0].label
    other_text = (
        "add_generative_widget",
        {"widget_type": "note", "name": "Desk Note", "data": "0.0524 other words"},
    )
    assert "missing_tool_call" not in codes(outcome(mini_world, t, [UPDATE, other_text]), False)


def test_missing_widget_and_too_many(mini_world):
    t = task()
    wrong = ("update_widget", {"widget_uuid": "w_pos", "data_args": {"fund": "Beta", "period": "QTD"}})
    assert "missing_widget" in codes(outcome(mini_world, t, [wrong, NOTE]), False)
    extra = (
        "create_widget",
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Gamma", "period": "QTD"},
        },
    )
    listing = ("list_available_widgets", {"origin": "Acme Data"})
    result = outcome(mini_world, t, [UPDATE, NOTE, listing, extra])
    assert codes(result, False) == {"too_many_widgets"}


def test_generated_widget_text_matching(mini_world):
    t = task()
    plain = ("add_generative_widget", {"widget_type": "note", "name": "Desk Note", "data": "weight 0.0524"})
    assert outcome(mini_world, t, [UPDATE, plain]).passed
    wrong_name = ("add_generative_widget", {"widget_type": "note", "name": "Memo", "data": "5.24%"})
    assert "missing_generated_widget" in codes(outcome(mini_world, t, [UPDATE, wrong_name]), False)
    wrong_fact = ("add_generative_widget", {"widget_type": "note", "name": "Desk Note", "data": "5.25%"})
    result = outcome(mini_world, t, [UPDATE, wrong_fact])
    assert [c.evidence for c in result.failures if c.code == "missing_generated_widget"] == [
        "closest candidate lacks ['0.0524']"
    ]


def test_dashboard_tabs_and_names(mini_world):
    t = task(**{"eval.required_tabs": ["review", "summary"], "eval.required_tab_names": ["Review"]})
    result = outcome(mini_world, t, [UPDATE, NOTE])
    assert [c.label for c in result.failures] == ["tab 'summary'"]
    away = ("navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_001"})
    t2 = task(**{"setup.allowed_tools": [*task().setup.allowed_tools, "navigate_workspace"]})
    result = outcome(mini_world, t2, [UPDATE, NOTE, away])
    assert {"dashboard_name", "missing_widget", "missing_generated_widget"} <= codes(result, False)


def test_required_layouts(mini_world):
    t = task()
    move = ("update_widget_layout", {"widget_uuid": "w_alert", "x": 20, "y": 0, "w": 20, "h": 9})
    assert "layout_mismatch" in codes(outcome(mini_world, t, [UPDATE, NOTE, move]), False)


def test_grid_and_overlap_checks(mini_world):
    seeded = task(
        **{
            "setup.initial_state.dashboard.widgets": [
                *task().model_dump()["setup"]["initial_state"]["dashboard"]["widgets"],
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_notes_memo",
                    "widget_uuid": "w_bad",
                    "tab_id": "review",
                    "layout": {"x": 30, "y": 4, "w": 20, "h": 6},
                },
            ]
        }
    )
    result = outcome(mini_world, seeded, [UPDATE, NOTE])
    assert codes(result, False) == {"layout_out_of_grid", "layout_overlap"}
    relaxed = task(**{"eval.layout": {"within_grid": False, "no_overlaps": False}})
    assert not {"layout_out_of_grid", "layout_overlap"} & (
        codes(outcome(mini_world, relaxed, [UPDATE, NOTE]), True)
    )


def test_invalid_call_budget(mini_world):
    t = task()
    bad = ("get_widget_schema", {"origin": "Nope", "widget_id": "x"})
    assert outcome(mini_world, t, [bad, UPDATE, NOTE]).passed
    result = outcome(mini_world, t, [bad, bad, UPDATE, NOTE])
    assert codes(result, False) == {"too_many_invalid_calls"}


def test_listing_discipline(mini_world):
    """The source benchmark's rule: an id is known once a catalog listing showed it."""
    t = task(**{"eval.trace_checks": {"max_invalid_tool_calls": 1}})
    create = ("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    unlisted = outcome(mini_world, t, [UPDATE, NOTE, create])
    assert codes(unlisted, False) == {"widget_list_not_called_before_use"}
    # an origin named in a listing counts as listed even when the listing came back empty
    empty = ("list_available_widgets", {"origin": "Acme Data", "backend_id": "backend_002"})
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, empty, create]), False) == {"unlisted_widget_id"}
    listed = ("list_available_widgets", {"origin": "Acme Data"})
    assert outcome(mini_world, t, [UPDATE, NOTE, listed, create]).passed
    t_off = task(**{"eval.trace_checks": {"max_invalid_tool_calls": 1, "forbid_invented_widget_ids": False}})
    assert outcome(mini_world, t_off, [UPDATE, NOTE, create]).passed


def test_ids_known_from_any_result(mini_world):
    """Our tasks' rule: a widget id any earlier result showed (a snapshot's placed widget) is known, not
    invented; one nothing showed still is."""
    t = task()
    snapshot = ("get_workspace_snapshot", {})
    schema = ("get_widget_schema", {"origin": "Acme Data", "widget_id": "desk_overview_alerts"})
    assert outcome(mini_world, t, [snapshot, schema, UPDATE, NOTE]).passed
    assert codes(outcome(mini_world, t, [schema, UPDATE, NOTE]), False) == {
        "widget_list_not_called_before_use"
    }
    create = ("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    assert codes(outcome(mini_world, t, [snapshot, UPDATE, NOTE, create]), False) == {"unlisted_widget_id"}
    assert not outcome(
        mini_world,
        t_off := task(**{"eval.trace_checks": {"ids_known_from": "listing"}}),
        [snapshot, schema, UPDATE, NOTE],
    ).passed
    assert outcome(mini_world, t_off, [UPDATE, NOTE]).passed


def test_unlisted_widget_id_after_an_origin_listing(mini_world):
    t = task()
    listed = ("list_available_widgets", {"origin": "Acme Data"})
    result = outcome(
        mini_world,
        t,
        [
            UPDATE,
            NOTE,
            listed,
            ("get_widget_schema", {"origin": "Acme Data", "widget_id": "desk_notes_memo"}),
        ],
    )
    assert result.passed
    built = (
        "manage_backends",
        {
            "operation": "add",
            "name": "Built",
            "url": "http://x",
            "widgets_json": {"w1": {"name": "W", "description": "d", "endpoint": "/w"}},
        },
    )
    ok = outcome(
        mini_world, t, [UPDATE, NOTE, built, ("create_widget", {"origin": "Built", "widget_id": "w1"})]
    )
    assert ok.passed


def test_schema_before_create(mini_world):
    t = task(**{"eval.trace_checks": {"max_invalid_tool_calls": 1, "must_call_schema_before_create": True}})
    listed = ("list_available_widgets", {"origin": "Acme Data"})
    create = ("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, listed, create]), False) == {
        "schema_not_called_before_create"
    }
    schema = ("get_widget_schema", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    assert outcome(mini_world, t, [UPDATE, NOTE, listed, schema, create]).passed


def test_listing_checks_read_create_widgets_older_backend_name(mini_world):
    t = task(**{"eval.trace_checks": {"max_invalid_tool_calls": 1, "must_call_schema_before_create": True}})
    listed = ("list_available_widgets", {"origin": "Acme Data"})
    schema = ("get_widget_schema", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    by_name = ("create_widget", {"backend_name": "Acme Data", "widget_id": "desk_notes_memo"})
    assert outcome(mini_world, t, [UPDATE, NOTE, listed, schema, by_name]).passed
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, by_name]), False) == {
        "widget_list_not_called_before_use",
        "schema_not_called_before_create",
    }
    invented = ("create_widget", {"backend_name": "Acme Data", "widget_id": "desk_overview_alerts"})
    assert "unlisted_widget_id" not in codes(outcome(mini_world, t, [UPDATE, NOTE, listed, invented]), False)
    empty = ("list_available_widgets", {"origin": "Acme Data", "backend_id": "backend_002"})
    assert "unlisted_widget_id" in codes(outcome(mini_world, t, [UPDATE, NOTE, empty, invented]), False)


def test_repeated_snapshots(mini_world):
    t = task(**{"eval.trace_checks": {"max_invalid_tool_calls": 1, "max_repeated_snapshots": 1}})
    snap = ("get_workspace_snapshot", {})
    assert codes(outcome(mini_world, t, [snap, snap, UPDATE, NOTE]), False) == {"repeated_snapshots"}


def test_tool_results_and_resource_reads(mini_world):
    t = task(
        **{
            "eval.required_tool_results": [{"tool": "get_widget_data", "data_contains": ["5.24%"]}],
            "eval.required_resource_reads": [{"uri": "openbb://workspace/specs/layout-grid"}],
            "setup.allowed_tools": [*task().setup.allowed_tools, "read_workspace_resource"],
        }
    )
    read = (
        "get_widget_data",
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Beta", "period": "QTD"},
        },
    )
    res = ("read_workspace_resource", {"uri": "openbb://workspace/specs/layout-grid"})
    assert codes(outcome(mini_world, t, [UPDATE, NOTE]), False) == {
        "missing_tool_result",
        "missing_resource_read",
    }
    assert outcome(mini_world, t, [UPDATE, NOTE, read, res]).passed


def test_preservation_of_other_dashboards(mini_world):
    t = task()
    touch = (
        "update_widget",
        {"dashboard_id": "dash_002", "widget_uuid": "widget_001", "data_args": {"fund": "Beta"}},
    )
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, touch]), False) == {"collateral_dashboard_change"}
    look = ("navigate_workspace", {"operation": "tab", "dashboard_id": "dash_002", "tab_id": "main"})
    back = ("navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_003"})
    t2 = task(**{"setup.allowed_tools": [*task().setup.allowed_tools, "navigate_workspace"]})
    assert outcome(mini_world, t2, [look, back, UPDATE, NOTE]).passed


def test_definition_checks(mini_world):
    widgets = {
        "register": {
            "name": "Register",
            "description": "d",
            "endpoint": "/r",
            "type": "table",
            "params": [{"paramName": "fund", "type": "text", "value": "A"}],
            "data": {
                "table": {
                    "columnsDefs": [{"field": "amount", "headerName": "Amount", "renderFn": "greenRed"}]
                }
            },
        }
    }
    apps = [
        {
            "name": "Register App",
            "tabs": {
                "main": {
                    "id": "main",
                    "name": "Main",
                    "layout": [{"i": "register", "x": 0, "y": 0, "w": 40, "h": 10}],
                }
            },
        }
    ]
    add = (
        "manage_backends",
        {
            "operation": "add",
            "name": "Reg Service",
            "url": "http://r",
            "widgets_json": widgets,
            "apps_json": apps,
        },
    )
    t = task(
        **{
            "eval.required_widget_defs": [
                {
                    "backend_name": "Reg Service",
                    "widget_id": "register",
                    "expect": {"name": "Register", "type": "table"},
                    "params_include": [{"paramName": "fund"}],
                    "columns_include": [{"field": "amount", "renderFn": "greenRed"}],
                }
            ],
            "eval.required_app_defs": [
                {
                    "backend_name": "Reg Service",
                    "name_contains": "register app",
                    "tabs_include": ["main"],
                    "tab_count": 1,
                    "layout_refs_valid": True,
                    "no_overlaps": True,
                    "widgets_on_tab": [{"tab_id": "main", "widget_id": "register"}],
                }
            ],
        }
    )
    assert outcome(mini_world, t, [UPDATE, NOTE, add]).passed
    missing = outcome(mini_world, t, [UPDATE, NOTE])
    assert codes(missing, False) == {"missing_custom_backend"}
    wrong_apps = [
        {
            "name": "Register App",
            "tabs": {
                "side": {
                    "id": "side",
                    "name": "Side",
                    "layout": [
                        {"i": "ghost", "x": 0, "y": 0, "w": 30, "h": 10},
                        {"i": "register", "x": 10, "y": 0, "w": 30, "h": 10},
                    ],
                }
            },
        }
    ]
    wrong_widgets = {"register": {**widgets["register"], "type": "chart"}}
    add_wrong = (
        "manage_backends",
        {
            "operation": "add",
            "name": "Reg Service",
            "url": "http://r",
            "widgets_json": wrong_widgets,
            "apps_json": wrong_apps,
        },
    )
    result = outcome(mini_world, t, [UPDATE, NOTE, add_wrong])
    assert codes(result, False) == {
        "widget_def_mismatch",
        "app_def_mismatch",
        "app_layout_ref_invalid",
        "app_layout_overlap",
        "backend_validation_warnings",
    }
    no_app = (
        "manage_backends",
        {
            "operation": "add",
            "name": "Reg Service",
            "url": "http://r",
            "widgets_json": {"other": widgets["register"]},
        },
    )
    assert {"missing_widget_def", "missing_app_def"} <= codes(
        outcome(mini_world, t, [UPDATE, NOTE, no_app]), False
    )


def test_definitions_graded_by_name(mini_world):
    """What the agent builds is graded by the names the prompt gives: any widget id and tab id it picks passes."""
    t = task(
        **{
            "eval.required_widget_defs": [
                {"backend_name": "Reg Service", "name": "Register", "expect": {"type": "table"}}
            ],
            "eval.required_app_defs": [
                {
                    "backend_name": "Reg Service",
                    "name_contains": "Register App",
                    "tab_names_include": ["Main"],
                    "widgets_on_tab": [{"tab_name": "Main", "widget_name": "Register"}],
                }
            ],
        }
    )

    def build(widget_id, tab_id, name="Register"):
        widgets = {widget_id: {"name": name, "description": "d", "endpoint": "/r", "type": "table"}}
        apps = [
            {
                "name": "Register App",
                "tabs": {
                    tab_id: {
                        "id": tab_id,
                        "name": "Main",
                        "layout": [{"i": widget_id, "x": 0, "y": 0, "w": 40, "h": 10}],
                    }
                },
            }
        ]
        return (
            "manage_backends",
            {
                "operation": "add",
                "name": "Reg Service",
                "url": "http://r",
                "widgets_json": widgets,
                "apps_json": apps,
            },
        )

    assert outcome(mini_world, t, [UPDATE, NOTE, build("register", "main")]).passed
    assert outcome(mini_world, t, [UPDATE, NOTE, build("reg_table", "tab_1")]).passed
    wrong = outcome(mini_world, t, [UPDATE, NOTE, build("register", "main", name="Ledger")])
    assert codes(wrong, False) == {"missing_widget_def", "app_def_mismatch"}


def test_required_widget_by_name(mini_world):
    built = (
        "manage_backends",
        {
            "operation": "add",
            "name": "Built",
            "url": "http://x",
            "widgets_json": {"w1": {"name": "Book Register", "description": "d", "endpoint": "/w"}},
        },
    )
    t = task(**{"eval.required_widgets": [{"origin": "Built", "name": "book register", "max_count": 1}]})
    create = ("create_widget", {"origin": "Built", "widget_id": "w1"})
    assert outcome(mini_world, t, [UPDATE, NOTE, built, create]).passed
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, built]), False) == {"missing_widget"}
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, built, create, create]), False) == {"too_many_widgets"}


def test_outcome_steps_are_not_graded_calls(mini_world):
    """A repair done another way (delete the stale widget, add a right one) passes: only the state is graded."""
    t = task(**{"eval.required_layouts": []})
    listing = ("list_available_widgets", {"origin": "Acme Data"})
    other_way = [
        ("delete_widget", {"widget_uuid": "w_pos"}),
        listing,
        (
            "create_widget",
            {
                "origin": "Acme Data",
                "widget_id": "desk_overview_positions",
                "data_args": {"fund": "Gamma", "period": "QTD"},
            },
        ),
        NOTE,
    ]
    assert outcome(mini_world, t, other_way).passed


def test_judged_dashboard(mini_world):
    """A task that names its dashboard is judged on it wherever the agent ends; one that does not is judged on
    the dashboard active at the end (the source benchmark's rule)."""
    away = ("navigate_workspace", {"operation": "dashboard", "dashboard_id": "dash_001"})
    every_tool = {"setup.allowed_tools": DELETE}
    named = task(**every_tool, **{"eval.judged_dashboard": "Task Board"})
    assert outcome(mini_world, named, [UPDATE, NOTE, away]).passed
    assert {"missing_widget", "missing_generated_widget"} <= codes(
        outcome(mini_world, task(**every_tool), [UPDATE, NOTE, away]), False
    )
    ghost = task(**{"eval.judged_dashboard": "Ghost Board"})
    assert "missing_dashboard" in codes(outcome(mini_world, ghost, [UPDATE, NOTE]), False)
    assert "missing_dashboard" in codes(outcome(mini_world, named, [UPDATE, NOTE]), True)


def test_unrequested_widgets(mini_world):
    """Every widget on the judged dashboard must be accounted for by a requirement when the task caps them."""
    t = task(
        **{
            "eval.max_unrequested_widgets": 0,
            "eval.required_widgets": [
                {
                    "origin": "Acme Data",
                    "widget_id": "desk_overview_positions",
                    "data_args": {"fund": "Gamma", "period": "QTD"},
                    "max_count": 1,
                },
                {"origin": "Acme Data", "widget_id": "desk_overview_alerts", "max_count": 1},
            ],
        }
    )
    assert outcome(mini_world, t, [UPDATE, NOTE]).passed
    listing = ("list_available_widgets", {"origin": "Acme Data"})
    extra = ("create_widget", {"origin": "Acme Data", "widget_id": "desk_notes_memo"})
    result = outcome(mini_world, t, [UPDATE, NOTE, listing, extra])
    assert codes(result, False) == {"unrequested_widget"}
    assert "desk_notes_memo" not in str(result.failures) and "Memo" in str(result.failures)
    # a repair made by adding a right copy next to the wrong one leaves the wrong one unaccounted for
    beside = (
        "create_widget",
        {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Gamma", "period": "QTD"},
        },
    )
    assert codes(outcome(mini_world, t, [listing, beside, NOTE]), False) == {"unrequested_widget"}
    scratch = ("add_generative_widget", {"widget_type": "note", "name": "Scratch", "data": "x"})
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, scratch]), False) == {"unrequested_widget"}
    assert outcome(
        mini_world, task(), [UPDATE, NOTE, listing, extra]
    ).passed  # no cap: the source's semantics


def test_forbidden_values(mini_world):
    """A note or answer stating a distractor fails, in any format; seeded notes are not the agent's writing."""
    note = {
        "widget_type": "note",
        "name_contains": "Desk Note",
        "data_contains": ["0.0524"],
        "must_not_contain": ["0.12", "Alpha"],
    }
    t = task(**{"eval.required_generated_widgets": [note]})
    assert outcome(mini_world, t, [UPDATE, NOTE]).passed
    stuffed = (
        "add_generative_widget",
        {"widget_type": "note", "name": "Desk Note", "data": "Gamma 5.24%, or Alpha at 12%"},
    )
    result = outcome(mini_world, t, [UPDATE, stuffed])
    assert codes(result, False) == {"forbidden_value"}
    assert "['0.12', 'Alpha']" in next(c.evidence for c in result.failures)
    seeded = {
        "widget_type": "note",
        "widget_uuid": "w_old",
        "name": "Old Desk Note",
        "data": "Alpha was 12%",
        "tab_id": "review",
        "layout": {"x": 0, "y": 20, "w": 20, "h": 6},
    }
    with_seed = task(
        **{
            "eval.required_generated_widgets": [note],
            "setup.initial_state.dashboard.generated_widgets": [seeded],
        }
    )
    assert outcome(mini_world, with_seed, [UPDATE, NOTE]).passed
    answered = task(
        **{"eval.required_values_in_answer": ["0.0524"], "eval.answer_must_not_contain": ["0.12"]}
    )
    assert outcome(mini_world, answered, [UPDATE, NOTE], final_answer="5.24%").passed
    assert codes(
        outcome(mini_world, answered, [UPDATE, NOTE], final_answer="5.24% (12% for Alpha)"), False
    ) == {"forbidden_value"}


def test_answer_checks(mini_world):
    t = task(**{"eval.required_values_in_answer": ["0.0524", "Beta"]})
    assert codes(outcome(mini_world, t, [UPDATE, NOTE]), False) == {
        "missing_final_answer",
        "missing_answer_value",
    }
    assert outcome(mini_world, t, [UPDATE, NOTE], final_answer="Beta weighs 5.24% this quarter").passed
    assert codes(outcome(mini_world, t, [UPDATE, NOTE], final_answer="Beta"), False) == {
        "missing_answer_value"
    }


def test_registry_has_one_entry_per_code():
    assert {
        "missing_tool_call",
        "missing_widget",
        "too_many_widgets",
        "missing_generated_widget",
        "missing_tab",
        "dashboard_name",
        "layout_mismatch",
        "layout_out_of_grid",
        "layout_overlap",
        "too_many_invalid_calls",
        "unlisted_widget_id",
        "collateral_dashboard_change",
        "missing_final_answer",
        "unrequested_widget",
        "forbidden_value",
        "missing_dashboard",
    } <= set(CHECKS)


@pytest.mark.parametrize(
    ("expected", "blob", "ok"),
    [
        ("0.0524", "return: 5.24%", True),
        ("5.24%", "0.0524", True),
        ("In Review", "status: in review", True),
        ("evidence_gaps", "list evidence gaps first", True),
        ("-0.0675", "change -6.75 %", True),
        ("0.05", "2024-05", False),
        ("1234.5", "1,234.5", True),
        ("Open", "Closed", False),
    ],
)
def test_text_matching(expected, blob, ok):
    assert text_contains(blob, expected) is ok


def test_subset_and_phrases():
    assert subset({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert not subset({"a": [1]}, {"a": [1, 2]})
    assert subset({"a": None}, {})
    assert phrase_matches("Client Call Prep", "client call prep (copy)")
    assert phrase_matches("Call Prep Client", "Client: Call Prep Client view")
    assert not phrase_matches("Breach Review", "Review of Breach")


def test_tab_names_fail_when_renamed(mini_world):
    t = task(
        **{
            "eval.required_tab_names": ["Review"],
            "setup.allowed_tools": [*task().setup.allowed_tools, "manage_navigation_bar"],
        }
    )
    rename = ("manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {"review": "Archive"}})
    assert codes(outcome(mini_world, t, [UPDATE, NOTE, rename]), False) == {"missing_tab_name"}


def test_names_graded_exactly(mini_world):
    """Under names_graded 'exact' a title is the one asked for up to case, spacing and punctuation, or an accepted
    alternative — never a title that merely contains it, so stuffing every candidate phrase into it fails. The
    source's rule ('contains', the default) accepts the stuffed title."""
    tools = [*task().setup.allowed_tools, "manage_navigation_bar"]

    def renamed(title):
        return ("manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {"review": title}})

    loose = task(**{"eval.required_tab_names": ["Trustee Papers"], "setup.allowed_tools": tools})
    exact = task(
        **{
            "eval.required_tab_names": ["Trustee Papers"],
            "eval.names_graded": "exact",
            "eval.accepted_names": {"Trustee Papers": ["Papers for the Trustees"]},
            "setup.allowed_tools": tools,
        }
    )
    stuffed = renamed("Board Papers / Trustee Papers / Client Papers")
    assert "missing_tab_name" not in codes(outcome(mini_world, loose, [UPDATE, NOTE, stuffed]), False)
    assert "missing_tab_name" in codes(outcome(mini_world, exact, [UPDATE, NOTE, stuffed]), False)
    for title in ("trustee  papers", "Trustee-Papers", "Papers for the trustees"):
        assert outcome(mini_world, exact, [UPDATE, NOTE, renamed(title)]).passed, title


def test_note_names_graded_exactly(mini_world):
    """A note named 'Prior Desk Note' is not the 'Desk Note' asked for under exact names (it contains it)."""
    exact = task(**{"eval.names_graded": "exact"})
    prior = ("add_generative_widget", {**NOTE[1], "name": "Prior Desk Note"})
    assert "missing_generated_widget" in codes(outcome(mini_world, exact, [UPDATE, prior]), False)
    assert "missing_generated_widget" not in codes(outcome(mini_world, task(), [UPDATE, prior]), False)
    assert outcome(
        mini_world, exact, [UPDATE, ("add_generative_widget", {**NOTE[1], "name": "desk note"})]
    ).passed


def test_backend_preservation_rules(mini_world):
    seeded = {"name": "Kept Service", "url": "http://k", "widgets_json": {}, "apps_json": []}
    rules = {
        "preserve_other_dashboards": True,
        "preserve_custom_backend_ids": True,
        "unique_custom_backend_names": True,
        "max_custom_backend_delta": 0,
        "max_dashboard_delta": 0,
    }
    t = task(
        **{
            "setup.initial_state.custom_backends": [seeded],
            "eval.workspace_checks": rules,
            "setup.allowed_tools": [*task().setup.allowed_tools, "manage_dashboard"],
        }
    )
    assert outcome(mini_world, t, [UPDATE, NOTE]).passed
    delete = ("manage_backends", {"operation": "delete", "backend_id": "backend_003"})
    add = ("manage_backends", {"operation": "add", "name": "Other", "url": "http://o", "widgets_json": {}})
    new_dash = ("manage_dashboard", {"operation": "create", "name": "Scratch", "activate": False})
    result = outcome(mini_world, t, [UPDATE, NOTE, delete, add, new_dash])
    assert codes(result, False) == {"custom_backend_replaced", "unexpected_dashboard_created"}
    result = outcome(mini_world, t, [UPDATE, NOTE, add])
    assert codes(result, False) == {"unexpected_backend_created"}


def test_reference_trace_tasks_with_calls_match_reference(mini_world):
    read = {
        "tool": "get_widget_data",
        "args": {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Beta", "period": "QTD"},
        },
    }
    t = task(
        **{
            "eval.required_tools": [],
            "eval.reference": [read],
            "eval.calls_match_reference": True,
            "eval.required_widgets": [],
            "eval.required_generated_widgets": [],
            "eval.required_layouts": [],
            "eval.required_values_in_answer": ["0.0524"],
            "eval.reference_answer": "Beta holds 5.24%.",
        }
    )
    assert [s.tool for s in t.eval.reference_steps()] == ["get_widget_data"]
    assert outcome(mini_world, t, [(read["tool"], read["args"])], final_answer="Beta holds 5.24%.").passed
    wrong = ("get_widget_data", {**read["args"], "data_args": {"fund": "Alpha", "period": "QTD"}})
    result = outcome(mini_world, t, [wrong], final_answer="Beta holds 5.24%.")
    assert codes(result, False) == {"missing_tool_call"}
