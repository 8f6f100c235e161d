"""The prompt linter (certify/prose.py) and the prose gate: each fault class fires on its faults and stays quiet on
the sentences a careful writer keeps; a task with a fault does not certify, and the gate's detail names the fault
(the author's feedback); the source benchmark's hand-written prompts have none."""

from __future__ import annotations

import pytest

from certify import FAULT_CLASSES, certify_task, prose_faults
from tests.certify.helpers import task
from tests.conftest import COMPAT_TASKS, needs_compat

FAULTY = {
    "split_phrasal_verb": [
        "The Cash Breaks was left at fund Keel Core Equity — point back it so the view is on fund Lantern Macro.",
        "The Repo Book has drifted; point back it back to counterparty Ostrander Prime.",
        "Bring up them on the board.",
        "Please switched back it to region Europe.",
        "Set it, back to desk Credit Flow.",
    ],
    "bolted_alias": [
        "Read Failed Settlements for fund Lantern Macro — Lantern — and status Pending.",
        "Pin Biggest Movers for fund Reedbed Small Cap (Reedbed) and period MTD.",
        "Set desk Credit Flow — flow credit — on the blotter.",
        "Set fund Lantern Macro (the macro book) (the macro book) on it.",
    ],
    "fragment": [
        "Correct the Liquidity Ladder on the view. ahead of the CLS cut-off.",
        "Add the Cash Ladder to the board! before the call.",
        "There is also a twin; is correct for its purpose.",
    ],
    "forward_reference": [
        "Set the Breaks view to that status and leave it.",
        "Publish the app on a tab titled like the board's tab once it is retitled. Retitle the Main tab as the "
        "skill says.",
        "Put the built tracker on the board, as it reads once renamed, then rename the Main tab.",
        "Keep the same scenario as before on the Scenario Losses view.",
    ],
    "pointer": [
        "Do not guess the period: the convention it names of the workspace session context prompt has it.",
        "Take the region from the last point it makes of the desk handbook.",
        "Use the first step it lists in the Factsheet Production skill.",
    ],
    "doubled": [
        "Put the the Positions up.",
        "Put Positions up;. Then stop.",
        "Read it for fund Lantern Macro — Lantern —. Then stop.",
        "On Client File Refresh, the open board, — for Periodic Review Due set risk rating High.",
        "Put Positions up ().",
    ],
    "punctuation": ["Put Positions up , then stop.", "Put Positions up (fund Beta.", 'Call it "Desk Note.'],
    "article": ["Put a orders view up.", "Publish it on a Evidence tab.", "Add an table of breaks."],
}

CLEAN = [
    "On the open Desk Board, bring it up with fund Beta and period QTD; leave the other panels alone.",
    "Ask St. Brennan about it. It is the year-end pack, e.g. the fund's return.",
    "Point it back to fund Lantern Macro so the view is on the right book.",
    "Bring them up on the board, then set them back to region Europe.",
    "Look up Mandate Performance, then look at it again before you back it up in a note.",
    "Read Failed Settlements for fund Lantern Macro and status Pending Confirm; Lantern is the macro book.",
    "Set the period to 1Y (the trailing year) on the Mandate Performance view.",
    "Set status Draft on Factsheet Builds; keep that status on the copy too.",
    "Fix Factsheet Builds so that status is Draft, and leave the rest as it is.",
    "Retitle the Main tab as the skill says. Then publish the app on a tab titled like the board's tab once it "
    "is retitled.",
    "Publish the app on a tab set to the period the rest of this request settles.",
    "Read the Client Review Prep skill and use step 2 of its workflow and in the document it points to, the "
    "row for St. Brennan Endowment.",
    "Take the period from the convention named in the workspace session context prompt.",
    "Put a one-off European view and a unit test up; an hour is enough for an FX check.",
    "Add the Cash Ladder on the Lantern board. Ahead of the CLS cut-off, please.",
    "Check that the view is right, then that dashboard stays as it is.",
    # the past simple tells the data's history, not work the request has yet to ask for
    "Add the one that lists each breach with its rule, when it was opened and the date it must be cured by.",
]


@pytest.mark.parametrize(("kind", "text"), [(k, t) for k, texts in FAULTY.items() for t in texts])
def test_each_fault_class_fires_on_its_faults(kind, text):
    found = prose_faults(text)
    assert kind in {f.kind for f in found}, found
    assert all(f.kind in FAULT_CLASSES and f.message and f.where for f in found)


@pytest.mark.parametrize("text", CLEAN)
def test_a_sentence_a_careful_writer_keeps_has_no_fault(text):
    assert prose_faults(text, known=["board"]) == []


def test_every_class_has_examples_both_ways():
    assert set(FAULTY) == set(FAULT_CLASSES)


def test_a_fault_reads_as_feedback_naming_class_message_and_place():
    (fault,) = prose_faults("Correct it, then point back it to fund Lantern Macro.")
    assert str(fault).startswith(
        "split_phrasal_verb: the pronoun object goes between the verb and its particle"
    )
    assert "point back it" in str(fault)


def test_the_worlds_parameter_labels_are_referents_too():
    text = "Set the Pipeline view to that risk rating."
    assert prose_faults(text) == []  # not a noun the linter knows by itself
    (fault,) = prose_faults(text, nouns=["risk rating"])
    assert fault.kind == "forward_reference" and "risk rating" in fault.message
    assert prose_faults("Set risk rating High, then keep that risk rating.", nouns=["risk rating"]) == []


def test_a_task_with_a_prose_fault_does_not_certify_and_says_why(mini_world):
    clean = certify_task(mini_world, task(), "desk_fix_level0.json")
    assert clean.certified and clean.gates["prose"].detail == "the request has no prose fault"
    faulty = certify_task(
        mini_world, task(prompt=task().prompt + " then stop there."), "desk_fix_level0.json"
    )
    assert {name for name, g in faulty.gates.items() if not g.ok} == {"prose"} and not faulty.certified
    assert faulty.gates["prose"].detail.startswith(
        "1 prose fault(s) in the request: fragment: a sentence starts"
    )
    assert "then stop" in faulty.gates["prose"].detail


@needs_compat
def test_the_source_benchmarks_prompts_have_no_fault():
    """The gate applies to the published corpus as to ours: its hand-written prompts read as a reviewer signs."""
    from certify.task import TaskSet, load_task

    tasks = [load_task(path) for path in TaskSet.load(COMPAT_TASKS).task_files()]
    assert len(tasks) >= 25
    assert {t.id: [str(f) for f in prose_faults(t.prompt, known=["board"])] for t in tasks} == {
        t.id: [] for t in tasks
    }
