"""Resolving the fact a Ground level sets from its source, and refusing one an agent could take without
reading the passage the request points at."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from certify import units
from simulator import World

from ..groundable import is_default, quoted, referred, skim_refusal, source_of, stated_option
from ..sources import SourceError, Story
from ..suggest import did_you_mean, listing
from .governance import STEP, _where_in, world_texts
from .model import Governance, Hop, ResolvedTarget
from .said import value_text


def _ground_fact(
    world: World,
    story: Story,
    gov: Governance,
    targets: list[ResolvedTarget],
    seeded_wrong: dict[str, Any],
    kind: str,
) -> list[SourceError]:
    """Resolve the fact a Ground level sets from its source: the phrase is in the named source (or in the one
    document the source sends the reader to), nowhere else in the world, and the piece holding it states what
    the fact sets — the target's value of that parameter (one an agent that does not read would get wrong), or
    a quoted tab title."""
    facts = story.facts
    fact = facts.governance.fact or ""
    file = story.file
    key = "facts.governance.fact"
    named = source_of(world, gov.kind, gov.ref)
    if named is None:
        return [
            SourceError(
                file,
                f"facts.governance.{gov.kind}",
                f"the world has no {gov.kind} '{gov.ref}'; name one it has",
            )
        ]
    holder_kind, holder_ref, (holder_file, _, text, planted) = gov.kind, gov.ref, named
    if fact.casefold() not in text.casefold():
        for uri in referred(named[2]):
            other = source_of(world, "resource", uri)
            if other is not None and fact.casefold() in other[2].casefold():
                steps = [int(n) for n, step in STEP.findall(named[2]) if uri in step]
                position = f"step {steps[0]} of its workflow" if steps else "the passage that refers to it"
                gov.hop = Hop(uri, other[1], position)
                holder_kind, holder_ref, (holder_file, _, text, planted) = "resource", uri, other
        if gov.hop is None:
            marked = _marked_up(text, fact)
            if marked is not None:
                # `world show --facts` prints pieces without their markup; the phrase must be one run of the text
                return [
                    SourceError(
                        file,
                        key,
                        f"'{fact}' is in {gov.source} only across markup ('{marked}'): the agents and the "
                        "reference search the text as written, so ground a phrase that sits inside one run of "
                        "it — the part after the bold term, e.g. "
                        f"'{_unmarked_tail(text, marked)}'",
                    )
                ]
            return [
                SourceError(file, key, f"'{fact}' is neither in {gov.source} nor in a document it refers to")
            ]
        gov.holder = f"{holder_kind}:{holder_ref}"
    holders = {where for where, body in world_texts(world) if fact.casefold() in body}
    if holders != {holder_file}:
        elsewhere = sorted(holders - {holder_file})
        return [
            SourceError(
                file,
                key,
                f"'{fact}' also occurs in {', '.join(elsewhere[:3])}: a Ground fact lives in "
                "its source and nowhere else",
            )
        ]
    gov.phrase = fact
    entry = next((p for p in planted if p.phrase.casefold() == fact.casefold()), None)
    piece = next((u for u in units(text) if fact.casefold() in u.casefold()), fact)
    if entry is not None and entry.where:
        where = entry.where
    else:
        try:
            where, piece = _where_in(text, fact, holder_kind, file, key, gov.source)
        except SourceError as exc:
            return [exc]
    gov.where = where
    if gov.hop is not None:
        gov.hop.row = where.split(" (")[0]
    sets = facts.governance.sets or ""
    gov.sets = sets
    if sets == "tab":
        title = quoted(piece)
        if title is None:
            return [
                SourceError(
                    file, "facts.governance.sets", f"the passage holding '{fact}' quotes no tab title"
                )
            ]
        if title.casefold() == (facts.tab or "").casefold():
            return [SourceError(file, "facts.governance.sets", f"the tab is already called '{title}'")]
        gov.value = title
        return []
    carrying = [t for t in targets if sets in t.params]
    if not carrying:
        graded = sorted({k for t in targets for k in t.params})
        return [
            SourceError(
                file,
                "facts.governance.sets",
                f"'{sets}' is neither 'tab' nor a graded parameter of a "
                f"target{did_you_mean(sets, graded)} (graded: {listing(graded)})",
            )
        ]
    target = carrying[0]
    param = target.widget.param(sets) or {}
    stated = stated_option(piece, param)
    value = target.params[sets]
    if stated is None or str(stated) != str(value):
        found = f"states {stated!r}" if stated is not None else "states no option of it"
        return [
            SourceError(
                file,
                key,
                f"the passage holding '{fact}' {found}, but the story sets {sets}={value_text(value)!r}",
            )
        ]
    if kind == "repair" and sets not in seeded_wrong:
        return [
            SourceError(
                file,
                "facts.governance.sets",
                f"the stale widget already shows {sets}="
                f"{value_text(value)!r}, so the Ground level would pass without reading; seed it wrong "
                "(facts.seeded_wrong) or ground another parameter",
            )
        ]
    if kind != "repair" and is_default(param, value):
        return [
            SourceError(
                file,
                "facts.governance.sets",
                f"{value_text(value)!r} is the default of '{sets}', so an "
                "agent that never reads the source gets it right; ground another parameter",
            )
        ]
    gov.value = value
    return []


def _skimmed_errors(
    world: World, file: str, gov: Governance, targets: list[ResolvedTarget]
) -> list[SourceError]:
    """A Ground fact must need its passage, not only its document: an agent that reads the named source (and
    the document it sends to) but not the piece the request points at — the battery's source and tail skimmers,
    taking the option the text mentions most (the first of a tie) or last, or the first or last tab title it
    quotes — must get it wrong. One whose document names no rival of the value elsewhere, or names the value most, blocks the level
    at the shortcuts gate; check says so first, and why, and names the pieces of the world that would carry a
    fact for the same parameter (`world show --facts` tags every piece the same way): a writer cannot reorder a
    document of the world, only pick another piece or replace the document through the overlay."""
    value = gov.value
    param = next((t.widget.param(gov.sets) for t in targets if gov.sets and gov.sets in t.params), None)
    if value is None or (param is None and gov.sets != "tab"):
        return []
    why = skim_refusal(world, f"{gov.kind}:{gov.ref}", gov.holder, param, value)
    if not why:
        return []
    if param is None:
        tail = why == "tail"
        what = f"the {'last' if tail else 'first'} tab title {gov.source} quotes is '{value}'"
        fix = f"let {'a later' if tail else 'an earlier'} passage of it quote another tab's title"
    else:
        head = why != "tail"
        what = (
            f"{gov.source} names no option of '{gov.sets}' but {value_text(value)!r}"
            if why == "alone"
            else f"{value_text(value)!r} is the option of '{gov.sets}' {gov.source} names most (or first)"
            if head
            else f"{value_text(value)!r} is the option of '{gov.sets}' {gov.source} names last"
        )
        fix = (
            "let another passage of it, before this one, name another option of the parameter, more often"
            if head
            else "let another passage of it, after this one, name another option of the parameter"
        )
    return [
        SourceError(
            file,
            "facts.governance.fact",
            f"{what}, so an agent that reads the document but not {gov.position or 'the passage'} gets the "
            f"Ground level right (the shortcuts' source skimmer passes it); {fix}{_elsewhere(world, gov, param)}",
        )
    ]


def _elsewhere(world: World, gov: Governance, param: dict[str, Any] | None) -> str:
    """Where else the story could ground `gov.sets`: the document is the world's (or the overlay's, which the
    writer edits as the fix says), so name up to three pieces `world show --facts` lists as accepted for the
    same parameter — the story's own value first — and the overlay as the way to give a world document the
    passage the fix asks for."""
    from ..groundable import groundable

    key = "authoring:groundable"
    if key not in world.cache:
        world.cache[key] = groundable(world)
    pieces = [
        (str(x.value) != str(gov.value), f"{g.kind} {g.ref} | {g.position} ({gov.sets}={x.value})")
        for g in world.cache[key]
        for x in g.sets
        if x.param == gov.sets
        and f"{g.kind}:{g.ref}" != f"{gov.kind}:{gov.ref}"
        and x.refusal(f"{g.kind}:{g.ref}", param) == ""
    ]
    pieces.sort(key=lambda p: p[0])
    offer = (
        f"; pieces that carry a '{gov.sets}' fact check accepts: {'; '.join(p for _, p in pieces[:3])}"
        if pieces
        else ""
    )
    found = source_of(world, gov.kind, gov.ref)
    name = Path(found[0]).name if found else "a file named like it"
    return (
        f" (a document of the world changes through the overlay: overlay/{gov.kind}s/{name} replaces it){offer}; "
        "`taskforge world show --facts` tags each piece with what it sets and whether check accepts it"
    )


_MARKUP = re.compile(r"\*\*|__|`|\*")


def _marked_up(text: str, fact: str) -> str | None:
    """The stretch of `text` that says `fact` once its markdown emphasis is dropped, as written (None when the
    plain text does not say it either)."""
    plain, spans = [], []
    for m in re.finditer(r"\*\*|__|`|\*|.", text, re.S):
        if not _MARKUP.fullmatch(m.group(0)):
            plain.append(m.group(0))
            spans.append(m.start())
    at = "".join(plain).casefold().find(fact.casefold())
    if at < 0:
        return None
    return text[spans[at] : spans[at + len(fact) - 1] + 1]


def _unmarked_tail(text: str, marked: str) -> str:
    """What follows the last markup of `marked` to the end of its line: a phrase one run of the text holds."""
    end = text.find(marked) + len(marked)
    line_end = text.find("\n", end)
    tail = _MARKUP.split(marked)[-1] + text[end : line_end if line_end >= 0 else len(text)]
    return tail.strip().rstrip(".")
