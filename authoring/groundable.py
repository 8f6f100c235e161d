"""What a world's documents offer a story to ground in: every piece a request can point at, where it is, and
which personas already ground a fact there (`taskforge world show --facts`).

A new role reads this instead of `factcheck/` and the world's front matter: a fact any of these pieces holds
can be a story's `facts.governance.fact` (with the piece's document as its source), planted or not. With `sets`,
the piece must also need reading: each piece is listed with the parameter option (or tab title) it would set and
whether `check` accepts it there — a document that names that option most (or first) or last hands it to an agent
that skims the document without following the pointer (`skimmed`, the one home of that rule, which
`factcheck/ground.py` refuses by), so a two-rule glossary's entries, or a handbook's last row, often cannot carry
a `sets` fact although they can be grounded in for a note. The verdict is check's own judgement
(`skim_refusal`, `is_default`, `stated_option` below, which `factcheck/ground.py` refuses by) for every way a story can come to the piece —
the source named (the document, or one whose passage sends the reader there: the skimmer reads both) and the
target parameter's options and default — so a tag that says accepted is never refused by check, nor the reverse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from certify import URI, option_mentions, skimmed_options, skimmed_title, units
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
        title the document quotes]`; where check's verdict depends on how the story names the document or on
        its target's options, each verdict with the condition it holds under."""
        return "".join(f" [{x.tag()}]" for x in self.sets)


@dataclass(frozen=True)
class Verdict:
    """Check's verdict on a `sets` fact in a piece, for one way a story can come to it: the source the story
    names (`<kind>:<ref>`: the piece's own document, or one whose passage sends the reader there) and the
    target parameter's options and default (a widget's; none for a tab title)."""

    named: str
    options: tuple[str, ...] = ()
    default: str | None = None
    refused: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "named": self.named,
            "options": list(self.options),
            "default": self.default,
            "refused": self.refused,
        }


@dataclass
class Sets:
    """An option (or a tab title) a piece states, as `facts.governance.sets` would take it, and check's verdict
    on a Ground fact there for every way a story can name the piece's document and every option list the
    world's widgets give the parameter (`verdicts`)."""

    param: str  # a parameter name, or "tab"
    value: str
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def refused(self) -> str:
        """Why check refuses a Ground fact here ("" when it accepts it however the story comes to it); where the
        verdict depends on the way, each reason with the ways it holds for, and the ways it is accepted."""
        reasons = list(dict.fromkeys(v.refused for v in self.verdicts if v.refused))
        if not reasons:
            return ""
        if len(reasons) == 1 and all(v.refused for v in self.verdicts):
            return reasons[0]
        said = [f"{why} {self._when([v for v in self.verdicts if v.refused == why])}" for why in reasons]
        accepted = [v for v in self.verdicts if not v.refused]
        return "; ".join(said + ([f"accepted {self._when(accepted)}"] if accepted else []))

    def refusal(self, named: str, param: dict[str, Any] | None) -> str | None:
        """Check's refusal of a Ground fact here for a story naming `named` whose target takes `param` (None: a
        tab title): "" when it accepts it, None when no verdict covers that way (the value is not an option)."""
        key = _signature(param)
        found = [v for v in self.verdicts if v.named == named and (v.options, v.default) == key]
        return found[0].refused if found else None

    def _when(self, verdicts: list[Verdict]) -> str:
        """The ways `verdicts` hold for, said in the dimensions the piece's verdicts differ in: the source named
        and the target's options (with its default where options alike differ by it); a dimension the group
        covers whole is left unsaid."""
        every_route = list(dict.fromkeys(v.named for v in self.verdicts))
        every_kind = list(dict.fromkeys((v.options, v.default) for v in self.verdicts))
        by_options = {o for o, _ in every_kind}
        routes = list(dict.fromkeys(v.named for v in verdicts))
        kinds = list(dict.fromkeys((v.options, v.default) for v in verdicts))

        def kind_said(kind: tuple[tuple[str, ...], str | None]) -> str:
            options, default = kind
            plain = len(by_options) == len(every_kind)  # no two option lists alike but for their default
            return f"{self.param} options {', '.join(options)}" + ("" if plain else f", default {default}")

        def route_said(route: str) -> str:
            return f"named as {route}"

        whole = {(v.named, v.options, v.default) for v in verdicts} == {
            (r, *k) for r in routes for k in kinds
        }
        if whole:
            said = []
            if len(routes) < len(every_route):
                said.append(" or ".join(route_said(r) for r in routes))
            if len(kinds) < len(every_kind):
                said.append("for a target with " + " or ".join(kind_said(k) for k in kinds))
            return "(" + ", ".join(said) + ")" if said else ""
        return (
            "("
            + " or ".join(
                f"{route_said(v.named)} for a target with {kind_said((v.options, v.default))}"
                for v in verdicts
            )
            + ")"
        )

    def tag(self) -> str:
        value = f'"{self.value}"' if self.param == "tab" else self.value
        return f"sets {self.param}={value}" + (f": refused, {self.refused}" if self.refused else "")

    def to_dict(self) -> dict[str, object]:
        return {
            "param": self.param,
            "value": self.value,
            "refused": self.refused,
            "verdicts": [v.to_dict() for v in self.verdicts],
        }


