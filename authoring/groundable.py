"""What a world's documents offer a story to ground in: every piece a request can point at, where it is, and
which personas already ground a fact there (`taskforge world show --facts`).

A new role reads this instead of `factcheck/` and the world's front matter: a fact any of these pieces holds
can be a story's `facts.governance.fact` (with the piece's document as its source), planted or not. With `sets`,
the piece must also need reading: each piece is listed with the parameter option (or tab title) it would set and
whether `check` accepts it there — a document that names that option most (or first) or last hands it to an agent
that skims the document without following the pointer (`skimmed`, the one home of that rule, which
`factcheck/ground.py` refuses by), so a two-rule glossary's entries, or a handbook's last row, often cannot carry
a `sets` fact although they can be grounded in for a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from certify import option_mentions, skimmed_options, skimmed_title
from simulator import World, option_values

from .locate import _flat, offered


@dataclass
class Groundable:
    kind: str  # skill, resource or prompt
    ref: str  # slug, uri or name: what facts.governance.<kind> takes
    file: str
    position: str
    text: str
    planted: list[str] = field(default_factory=list)  # the world's declared facts in this piece
    used_by: list[str] = field(default_factory=list)  # "persona/story" grounding a fact here
    sets: list[Sets] = field(default_factory=list)  # what a `sets` fact here would set, and check's verdict

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "source": self.ref,
            "file": self.file,
            "position": self.position,
            "text": self.text,
            "planted": self.planted,
            "used_by": self.used_by,
            "sets": [x.to_dict() for x in self.sets],
        }

    def sets_tags(self) -> str:
        """` [sets scenario=Oil +40%]`, or with check's refusal: ` [sets tab="Closed Out": refused, the last tab
        title the document quotes]`."""
        out = []
        for x in self.sets:
            value = f'"{x.value}"' if x.param == "tab" else x.value
            out.append(f" [sets {x.param}={value}{': refused, ' + x.refused if x.refused else ''}]")
        return "".join(out)


@dataclass
class Sets:
    """An option (or a tab title) a piece states, as `facts.governance.sets` would take it, and why `check`
    refuses a Ground fact there (empty when it accepts one)."""

    param: str  # a parameter name, or "tab"
    value: str
    refused: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"param": self.param, "value": self.value, "refused": self.refused}


def skimmed(read: list[str], param: dict[str, Any] | None, value: Any) -> str:
    """Why an agent that reads the documents `read` (the named source and the one it sends to) but not the piece
    a request points at still gets `value` right: "alone", "head" (the option they name most, the first of a
    tie; or the first tab title they quote) or "tail" (the last one they name or quote); "" when it does not.
    `param` None means a tab title. The battery's source and tail skimmers read this way
    (`certify.skimmed_options`), so a Ground fact whose value this names blocks at the shortcuts gate."""
    if param is None:
        if skimmed_title(read) == value:
            return "head"
        return "tail" if skimmed_title(read, tail=True) == value else ""
    text = "\n".join(read)
    order = skimmed_options(text, param)
    last = skimmed_options(text, param, tail=True)
    if order and str(order[0]) == str(value):
        return "alone" if len(order) == 1 else "head"
    return "tail" if last and str(last[0]) == str(value) else ""


_SKIMMED = {
    "alone": "the document names no other option of it",
    "head": "the document names it most (or first)",
    "tail": "the document names it last",
}
_SKIMMED_TAB = {
    "head": "the first tab title the document quotes",
    "tail": "the last tab title the document quotes",
}


def _world_params(world: World) -> list[dict[str, Any]]:
    """Every distinct parameter with options the world's catalogs declare (by name and options), the ones a
    `sets` fact can set."""
    seen: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for backend in world.backends.values():
        for widget in backend.catalog.widgets.values():
            for param in widget.params:
                options = tuple(str(o) for o in option_values(param))
                if len(options) > 1:
                    seen.setdefault((str(param.get("paramName")), options), param)
    return list(seen.values())


def quoted(text: str) -> str | None:
    """The first short quoted span of `text` (a title a document gives in quotes): one home for the facts check
    and the pieces' tags, so both read the same title."""
    match = re.search(r"[\"“]([^\"”]{2,40})[\"”]", text)
    return match.group(1) if match else None


def _sets_of(text: str, doc: str, params: list[dict[str, Any]]) -> list[Sets]:
    """What a `sets` fact in the piece `text` of document `doc` would set: the first option of each parameter
    it names (as the facts check reads it), with the refusal where the document gives the option away; a
    parameter the world declares under several option lists counts as accepted when any of them accepts it."""
    found: dict[tuple[str, str], str] = {}
    said_by = [(param, option_mentions(text, param, as_written=True)) for param in params]
    spans = [(m.start, m.end) for _, said in said_by for m in said]
    for param, said in said_by:
        # an option inside another parameter's longer option ("Trading" in "Program Trading") is not said
        said = [
            m
            for m in said
            if not any(a <= m.start and m.end <= b and b - a > m.end - m.start for a, b in spans)
        ]
        if not said:
            continue
        key = (str(param.get("paramName")), str(said[0].value))
        why = skimmed([doc], param, said[0].value)
        found[key] = "" if not why or not found.get(key, why) else _SKIMMED[why]
    title = quoted(text) if re.search(r"\btabs?\b", text, re.I) else None
    if title:
        why = skimmed([doc], None, title)
        found[("tab", title)] = _SKIMMED_TAB[why] if why else ""
    return [Sets(param, value, refused) for (param, value), refused in found.items()]


def _documents(world: World) -> list[tuple[str, str, str, str, tuple]]:
    docs = [("skill", s.slug, s.file, s.content, s.planted) for s in world.skills.values()]
    docs += [("resource", r.uri, r.file, r.text, r.planted) for r in world.resources.values()]
    docs += [("prompt", p.name, p.file, p.text, p.planted) for p in world.prompts.values()]
    return docs


def groundable(world: World, sources: Path | None = None) -> list[Groundable]:
    """Every groundable piece of every knowledge document, with the stories of `sources` that use it."""
    uses: list[tuple[str, str, str, str]] = []  # (kind, ref, fact, who) per story grounding a fact
    if sources is not None:
        uses = list(_uses(world, sources))
    out = []
    params = _world_params(world)
    for kind, ref, file, text, planted in _documents(world):
        list_word = "workflow" if kind == "skill" else "list"
        for piece in offered(text, list_word):
            flat = _flat(piece.text)
            item = Groundable(kind, ref, file, piece.position, piece.text)
            item.planted = [p.phrase for p in planted if _flat(p.phrase) in flat]
            item.used_by = [who for _, _, fact, who in uses if _flat(fact) in flat]  # it lives in one place
            item.sets = _sets_of(piece.text, text, params)
            out.append(item)
    return out


def _uses(world: World, sources: Path):
    """(kind, ref, fact, "persona/story") of every story under `sources` that grounds a fact."""
    from .sources import SourceError, load_story, story_paths

    personas = sorted(p.stem for p in (sources / "personas").glob("*.md"))
    for persona in personas:
        for path in story_paths(sources, persona):
            try:
                story = load_story(path, persona)
            except SourceError:
                continue
            gov = story.facts.governance
            if not gov.fact:
                continue
            for kind, ref in (("skill", gov.skill), ("resource", gov.resource), ("prompt", gov.prompt)):
                if ref:
                    yield kind, ref, gov.fact, f"{persona}/{story.slug}"
