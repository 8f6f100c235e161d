"""What a world's documents offer a story to ground in: every piece a request can point at, where it is, and
which personas already ground a fact there (`taskforge world show --facts`).

A new role reads this instead of `factcheck/` and the world's front matter: a fact any of these pieces holds
can be a story's `facts.governance.fact` (with the piece's document as its source), planted or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from simulator import World

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

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "source": self.ref,
            "file": self.file,
            "position": self.position,
            "text": self.text,
            "planted": self.planted,
            "used_by": self.used_by,
        }


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
    for kind, ref, file, text, planted in _documents(world):
        list_word = "workflow" if kind == "skill" else "list"
        for piece in offered(text, list_word):
            flat = _flat(piece.text)
            item = Groundable(kind, ref, file, piece.position, piece.text)
            item.planted = [p.phrase for p in planted if _flat(p.phrase) in flat]
            item.used_by = [who for _, _, fact, who in uses if _flat(fact) in flat]  # it lives in one place
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
