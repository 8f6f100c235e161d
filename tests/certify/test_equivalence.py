"""The equivalence gate: per variant kind, a task whose grading that variant shows over-strict (the gate fails and
names the variant and the check) and one it passes."""

from __future__ import annotations

from certify.equivalence import VARIANTS, probe, variants
from certify.gates import certify_task
from certify.grader import CHECKS
from certify.grader.core import CheckResult
from tests.certify.helpers import BASE, raw
from tests.certify.helpers import task as base_task

TOOLS = [*BASE["setup"]["allowed_tools"], "navigate_workspace", "manage_dashboard"]


def task(**changes):
    """The helper's task, with the navigation and dashboard-reading tools a variant or a shortcut may use."""
    return base_task(**{"setup.allowed_tools": TOOLS, **changes})


REPAIR = {
    "tool": "update_widget",
    "args": {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}},
}
NOTE = {
    "tool": "add_generative_widget",
    "args": {"widget_type": "note", "name": "Desk Note", "data": "Gamma QTD weight 5.24%"},
    "outcome": True,
}
SNAPSHOT = {"tool": "get_workspace_snapshot", "args": {}, "optional": True}


def gate(world, t, registry=None):
    return certify_task(world, t, f"{t.id}.json", registry).gates["equivalence"]


def kinds(world, t):
    steps = [(s.tool, s.args) for s in t.eval.reference_steps()]
    return {v.kind for v in variants(probe(world, t, steps, t.eval.reference_answer))}


def test_every_kind_is_registered():
    assert set(VARIANTS) == {
        "minimal_repair",
        "addressing",
        "reorder",
        "reads_inserted",
        "navigate",
        "answer_reworded",
        "note_reworded",
        "other_ids",
    }


def test_base_task_passes_every_variant_that_applies(mini_world):
    result = gate(mini_world, task())
    assert result.ok, result.detail
    assert {"addressing", "reads_inserted", "navigate"} <= kinds(mini_world, task())


def test_minimal_repair(mini_world):
    """Gamma is already right: a repair that sends only the period is as valid as the full parameter set."""
    seeded = raw()["setup"]["initial_state"]["dashboard"]["widgets"]
    seeded[0] = {**seeded[0], "data_args": {"fund": "Gamma", "period": "MTD"}}
    strict = task(
        **{
            "setup.initial_state.dashboard.widgets": seeded,
            "eval.required_tools": [SNAPSHOT, {**REPAIR, "graded_args": ["widget_uuid", "data_args"]}, NOTE],
        }
    )
    result = gate(mini_world, strict)
    assert not result.ok
    assert "minimal_repair [#2 sends only ['period']] fails missing_tool_call: update_widget" in result.detail
    outcome = task(
        **{
            "setup.initial_state.dashboard.widgets": seeded,
            "eval.required_tools": [SNAPSHOT, {**REPAIR, "outcome": True}, NOTE],
        }
    )
    assert gate(mini_world, outcome).ok and "minimal_repair" in kinds(mini_world, outcome)


def test_addressing(mini_world):
    """The only Positions on the board may be named by widget_id; grading the uuid is over-strict."""
    strict = task(**{"eval.required_tools": [SNAPSHOT, {**REPAIR, "graded_args": ["widget_uuid"]}, NOTE]})
    result = gate(mini_world, strict)
    assert not result.ok
    assert "addressing [#2 update_widget by widget_id+origin+dashboard_id" in result.detail
    assert "missing_tool_call: update_widget" in result.detail
    assert gate(mini_world, task()).ok


def test_reorder(mini_world):
    """Reads that need nothing first may come first; a cap on consecutive snapshots then trips."""
    steps = [SNAPSHOT, {**REPAIR, "outcome": True}, SNAPSHOT, NOTE]
    strict = task(**{"eval.required_tools": steps, "eval.trace_checks.max_repeated_snapshots": 1})
    result = gate(mini_world, strict)
    assert not result.ok
    assert "reorder [reads first: #1 get_workspace_snapshot, #3 get_workspace_snapshot]" in result.detail
    assert "repeated_snapshots" in result.detail
    fine = task(**{"eval.required_tools": steps})
    assert gate(mini_world, fine).ok and "reorder" in kinds(mini_world, fine)


def test_reads_inserted(mini_world):
    """The inserted look-around lists the catalog before it reads a placed widget's schema, so it is valid under
    the source benchmark's rule too (ids known only from a catalog listing); a check that punishes extra reads
    is over-strict and the variant names it."""
    listing_rule = task(**{"eval.trace_checks": {"max_invalid_tool_calls": 1, "ids_known_from": "listing"}})
    steps = [(s.tool, s.args) for s in listing_rule.eval.reference_steps()]
    inserted = next(v for v in VARIANTS["reads_inserted"](probe(mini_world, listing_rule, steps, None)))
    tools = [t for t, _ in inserted.steps]
    assert tools.index("list_available_widgets") < tools.index("get_widget_schema")
    assert gate(mini_world, listing_rule).ok
    assert gate(mini_world, task()).ok

    def no_schema_read(ctx):
        yield CheckResult(
            "no_schema_read",
            not ctx.ok_calls("get_widget_schema"),
            "no schema read",
            f"{len(ctx.ok_calls('get_widget_schema'))} schema read(s)",
        )

    result = gate(mini_world, task(), {**CHECKS, "no_schema_read": no_schema_read})
    assert not result.ok
    assert "reads_inserted [first: get_workspace_snapshot, list_available_widgets, get_widget_schema" in (
        result.detail
    )
    assert "no_schema_read" in result.detail


