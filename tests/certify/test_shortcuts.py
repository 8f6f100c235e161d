"""The shortcuts gate: per shortcut agent, a task it passes without understanding the request (the gate fails and
names it) and the same task closed so that it fails; and the agents see only what any agent sees."""

from __future__ import annotations

from typing import Any

from certify.gates import certify_task
from certify.grader import grade
from certify.shortcuts import PROBES, SHORTCUTS, run_battery, run_shortcut
from certify.shortcuts.positions import first_placed_share, place_shares, target_first
from tests.certify.helpers import BASE
from tests.certify.helpers import task as base_task

TOOLS = [*BASE["setup"]["allowed_tools"], "navigate_workspace", "manage_dashboard"]


def task(**changes):
    """The helper's task, with the navigation and dashboard-reading tools a variant or a shortcut may use."""
    return base_task(**{"setup.allowed_tools": TOOLS, **changes})


SNAPSHOT = {"tool": "get_workspace_snapshot", "args": {}, "optional": True}
LISTING = {"tool": "list_available_widgets", "args": {"origin": "Acme Data"}, "optional": True}
POSITIONS = {"origin": "Acme Data", "widget_id": "desk_overview_positions"}
BOOK = {"origin": "Acme Data", "widget_id": "desk_overview_book_summary"}
EMPTY_BOARD = {"name": "Task Board", "tabs": [{"id": "review", "name": "Review"}], "widgets": []}


def level_task(
    level: int,
    prompt: str,
    hidden: dict[str, Any],
    steps: list[dict[str, Any]],
    widgets: list[dict[str, Any]],
    closed: bool,
    **changes: Any,
):
    """A task on the mini world's Task Board; `closed` adds the negative checks our author adds."""
    required = [{**w, "max_count": 1} if closed else w for w in widgets]
    return task(
        prompt=prompt,
        difficulty=f"level{level}",
        meta={"level": level, "hidden": [hidden]},
        **{
            "eval.required_tools": steps,
            "eval.required_widgets": required,
            "eval.required_generated_widgets": [],
            "eval.required_layouts": [],
            "eval.judged_dashboard": "Task Board",
            "eval.max_unrequested_widgets": 0 if closed else None,
            **changes,
        },
    )


def outcome(world, t, name: str):
    gate = certify_task(world, t, f"{t.id}.json").gates["shortcuts"]
    run = next(r for r in run_battery(world, t) if r.name == name)
    return gate, run


def test_the_battery():
    assert list(SHORTCUTS) == [
        "enumerator",
        "signature_matcher",
        "bag_of_words",
        "note_stuffer",
        "over_builder",
        "neighbour_copier",
        "title_stuffer",
        "description_matcher",
        "phrase_guesser",
        "source_skimmer",
        "tail_skimmer",
    ]


def test_level_zero_is_not_applicable(mini_world):
    assert certify_task(mini_world, task(), "desk_fix_level0.json").gates["shortcuts"].detail == (
        "not applicable: level 0 states everything it grades"
    )


def test_shortcut_agents_see_only_what_an_agent_sees(mini_world, monkeypatch):
    """They get the prompt and the envelopes: the eval block and the task's metadata never reach them."""
    from certify.agents import base

    seen = []
    real = base.TaskView.of

    def spy(t):
        view = real(t)
        seen.append(view)
        return view

    monkeypatch.setattr(base.TaskView, "of", staticmethod(spy))
    t = task(difficulty="level1", meta={"level": 1, "hidden": [{"kind": "target", "value": "Positions"}]})
    for name in SHORTCUTS:
        run_shortcut(name, mini_world, t)
    assert len(seen) == len(SHORTCUTS)
    assert {type(v).__name__ for v in seen} == {"TaskView"} and all(v.prompt == t.prompt for v in seen)


ENUMERATE = dict(
    level=2,
    prompt="On the open Task Board, add Positions from Acme Data's Desk App with fund Gamma and "
    "the period the Thursday desk policy sets.",
    hidden={"kind": "carried", "value": "QTD"},
    steps=[
        SNAPSHOT,
        LISTING,
        {
            "tool": "create_widget",
            "outcome": True,
            "args": {**POSITIONS, "data_args": {"fund": "Gamma", "period": "QTD"}},
        },
    ],
    widgets=[{**POSITIONS, "data_args": {"fund": "Gamma", "period": "QTD"}}],
    **{"setup.initial_state.dashboard": EMPTY_BOARD},
)


