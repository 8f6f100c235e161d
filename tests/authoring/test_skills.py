"""The role skills say what the code sends and expects: the author's tools (submit_level and its result), and
every field and allowed value of the reviewers' and the fixer's replies, the fixer's patchable paths included."""

from __future__ import annotations

import re
import typing

import pytest
from pydantic import BaseModel

from authoring.roles.author import TOOLS
from authoring.roles.fairness import FairnessFinding, FairnessReply
from authoring.roles.fixer import PATCHABLE, FixerReply, JsonPatchOp
from authoring.roles.llm import DEFAULT_SKILLS_DIR
from authoring.roles.validator import ValidatorFinding, ValidatorReply


def skill(name: str) -> str:
    return (DEFAULT_SKILLS_DIR / f"{name}.md").read_text(encoding="utf-8")


def vocabulary(*models: type[BaseModel]) -> set[str]:
    """Every field name (by its wire alias) and every literal value a reply model accepts."""
    words: set[str] = set()
    for model in models:
        for name, info in model.model_fields.items():
            words.add(info.alias or name)
            for arg in typing.get_args(info.annotation) or (info.annotation,):
                if typing.get_origin(arg) is typing.Literal:
                    words.update(str(v) for v in typing.get_args(arg))
            if typing.get_origin(info.annotation) is typing.Literal:
                words.update(str(v) for v in typing.get_args(info.annotation))
    return words


@pytest.mark.parametrize(
    ("name", "models"),
    [
        ("task-validator", (ValidatorReply, ValidatorFinding)),
        ("task-level-fairness", (FairnessReply, FairnessFinding)),
        ("task-fixer", (FixerReply, JsonPatchOp)),
    ],
)
def test_reviewer_and_fixer_skills_name_every_reply_field_and_value(name, models):
    text = skill(name)
    missing = sorted(
        w for w in vocabulary(*models) if not re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)
    )
    assert not missing, f"{name}.md does not describe {missing}"
    assert "FLAG " not in text and "APPROVE" not in text


def test_the_fixer_skill_lists_exactly_the_patchable_paths():
    text = skill("task-fixer")
    assert all(f"`{path}`" in text for path in PATCHABLE)
    assert "`/eval/trace_checks`" not in text and "JSON Patch" in text


def test_the_author_skill_names_its_tools_and_submit_level_contract():
    text = skill("task-author")
    for tool in TOOLS:
        assert f"`{tool['function']['name']} " in text, tool["function"]["name"]
    assert '"certified"' in text and '"gates"' in text and "JSON Schema" in text
