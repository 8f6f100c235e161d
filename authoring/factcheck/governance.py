"""Where a governance source's fact sits: the source by kind and name, the phrase a closing step asks for
(unique in the world), and the position in the document a request points at ("step 3 of its workflow")."""

from __future__ import annotations

import re

from certify import words
from simulator import World

from ..locate import locate, offered
from ..sources import SourceError, Story
from ..suggest import did_you_mean
from .model import Governance

STEP = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$", re.M)


_NOT_NAMES = frozenset({"the", "and", "spec"})


def _words(text: str) -> set[str]:
    return words(text, longer_than=2, stop=_NOT_NAMES)


def world_texts(world: World) -> list[tuple[str, str]]:
    cached = world.cache.get("authoring:texts")
    if cached is None:
        cached = world.cache["authoring:texts"] = [
            (where, text.casefold()) for where, text in world.all_text()
        ]
    return cached


_EDGE_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "the",
        "of",
        "to",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "or",
        "is",
        "be",
        "it",
        "its",
        "you",
        "your",
        "can",
        "that",
        "this",
        "every",
        "each",
        "what",
    }
)


def _unique_phrase(world: World, own_file: str, sentence: str) -> str | None:
    """What a closing step or sentence asks for, as a phrase that occurs nowhere else in the world.

    The step's object is taken — its first clause without the leading verb and article ("List evidence gaps -
    the claims ..." gives "evidence gaps") — falling back to the whole step when that clause is not unique: a
    phrase an agent can only write after reading the source."""
    text = sentence.strip().rstrip(".")
    clause = re.split(r"\s[-–—]\s|[;:,]\s", text, maxsplit=1)[0].split()
    if len(clause) > 1:
        clause = clause[1:]
    while clause and clause[0].lower() in _EDGE_WORDS:
        clause = clause[1:]
    texts = world_texts(world)
    for phrase in (" ".join(clause), text):
        if len(phrase.split()) < 2:
            continue
        needle = phrase.casefold()
        holders = {where for where, body in texts if needle in body}
        if holders and all(h == own_file for h in holders):
            return phrase
    return None


def list_word(kind: str) -> str:
    """What a source's numbered steps are called in a request ("step 3 of its workflow")."""
    return "workflow" if kind == "skill" else "list"


def offers(text: str, kind: str, limit: int = 6) -> str:
    """What a document offers to ground a fact in, for an error that says where else to look."""
    found = offered(text, list_word(kind))
    if not found:
        return "it has no row, step, point or entry a request can point at"
    shown = "; ".join(f"{p.position}: '{p.text[:70]}'" for p in found[:limit])
    more = f" (and {len(found) - limit} more: taskforge world show)" if len(found) > limit else ""
    return f"it offers {shown}{more}"


def _where_in(text: str, phrase: str, kind: str, file: str, key: str, source: str) -> tuple[str, str]:
    """Where a phrase sits in a text (the pointer a request uses, and the piece holding it), generated from
    the document's structure and checked the way an agent reads it; a SourceError naming the story's field
    when no piece, or more than one, holds it."""
    located = locate(text, phrase, list_word(kind))
    if located.piece is None:
        raise SourceError(
            file, key, f"'{phrase}' cannot be pointed at in {source}: {located.problem}; {offers(text, kind)}"
        )
    return located.piece.where, located.piece.text