def test_enumerator(mini_world):
    """One Positions per period: one of them is right, so without a cap the task passes it."""
    gate, run = outcome(mini_world, level_task(**ENUMERATE, closed=False), "enumerator")
    assert run.passed and not gate.ok and "enumerator" in gate.detail
    created = [e.args["data_args"] for e in run.episode.events if e.tool == "create_widget"]
    assert [a.get("period") for a in created] == [None, "MTD", "QTD"]  # unstated first: the default, YTD
    gate, run = outcome(mini_world, level_task(**ENUMERATE, closed=True), "enumerator")
    assert not run.passed and "unrequested_widget" in run.result.failure_codes
    assert gate.ok and "enumerator: " in gate.detail


def signature_task(closed: bool):
    board = {
        **EMPTY_BOARD,
        "widgets": [
            {
                **POSITIONS,
                "widget_uuid": "w_pos",
                "tab_id": "review",
                "data_args": {"fund": "Alpha", "period": "MTD"},
                "layout": {"x": 0, "y": 0, "w": 20, "h": 10},
            }
        ],
    }
    widgets = [{**POSITIONS, "data_args": {"fund": "Gamma", "period": "QTD"}}]
    if closed:  # a decoy that takes the same values, placed on another cut, must stay as it is
        board["widgets"].append(
            {
                **BOOK,
                "widget_uuid": "w_book",
                "tab_id": "review",
                "data_args": {"fund": "Beta", "period": "MTD"},
                "layout": {"x": 20, "y": 0, "w": 20, "h": 10},
            }
        )
        widgets.append({**BOOK, "data_args": {"fund": "Beta", "period": "MTD"}})
    return level_task(
        1,
        "On the open Task Board, someone left the holdings book from Acme Data's Desk App set up "
        "wrong; it should read fund Gamma and period QTD.",
        {"kind": "target", "value": "Positions"},
        [
            SNAPSHOT,
            {
                "tool": "update_widget",
                "outcome": True,
                "args": {"widget_uuid": "w_pos", "data_args": {"fund": "Gamma", "period": "QTD"}},
            },
        ],
        widgets,
        closed,
        **{"setup.initial_state.dashboard": board},
    )


def test_signature_matcher(mini_world):
    """The only placed widget taking the stated values is the target: fixing it needs no understanding."""
    gate, run = outcome(mini_world, signature_task(closed=False), "signature_matcher")
    assert run.passed and "signature_matcher" in gate.detail and not gate.ok
    gate, run = outcome(mini_world, signature_task(closed=True), "signature_matcher")
    assert not run.passed
    assert {e.args["widget_uuid"] for e in run.episode.events if e.tool == "update_widget"} == {
        "w_pos",
        "w_book",
    }


def find_task(description: str, closed: bool):
    return level_task(
        1,
        f"On the open Task Board, add {description} from Acme Data's Desk App with fund Gamma and "
        "period QTD.",
        {"kind": "target", "value": "Positions"},
        [
            SNAPSHOT,
            LISTING,
            {
                "tool": "create_widget",
                "outcome": True,
                "args": {**POSITIONS, "data_args": {"fund": "Gamma", "period": "QTD"}},
            },
        ],
        [{**POSITIONS, "data_args": {"fund": "Gamma", "period": "QTD"}}],
        closed,
        **{"setup.initial_state.dashboard": EMPTY_BOARD},
    )


def test_bag_of_words(mini_world):
    """A description that repeats the catalog's words is found by word overlap alone; one that says what the
    target is not (in the confusable sibling's words) is not."""
    gate, run = outcome(mini_world, find_task("the open-position view", closed=True), "bag_of_words")
    assert run.passed and "bag_of_words" in gate.detail and not gate.ok
    contrasted = find_task(
        "the holdings book (not the view of the book's daily P&L and turnover summary)", True
    )
    gate, run = outcome(mini_world, contrasted, "bag_of_words")
    assert not run.passed
    assert [e.args["widget_id"] for e in run.episode.events if e.tool == "create_widget"] == [
        BOOK["widget_id"]
    ]


def test_over_builder(mini_world):
    """It adds the right widget and the next best matches: only a cap on unrequested widgets tells."""
    gate, run = outcome(mini_world, find_task("the open-position view", closed=False), "over_builder")
    assert run.passed and "over_builder" in gate.detail
    assert len([e for e in run.episode.events if e.tool == "create_widget"]) > 1
    gate, run = outcome(mini_world, find_task("the open-position view", closed=True), "over_builder")
    assert not run.passed and "unrequested_widget" in run.result.failure_codes


