"""The rule author writes requests the prose gate passes for personas nobody here wrote (issue 22): the frozen
new-persona fixtures, and one of them with a voice that invites every fault the phrasebook used to make — phrasal
repair verbs ("point back" before "it back to"), deadlines written in lower case without a stop, aliases made of
the name's own words, and boards whose names end in "Board"."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from authoring.checks import check_persona
from authoring.overlay import world_for
from authoring.roles.author import rule_drafts
from certify import prompt_faults
from simulator import World

FIXTURES = Path(__file__).parent / "fixtures"


def faults_of(sources: Path, persona: str) -> dict[str, list[str]]:
    world = World.load(world_for(sources, None))
    report = check_persona(sources, persona, world)
    assert report.source is not None and not report.errors, [str(e) for e in report.errors]
    return {task.id: [str(f) for f in prompt_faults(world, task)] for task in rule_drafts(world, report)}


@pytest.mark.parametrize("fixture", ["new_personas", "new_personas_revised"])
@pytest.mark.parametrize("persona", ["treasury_analyst", "market_risk_officer"])
def test_the_new_personas_are_written_without_a_fault(fixture, persona):
    found = faults_of(FIXTURES / fixture, persona)
    assert len(found) == 20
    assert {k: v for k, v in found.items() if v} == {}


def test_a_voice_that_invites_the_old_faults_gets_none(tmp_path):
    sources = tmp_path / "sources"
    shutil.copytree(FIXTURES / "new_personas", sources)
    page = sources / "personas" / "treasury_analyst.md"
    text = page.read_text(encoding="utf-8")
    voice = {
        "deadlines": '["ahead of the CLS cut-off", "before the noon margin call"]',
        "aliases": '{Ostrander Prime: "Ostrander", Calder & Voss: "Calder Voss"}',
        "repair_verbs": '["switch back", "reset", "fix"]',
        "add_verbs": '["bring up", "put up", "pin"]',
    }
    for key, value in voice.items():
        text, n = re.subn(rf"^  {key}: .*$", f"  {key}: {value}", text, flags=re.M)
        assert n == 1, key
    page.write_text(text, encoding="utf-8")
    found = faults_of(sources, "treasury_analyst")
    assert {k: v for k, v in found.items() if v} == {}