def test_navigate(mini_world):
    """Work done and then a look at another dashboard is still work done on the judged one; a check that reads
    whichever dashboard is active at the end is over-strict for a task that names its dashboard."""

    def active_named(ctx):
        yield CheckResult(
            "active_dashboard", ctx.active.name == "Task Board", "ended on Task Board", ctx.active.name
        )

    judged = task(**{"eval.judged_dashboard": "Task Board"})
    result = gate(mini_world, judged, {**CHECKS, "active_dashboard": active_named})
    assert not result.ok
    assert (
        "navigate [away to 'dash_001' and back after #2; ends on 'dash_001'] fails active_dashboard"
        in result.detail
    )
    assert gate(mini_world, judged).ok and "navigate" in kinds(mini_world, judged)


def test_answer_reworded(mini_world):
    """The same figure as a fraction instead of a percentage is the same answer; a distractor that is a prefix of
    it in the other format makes the grading punish the rewording."""
    answered = {
        "eval.reference_answer": "Gamma weighs 5.24% this quarter.",
        "eval.required_values_in_answer": ["0.0524"],
    }
    strict = task(**answered, **{"eval.answer_must_not_contain": ["0.05"]})
    result = gate(mini_world, strict)
    assert not result.ok
    assert "answer_reworded [upper case, other number format] fails forbidden_value" in result.detail
    fine = task(**answered, **{"eval.answer_must_not_contain": ["0.12"]})
    assert gate(mini_world, fine).ok and "answer_reworded" in kinds(mini_world, fine)


def test_note_reworded(mini_world):
    """A note may say the same in capitals, with other spacing and as a fraction — and nothing more: the variant
    adds no row it read. A case-sensitive note check is over-strict and the variant names it; a distractor the
    read cut serves but the note does not say is no finding."""
    read = {
        "tool": "get_widget_data",
        "optional": True,
        "args": {
            "origin": "Acme Data",
            "widget_id": "desk_overview_positions",
            "data_args": {"fund": "Beta", "period": "QTD"},
        },
    }
    note = {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["0.0524"]}
    steps = [SNAPSHOT, read, {**REPAIR, "outcome": True}, NOTE]
    served = task(
        **{
            "eval.required_tools": steps,
            "eval.required_generated_widgets": [{**note, "must_not_contain": ["BBB"]}],
        }
    )
    assert gate(mini_world, served).ok and "note_reworded" in kinds(mini_world, served)
    reworded = next(
        v
        for v in VARIANTS["note_reworded"](
            probe(mini_world, served, [(s.tool, s.args) for s in served.eval.reference_steps()], None)
        )
    )
    text = reworded.steps[-1][1]["data"]
    assert text == "GAMMA  QTD  WEIGHT  0.0524"

    def exact_case(ctx):
        notes = [w for w in ctx.judged.widgets if w.generated and "Gamma" in str(w.generated_data)]
        yield CheckResult("note_case", bool(notes), "a note saying 'Gamma'", f"{len(notes)} note(s)")

    result = gate(mini_world, task(), {**CHECKS, "note_case": exact_case})
    assert not result.ok
    assert "note_reworded [notes #3 upper case, other spacing, other number format] fails note_case" in (
        result.detail
    )


def test_other_ids(mini_world):
    """What the agent builds carries ids of its own choosing: graded by name it passes, graded by id it fails."""
    build = {
        "tool": "manage_backends",
        "outcome": True,
        "args": {
            "operation": "add",
            "name": "Book Service",
            "url": "http://127.0.0.1:9001",
            "widgets_json": {
                "book_register": {
                    "name": "Book Register",
                    "description": "Book.",
                    "endpoint": "/book",
                    "type": "table",
                }
            },
            "apps_json": [
                {
                    "name": "Book App",
                    "tabs": {
                        "book": {
                            "id": "book",
                            "name": "Book",
                            "layout": [{"i": "book_register", "x": 0, "y": 0, "w": 40, "h": 10}],
                        }
                    },
                }
            ],
        },
    }
    steps = [SNAPSHOT, {**REPAIR, "outcome": True}, NOTE, build]
    prompt = (
        raw()["prompt"]
        + " Add a Book Service backend serving a Book Register table, with a Book App on a Book tab."
    )
    by_id = task(
        prompt=prompt,
        **{
            "eval.required_tools": steps,
            "eval.required_widget_defs": [{"backend_name": "Book Service", "widget_id": "book_register"}],
            "eval.required_app_defs": [
                {"backend_name": "Book Service", "name_contains": "Book App", "tabs_include": ["book"]}
            ],
        },
    )
    result = gate(mini_world, by_id)
    assert not result.ok
    assert "other_ids [own ids: book_register→book_register_alt, book→book_alt]" in result.detail
    assert "missing_widget_def" in result.detail
    by_name = task(
        prompt=prompt,
        **{
            "eval.required_tools": steps,
            "eval.required_widget_defs": [{"backend_name": "Book Service", "name": "Book Register"}],
            "eval.required_app_defs": [
                {
                    "backend_name": "Book Service",
                    "name_contains": "Book App",
                    "tab_names_include": ["Book"],
                    "widgets_on_tab": [{"tab_name": "Book", "widget_name": "Book Register"}],
                }
            ],
        },
    )
    assert gate(mini_world, by_name).ok and "other_ids" in kinds(mini_world, by_name)


def test_not_run_when_the_reference_fails(mini_world):
    broken = task(
        **{
            "eval.required_generated_widgets": [
                {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["0.0999"]}
            ]
        }
    )
    assert gate(mini_world, broken).detail == "not run: the reference does not pass"