def stuffer_task(closed: bool):
    note = {"widget_type": "note", "name_contains": "Desk Note", "data_contains": ["amber ledger stamp"]}
    if closed:
        note["must_not_contain"] = ["Tie out cash"]
    return level_task(
        3,
        "On the open Task Board, go through the Close Checklist skill and leave a Desk Note "
        "recording what its last step says.",
        {"kind": "planted", "value": "amber ledger stamp", "source": "skill:close-checklist"},
        [
            SNAPSHOT,
            {"tool": "get_skill_content", "args": {"slug": "close-checklist"}, "graded_args": ["slug"]},
            {
                "tool": "add_generative_widget",
                "outcome": True,
                "args": {
                    "widget_type": "note",
                    "name": "Desk Note",
                    "data": "Sign off with the amber ledger stamp.",
                },
            },
        ],
        [],
        closed,
        **{"eval.required_generated_widgets": [note], "setup.initial_state.dashboard": EMPTY_BOARD},
    )


def test_note_stuffer(mini_world):
    """A note holding the whole skill holds the planted phrase too; only the skill's other facts, listed as
    what the note must not say, tell it from a note recording the one asked for."""
    gate, run = outcome(mini_world, stuffer_task(closed=False), "note_stuffer")
    assert run.passed and "note_stuffer" in gate.detail and not gate.ok
    gate, run = outcome(mini_world, stuffer_task(closed=True), "note_stuffer")
    assert not run.passed and "forbidden_value" in run.result.failure_codes
    assert gate.ok


def copier_task(hidden: str):
    return level_task(
        2,
        "On the open Task Board, add Positions from Acme Data's Desk App with fund Gamma and the "
        "period the desk's standing convention sets.",
        {"kind": "carried", "value": hidden},
        [
            SNAPSHOT,
            LISTING,
            {
                "tool": "create_widget",
                "outcome": True,
                "args": {**POSITIONS, "data_args": {"fund": "Gamma", "period": hidden}},
            },
        ],
        [{**POSITIONS, "data_args": {"fund": "Gamma", "period": hidden}}],
        True,
        **{"setup.initial_state.dashboard": EMPTY_BOARD, "setup.workspace_baseline": "all-apps"},
    )


def test_neighbour_copier(mini_world):
    """The Desk App dashboard already shows Positions on QTD: when that is the hidden value, copying it passes
    without the policy; when the policy says otherwise, the copy is wrong."""
    gate, run = outcome(mini_world, copier_task("QTD"), "neighbour_copier")
    assert run.passed and "neighbour_copier" in gate.detail and not gate.ok
    assert any(e.tool == "manage_dashboard" for e in run.episode.events)
    gate, run = outcome(mini_world, copier_task("MTD"), "neighbour_copier")
    assert not run.passed and gate.ok


def title_task(names_graded: str):
    rename = {"operation": "rename_tabs", "rename_map": {"review": "Amber Ledger Stamp"}}
    return level_task(
        3,
        "On the open Task Board, retitle the Review tab after the stamp the Close Checklist skill's last "
        "step signs off with.",
        {"kind": "planted", "value": "amber ledger stamp", "source": "skill:close-checklist"},
        [
            SNAPSHOT,
            {"tool": "get_skill_content", "args": {"slug": "close-checklist"}, "graded_args": ["slug"]},
            {"tool": "manage_navigation_bar", "outcome": True, "args": rename},
        ],
        [],
        True,
        **{
            "eval.required_tab_names": ["Amber Ledger Stamp"],
            "eval.names_graded": names_graded,
            "setup.initial_state.dashboard": EMPTY_BOARD,
            "setup.allowed_tools": [*TOOLS, "manage_navigation_bar"],
        },
    )


def test_title_stuffer(mini_world):
    """A tab retitled with the whole skill and prompt contains the planted title: graded by containment (the
    source's rule) it passes; graded exactly, it fails."""
    gate, run = outcome(mini_world, title_task("contains"), "title_stuffer")
    assert run.passed and "title_stuffer" in gate.detail and not gate.ok
    assert any(e.tool == "manage_navigation_bar" for e in run.episode.events)
    gate, run = outcome(mini_world, title_task("exact"), "title_stuffer")
    assert not run.passed and "missing_tab_name" in run.result.failure_codes
    assert gate.ok, gate.detail