def _signature(param: dict[str, Any] | None) -> tuple[tuple[str, ...], str | None]:
    """A parameter's options and default: what check's verdict on a value of it depends on."""
    if param is None:
        return (), None
    default = param.get("value")
    return tuple(str(o) for o in option_values(param)), None if default is None else str(default)


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
_DEFAULT = "it is the parameter's default (an add or a read cannot ground it; a repair seeds it wrong)"


# ------------------------------------------------------------------ check's judgement of a Ground fact, one home
def source_of(world: World, kind: str, ref: str) -> tuple[str, str, str, tuple[Any, ...]] | None:
    """(file, title, text, planted) of a knowledge source (`kind` skill, resource or prompt; `ref` its slug, uri
    or name)."""
    if kind == "skill":
        skill = world.skills.get(ref)
        return (skill.file, skill.name, skill.content, skill.planted) if skill else None
    if kind == "resource":
        res = world.resources.get(ref)
        return (res.file, res.title or res.uri, res.text, res.planted) if res else None
    prompt = world.prompts.get(ref)
    return (prompt.file, prompt.name, prompt.text, prompt.planted) if prompt else None


def referred(text: str) -> list[str]:
    """The resource URIs a document's passages refer to, in order: the documents a Ground fact named by this
    one can sit in (the reader follows the pointer there). One home for check's hop and `world show --facts`'s
    routes to a piece."""
    return [uri for piece in units(text) for uri in URI.findall(piece)]


def stated_option(piece: str, param: dict[str, Any]) -> Any:
    """The option of `param` a passage states, as check reads it (the first it names; None when it names
    none): a Ground fact in the passage sets that value or check refuses it."""
    said = option_mentions(piece, param, as_written=True)
    return said[0].value if said else None


def is_default(param: dict[str, Any], value: Any) -> bool:
    """Whether `value` is the parameter's default: an agent that never reads the source gets it right, so an
    add's (or a read's) Ground fact cannot set it; a repair can, by seeding the stale widget wrong."""
    return str(param.get("value")) == str(value)


def documents_read(world: World, named: str, holder: str | None) -> list[str]:
    """The texts an agent that skims a Ground fact's source reads: the named source (`<kind>:<ref>`) and the
    document it sends to (`holder`, when the fact is there), each once."""
    read: list[str] = []
    for source in (named, holder):
        found = source_of(world, *source.split(":", 1)) if source else None
        if found is not None and found[2] not in read:
            read.append(found[2])
    return read


def skim_refusal(
    world: World, named: str, holder: str | None, param: dict[str, Any] | None, value: Any
) -> str:
    """Why check refuses a Ground fact setting `value` (of `param`; None: a tab title) in the document it is
    in, named as `named` and held by `holder`: `skimmed` of the documents an agent reads
    ("alone", "head" or "tail"), "" when it must read the passage. The one judgement `check` blocks by and
    `world show --facts` tags each piece with, for every way a story can name the piece's document."""
    read = documents_read(world, named, holder)
    return skimmed(read, param, value) if read and value is not None else ""


def _world_params(world: World) -> list[dict[str, Any]]:
    """Every distinct parameter with options the world's catalogs declare (by name, options and default), the
    ones a `sets` fact can set: check's verdict on a value depends on all three."""
    seen: dict[tuple[str, tuple[tuple[str, ...], str | None]], dict[str, Any]] = {}
    for backend in world.backends.values():
        for widget in backend.catalog.widgets.values():
            for param in widget.params:
                if len(option_values(param)) > 1:
                    seen.setdefault((str(param.get("paramName")), _signature(param)), param)
    return list(seen.values())


