"""The analyze ask of a story, checked against the world before any authoring.

A story with `facts.analyze` asks, at every level, for a judged answer: the first target's rows read on the
level's cut, each row's figure cited and compared with the threshold its governing skill sets, and a verdict.
What is checked here is what a story writer can get wrong: a skill the world does not have, a threshold the
skill does not state, columns the target does not serve. The rows themselves are read when the level is
planned (they depend on the cut), where a figure that is not a number is an authoring error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator import World

from .sources import AnalyzeFact, SourceError, Story
from .suggest import did_you_mean

# An answer that cites more rows than this is a table, not an analysis; a story picks a narrower cut.
MAX_ANALYZED_ROWS = 12


@dataclass(frozen=True)
class ResolvedAnalyze:
    """The analyze ask resolved: the skill by slug and name, the figure and label columns, the threshold."""

    skill: str
    skill_name: str
    figure: str
    label: str
    said: str
    value: float
    name: str
    size: bool

    @classmethod
    def of(cls, fact: AnalyzeFact, skill_name: str, label: str) -> ResolvedAnalyze:
        t = fact.threshold
        return cls(fact.skill, skill_name, fact.figure, label, t.said, t.value, t.name, fact.size)


def columns_of(widget_definition: dict[str, Any], rows: list[Any]) -> list[str]:
    """The columns a table widget serves: its column definitions, else the keys of its first row."""
    defs = (widget_definition.get("schema_data") or {}).get("table", {}).get("columnsDefs") or []
    named = [str(c.get("field")) for c in defs if isinstance(c, dict) and c.get("field")]
    if named:
        return named
    first = next((r for r in rows if isinstance(r, dict)), {})
    return list(first)


def resolve_analyze(
    world: World, story: Story, widget_definition: dict[str, Any], rows: list[Any], params: dict[str, Any]
) -> tuple[ResolvedAnalyze | None, list[SourceError]]:
    """The story's analyze ask against the world and its first target (`rows`: what the target serves, any
    cut), with every error naming the file and key."""
    fact = story.facts.analyze
    if fact is None:
        return None, []
    file, errors = story.file, []
    skill = world.skills.get(fact.skill)
    if skill is None:
        errors.append(
            SourceError(
                file,
                "facts.analyze.skill",
                f"the world has no skill '{fact.skill}'{did_you_mean(fact.skill, list(world.skills))}",
            )
        )
    elif fact.threshold.said.casefold() not in skill.content.casefold():
        errors.append(
            SourceError(
                file,
                "facts.analyze.threshold.said",
                f"'{fact.threshold.said}' is not in the {skill.name} skill: give the threshold in the skill's own "
                "words (the analysis is graded the way the skill prescribes)",
            )
        )
    columns = columns_of(widget_definition, rows)
    for key, column in (("figure", fact.figure), ("label", fact.label)):
        if column is not None and column not in columns:
            errors.append(
                SourceError(
                    file,
                    f"facts.analyze.{key}",
                    f"the first target serves no column '{column}'{did_you_mean(column, columns)}",
                )
            )
    label = fact.label or next(
        (
            c
            for c in columns
            if c != fact.figure and c not in params and any(isinstance(r.get(c), str) for r in rows[:1])
        ),
        None,
    )
    if label is None:
        errors.append(
            SourceError(
                file, "facts.analyze.label", "name the column that tells the rows apart (no text column)"
            )
        )
    if errors or skill is None or label is None:
        return None, errors
    return ResolvedAnalyze.of(fact, skill.name, label), []