def skimmer_task(note: str):
    board = {
        **EMPTY_BOARD,
        "generated_widgets": [
            {
                "widget_type": "note",
                "widget_uuid": "w_rules",
                "name": "Desk Rulebook",
                "data": note,
                "tab_id": "review",
                "layout": {"x": 0, "y": 0, "w": 20, "h": 6},
            }
        ],
    }
    return level_task(
        2,
        "On the open Task Board, add Positions from Acme Data's Desk App with fund Gamma and the period the "
        "standing convention sets.",
        {"kind": "carried", "value": "MTD"},
        [
            SNAPSHOT,
            LISTING,
            {
                "tool": "create_widget",
                "outcome": True,
                "args": {**POSITIONS, "data_args": {"fund": "Gamma", "period": "MTD"}},
            },
        ],
        [{**POSITIONS, "data_args": {"fund": "Gamma", "period": "MTD"}}],
        True,
        **{
            "setup.initial_state.dashboard": board,
            # the seeded note stays: it is accounted for, not an unrequested widget
            "eval.required_generated_widgets": [
                {"widget_type": "note", "name_contains": "Desk Rulebook", "data_contains": []}
            ],
        },
    )


def test_source_skimmer(mini_world):
    """The skimmer reads the board's note but not which rule the request names: it takes the option the note
    mentions first (of a tie), right when the asked-for rule happens to come first, wrong when a rival does. The
    tail skimmer reads from the end: with two rules the asked-for one is first or last, so one of the two
    passes; only a rule between rivals holds against both."""
    given = "The standing convention sets the period to MTD.\nThe interim convention sets the period to QTD."
    gate, run = outcome(mini_world, skimmer_task(given), "source_skimmer")
    assert run.passed and "source_skimmer" in gate.detail and not gate.ok
    last = "The interim convention sets the period to QTD.\nThe standing convention sets the period to MTD."
    gate, run = outcome(mini_world, skimmer_task(last), "source_skimmer")
    assert not run.passed and "tail_skimmer" in gate.detail and not gate.ok, gate.detail
    held = (
        "The interim convention sets the period to QTD.\nThe standing convention sets the period to MTD.\n"
        "The closing convention sets the period to YTD."
    )
    gate, run = outcome(mini_world, skimmer_task(held), "source_skimmer")
    assert not run.passed and gate.ok, gate.detail


def test_skimmed_picks():
    """What the skimmer takes from a text: the most-mentioned option (the first of a tie), the first quoted name
    of a piece that speaks of a tab."""
    from certify import skimmed_options, skimmed_title

    period = {"paramName": "period", "options": [{"label": v, "value": v} for v in ("MTD", "QTD", "YTD")]}
    assert skimmed_options("Reviews read QTD. Packs read MTD, MTD again.", period) == ["MTD", "QTD"]
    assert skimmed_options("Reviews read QTD. Packs read MTD.", period) == ["QTD", "MTD"]
    assert skimmed_options("Nothing here.", period) == []
    assert (
        skimmed_title(['The "Desk" view.\nPulled orders go on a tab titled "Pulled Clips".'])
        == "Pulled Clips"
    )
    assert skimmed_title(["No tab is named here."]) is None


def test_positional_probe(mini_world):
    """The positional probe repairs the first placed widget with the stated values: right when the seeding puts the
    target first, wrong when the decoy that takes the same values comes first. It is measured over a taskset, not
    gated per task (PROBES, not SHORTCUTS)."""
    assert list(PROBES) == [
        "positional",
        "second_placed",
        "third_placed",
        "fourth_placed",
        "fifth_placed",
        "pointer_first",
        "pointer_last",
        "catalog_first",
        "catalog_last",
        "line_first",
        "line_second",
        "line_third",
        "line_last",
    ]
    assert "positional" not in SHORTCUTS
    first = signature_task(closed=True)
    board = first.setup.initial_state.dashboard.model_dump(exclude_none=True)
    board["widgets"].reverse()
    second = signature_task(closed=True).model_copy(
        update={
            "setup": first.setup.model_copy(
                update={
                    "initial_state": first.setup.initial_state.model_copy(
                        update={"dashboard": type(first.setup.initial_state.dashboard).model_validate(board)}
                    )
                }
            )
        }
    )
    assert target_first(first) is True and target_first(second) is False
    assert grade(first, run_shortcut("positional", mini_world, first)).passed
    run = run_shortcut("positional", mini_world, second)
    assert [e.args["widget_uuid"] for e in run.events if e.tool == "update_widget"] == ["w_book"]
    assert not grade(second, run).passed
    assert first_placed_share([first, second, task()]) == {"level0": (1, 1), "level1": (1, 2)}
    # the reader of the second place repairs the very widget placed second: the target on the reversed board
    assert grade(second, run_shortcut("second_placed", mini_world, second)).passed
    run = run_shortcut("second_placed", mini_world, first)
    assert [e.args["widget_uuid"] for e in run.events if e.tool == "update_widget"] == ["w_book"]
    assert not grade(first, run).passed
    held = place_shares([first, second])["level1"]
    assert held["index"] == {0: 1, 1: 1} and sum(held["row"].values()) == 2 and held["tasks"][None] == 2
