"""External input: the source benchmark's authoring templates, authored with rule drivers against its world."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from authoring.pipeline import Drivers, RunOptions, build_graph
from authoring.roles.author import RuleAuthor
from authoring.roles.fairness import RuleFairness
from authoring.roles.fixer import RuleFixer
from authoring.roles.validator import RuleValidator
from authoring.state import serializer
from tests.conftest import COMPAT, COMPAT_WORLD, needs_compat

TEMPLATES = COMPAT / "task_templates"
PERSONAS = sorted(p.name for p in TEMPLATES.iterdir() if (p / "README.md").is_file()) if TEMPLATES.is_dir() else []


@needs_compat
@pytest.mark.parametrize("persona", PERSONAS)
def test_compat_persona_authors_twenty_certified_tasks(persona, tmp_path):
    graph = build_graph(Drivers(RuleAuthor(), RuleValidator(), RuleFairness(), RuleFixer()), InMemorySaver(serde=serializer()))
    options = RunOptions(persona=persona, tasksets_dir=str(tmp_path / "tasksets"), sources_root=str(TEMPLATES),
                         skills_dir=str(tmp_path / "skills"), world=str(COMPAT_WORLD), baseline="stark-workspace-a",
                         repeats=1, commit=False)
    config = {"configurable": {"thread_id": persona}, "recursion_limit": 500}
    graph.invoke({"options": options}, config, context=options)
    state = graph.get_state(config).values
    certified = [t for t, a in state["tasks"].items() if a.cert.certified]
    assert len(state["tasks"]) == 20 and len(certified) == 20
    assert state["result"].status == "certified"
    assert state["calibration"].holds is True