def quoted(text: str) -> str | None:
    """The first short quoted span of `text` (a title a document gives in quotes): one home for the facts check
    and the pieces' tags, so both read the same title."""
    match = re.search(r"[\"“]([^\"”]{2,40})[\"”]", text)
    return match.group(1) if match else None


def routes(world: World, kind: str, ref: str) -> list[tuple[str, str | None]]:
    """The ways a story can name a document so that check grounds a fact in it: (the source named, the holder
    check records): the document itself, and every document whose passages send the reader to it (a resource,
    by its URI: `referred`, the hop check follows)."""
    out: list[tuple[str, str | None]] = [(f"{kind}:{ref}", None)]
    if kind != "resource":
        return out
    for other_kind, other_ref, _, text, _ in _documents(world):
        if (other_kind, other_ref) != (kind, ref) and ref in referred(text):
            out.append((f"{other_kind}:{other_ref}", f"resource:{ref}"))
    return out


def _verdict(
    world: World, named: str, holder: str | None, param: dict[str, Any] | None, value: str
) -> Verdict:
    """Check's verdict on a Ground fact setting `value` of `param` (None: a tab title) in a piece, named as
    `named`: the skimmers' rule (`skim_refusal`, said first: it refuses a repair's fact too) and the default
    rule (`is_default`), the functions check refuses by."""
    options, default = _signature(param)
    why = skim_refusal(world, named, holder, param, value)
    if why:  # refused for any story, a repair's too
        return Verdict(named, options, default, (_SKIMMED_TAB if param is None else _SKIMMED)[why])
    return Verdict(
        named, options, default, _DEFAULT if param is not None and is_default(param, value) else ""
    )


def _sets_of(
    world: World,
    kind: str,
    ref: str,
    text: str,
    params: list[dict[str, Any]],
    ways: list[tuple[str, str | None]],
) -> list[Sets]:
    """What a `sets` fact in the piece `text` of document `kind:ref` would set: the first option of each
    parameter it names (an option inside another parameter's longer option is not said), with check's verdict
    for each way a story can name the document (`ways`) and each option list (and default) a widget gives the
    parameter — refused where check reads another option of it first in the piece (`stated_option`)."""
    keys: dict[tuple[str, str], None] = {}
    said_by = [(param, option_mentions(text, param, as_written=True)) for param in params]
    spans = [(m.start, m.end) for _, said in said_by for m in said]
    for param, said in said_by:
        said = [
            m
            for m in said
            if not any(a <= m.start and m.end <= b and b - a > m.end - m.start for a, b in spans)
        ]
        if said:
            keys[(str(param.get("paramName")), str(said[0].value))] = None
    found: dict[tuple[str, str], list[Verdict]] = {}
    for name, value in keys:
        verdicts = found.setdefault((name, value), [])
        for param in params:
            if str(param.get("paramName")) != name or value not in [str(o) for o in option_values(param)]:
                continue
            stated = stated_option(text, param)
            if stated is None or str(stated) != value:
                options, default = _signature(param)
                why = (
                    "check reads no option of it here"
                    if stated is None
                    else f"check reads {stated} first in it"
                )
                verdicts += [Verdict(named, options, default, why) for named, _ in ways]
                continue
            verdicts += [_verdict(world, named, holder, param, value) for named, holder in ways]
    title = quoted(text) if re.search(r"\btabs?\b", text, re.I) else None
    if title:
        found[("tab", title)] = [_verdict(world, named, holder, None, title) for named, holder in ways]
    return [Sets(param, value, verdicts) for (param, value), verdicts in found.items()]


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
        ways = routes(world, kind, ref)
        list_word = "workflow" if kind == "skill" else "list"
        for piece in offered(text, list_word):
            flat = _flat(piece.text)
            item = Groundable(kind, ref, file, piece.position, piece.text)
            item.planted = [p.phrase for p in planted if _flat(p.phrase) in flat]
            item.used_by = [who for _, _, fact, who in uses if _flat(fact) in flat]  # it lives in one place
            item.sets = _sets_of(world, kind, ref, piece.text, params, ways)
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
