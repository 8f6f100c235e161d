"""The six shipped personas' stories against the default world: every Derive policy is defined in a document of
the world next to a rival, and the 24 Ground facts are distinct, vary in position and in what they set."""

from __future__ import annotations

from collections import Counter

import pytest

from authoring.checks import check_persona
from simulator import DEFAULT_WORLD, World
from tests.conftest import ROOT

PERSONAS = sorted(p.stem for p in (ROOT / "personas").glob("*.md"))


# An open cell of issue 20, pinned so it can only shrink: the stories whose Find target is the first or last
# listed of the app's widgets that take its values (check warns; a reader of catalog places passes those Find
# levels' originals, and the counterfactual gate makes it fail one of the two copies). Adds and reads cannot
# reorder the live product's catalog; closing it needs other first targets or values a widget on the other side
# also takes. (A repair's board seats a fit on each side where the catalog lists one: tests/authoring/
# test_find_places.py; 14 → 13.)
PLACE_WARNING = "a reader of places passes the level"
PLACED_STORIES = 13


@pytest.fixture(scope="module")
def resolved():
    world = World.load(DEFAULT_WORLD)
    out = []
    placed = []
    for persona in PERSONAS:
        report = check_persona(ROOT, persona, world)
        assert report.ok, [str(e) for e in report.errors]
        placed += [w for w in report.warnings if PLACE_WARNING in w.message]
        # check's whole-prompt overlap warning is advice to the writer (the rule author already prefers the
        # wordings it wins least): it is reported, never a failure of the shipped stories
        others = [
            str(w)
            for w in report.warnings
            if PLACE_WARNING not in w.message and "the whole Find prompt makes" not in w.message
        ]
        assert not others, others
        out += report.resolved
    assert len(placed) <= PLACED_STORIES, [w.file for w in placed]
    return out


def test_every_policy_is_defined_in_a_document_of_the_world(resolved):
    assert len(resolved) == 24
    kinds = Counter(r.policy_doc.kind for r in resolved)
    assert kinds["note"] >= 6 and kinds["resource"] >= 12, kinds
    for r in resolved:
        assert (
            r.policy_doc.distractor
            and r.story.facts.policy.phrase.casefold() not in r.policy_doc.distractor.lower()
        )


def test_ground_facts_are_distinct_and_vary_in_position_and_action(resolved):
    facts = [r.governance.phrase for r in resolved]
    assert len(set(facts)) == 24
    positions = Counter(
        "cross-reference"
        if r.governance.hop
        else "first step"
        if r.governance.position.startswith("the first step")
        else "table row"
        if r.governance.position.startswith("its row")
        else "prompt"
        if r.governance.kind == "prompt"
        else "step"
        for r in resolved
    )
    assert all(positions[k] >= 3 for k in ("cross-reference", "first step", "table row", "prompt", "step")), (
        positions
    )
    actions = Counter("tab" if r.governance.sets == "tab" else "parameter" for r in resolved)
    assert actions["tab"] >= 4 and actions["parameter"] >= 12, actions
    assert len({r.governance.sets for r in resolved}) >= 8


def test_every_derive_has_a_rival_rule_its_second_view_takes(resolved):
    """A Derive level hides two options of the carried parameter (the policy's and a rival rule's of the same
    document, or of a note the board holds when the document's rivals give their value away): never the
    carried value, never the parameter's default, and a rival the pipeline picks never names its own value."""
    from authoring.factcheck import _gives_away
    from certify import load_lexicon

    lexicon = load_lexicon(DEFAULT_WORLD)
    coined = 0
    for r in resolved:
        param = r.targets[r.carried_target].widget.param(r.carried_key) or {}
        assert r.policy_doc.rival is not None, r.story.slug
        phrase, value = r.policy_doc.rival
        assert str(value) not in (str(r.carried_value), str(param.get("value"))), r.story.slug
        if r.policy_doc.kind == "resource":
            # (a story's own note names its rival, held by `check` to the rule its own phrase is)
            assert not _gives_away(phrase, param, lexicon, only=value), (r.story.slug, phrase)
        if r.policy_doc.rival_note is not None:
            coined += 1
            assert r.policy_doc.kind == "resource" and phrase[4:] in r.policy_doc.rival_note[1].lower()
    # a resource's own rules are taken where they fit; the rest are coined (their phrase names their value, or
    # they sit on the default: "the monthly-mailing rule" for Monthly Factsheet)
    own = sum(1 for r in resolved if r.policy_doc.kind == "resource") - coined
    assert own >= 6 and coined >= 1, (own, coined)