def _prompt_governance(world: World, file: str, name: str, fact: str | None) -> Governance:
    key = "facts.governance.prompt"
    prompt = world.prompts.get(name)
    if prompt is None:
        raise SourceError(
            file,
            key,
            f"unknown workspace prompt '{name}' (world has: {', '.join(sorted(world.prompts)) or 'none'})",
        )
    label = f"{prompt.name.replace('_', ' ')} prompt"
    if fact is not None:
        return Governance("prompt", prompt.name, label, fact, "")
    for planted in prompt.planted:
        where = planted.where or _where_in(prompt.text, planted.phrase, "prompt", file, key, prompt.name)[0]
        return Governance("prompt", prompt.name, label, planted.phrase, where)
    steps = STEP.findall(prompt.text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", prompt.text.strip()) if len(s.split()) >= 3]
    closing = steps[-1][1] if steps else (sentences[-1] if sentences else "")
    phrase = _unique_phrase(world, prompt.file, closing) if closing else None
    if phrase is None:
        raise SourceError(
            file, key, f"prompt '{name}' has no closing phrase that occurs nowhere else in the world"
        )
    where = _where_in(prompt.text, phrase, "prompt", file, key, prompt.name)[0]
    return Governance("prompt", prompt.name, label, phrase, where)


def _find_resource(world: World, wanted: str):
    """A resource by URI, else the one whose URI and title share the most words with `wanted` (two at least, and
    more than any other)."""
    resource = world.resources.get(wanted)
    if resource is None:
        scored = sorted(
            ((len(_words(wanted) & _words(f"{uri} {r.title}")), uri) for uri, r in world.resources.items()),
            reverse=True,
        )
        if scored and scored[0][0] >= 2 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
            resource = world.resources[scored[0][1]]
    return resource


def resolve_governance(world: World, story: Story) -> Governance:
    gov = story.facts.governance
    file = story.file
    if gov.prompt is not None:
        return _prompt_governance(world, file, gov.prompt, gov.fact)
    if gov.skill is not None:
        skill = world.skills.get(gov.skill)
        if skill is None:
            names = [*sorted(world.skills), *(s.name for s in world.skills.values())]
            raise SourceError(
                file,
                "facts.governance.skill",
                f"unknown skill '{gov.skill}'"
                f"{did_you_mean(gov.skill, names)} (world has: {', '.join(sorted(world.skills))})",
            )
        if gov.fact is not None:
            return Governance("skill", skill.slug, skill.name, gov.fact, "")
        for planted in skill.planted:
            if "last" in planted.where or "final" in planted.where:
                return Governance("skill", skill.slug, skill.name, planted.phrase, planted.where)
        steps = STEP.findall(skill.content)
        if not steps:
            raise SourceError(
                file,
                "facts.governance.skill",
                f"skill '{gov.skill}' has no numbered workflow to ground a fact in",
            )
        phrase = _unique_phrase(world, skill.file, steps[-1][1])
        if phrase is None:
            raise SourceError(
                file,
                "facts.governance.skill",
                f"the last step of skill '{gov.skill}' has no phrase that occurs nowhere else in the world",
            )
        return Governance("skill", skill.slug, skill.name, phrase, "what its workflow lists last")
    wanted = gov.resource or ""
    resource = _find_resource(world, wanted)
    if resource is None:
        raise SourceError(
            file,
            "facts.governance.resource",
            f"no workspace resource matches '{wanted}'"
            f"{did_you_mean(wanted, [*world.resources, *(r.title for r in world.resources.values())])}",
        )
    if gov.fact is not None:
        return Governance("resource", resource.uri, resource.title or resource.uri, gov.fact, "")
    key = "facts.governance.resource"
    for planted in resource.planted:
        where = (
            planted.where or _where_in(resource.text, planted.phrase, "resource", file, key, resource.uri)[0]
        )
        return Governance("resource", resource.uri, resource.title or resource.uri, planted.phrase, where)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", resource.text.strip()) if len(s.split()) >= 3]
    phrase = _unique_phrase(world, resource.file, sentences[-1]) if sentences else None
    if phrase is None:
        raise SourceError(
            file,
            "facts.governance.resource",
            f"resource '{resource.uri}' has no closing phrase that occurs nowhere else in the world",
        )
    where = _where_in(resource.text, phrase, "resource", file, key, resource.uri)[0]
    return Governance("resource", resource.uri, resource.title or resource.uri, phrase, where)
