"""How alike prompts are, measured two ways.

- Same-level trigram similarity: the mean word-trigram Jaccard between same-level prompts of different stories.
  Published agent-authored tasks of the source benchmark score 0.035; the rule author aims at ≤ 0.10.
- Rotation-aware: a rule author that rotates a few phrasings can score well on raw trigrams (the entities differ)
  while every prompt is one of four sentences. So each prompt is reduced to its skeleton — entities (names of
  widgets, apps, dashboards, values, documents, numbers, quoted titles) and the persona's voice phrases masked —
  and two figures are taken over a taskset: the nearest-neighbour skeleton similarity (for each prompt, its most
  similar same-level prompt of another story; mean over prompts, target ≤ 0.15) and the clause inventory (each
  skeleton cut into clauses: how often the most reused clause recurs, target ≤ 4, and the entropy of the
  clause distribution in bits).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from certify import Task
    from simulator import World

    from .sources import Voice

TARGET = 0.10
# the same-level trigram similarity of the source benchmark's published agent-authored tasks: the shipped
# taskset's must not be above it
SOURCE_TRIGRAM = 0.035
SKELETON_TARGET = 0.15
MAX_CLAUSE_REUSE = 4
ENTITY, VOICE = "⟨e⟩", "⟨v⟩"
_NUMBER = re.compile(r"(?<![\w⟨])[-+]?\d[\d,.%]*\w*")
_QUOTED = re.compile(r"[\"“][^\"”]{1,60}[\"”]")
_CLAUSE = re.compile(r"[.;:!?—–()]+|,\s+(?:then|and then|plus|but)\b")
MIN_CLAUSE_WORDS = 3


def trigrams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9'⟨⟩]+", text.lower())
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def overlap(a: set[Any], b: set[Any], when_empty: float = 0.0) -> float:
    """The one similarity measure (Jaccard: shared over all) of two sets of words, trigrams or terms."""
    union = a | b
    return len(a & b) / len(union) if union else when_empty


def jaccard(a: str, b: str) -> float:
    """How alike two prompts read: the overlap of their word trigrams."""
    return overlap(trigrams(a), trigrams(b))


def same_level_similarity(prompts: Iterable[tuple[str | None, str, str]]) -> dict[str, float]:
    """Mean pairwise similarity per level, over (story, level, prompt) triples; pairs of one story are skipped.
    The key "all" holds the mean over every pair."""
    by_level: dict[str, list[tuple[str | None, str]]] = {}
    for story, level, prompt in prompts:
        by_level.setdefault(level, []).append((story, prompt))
    out: dict[str, float] = {}
    every: list[float] = []
    for level, items in sorted(by_level.items()):
        scores = [jaccard(a, b) for (sa, a), (sb, b) in itertools.combinations(items, 2) if sa != sb]
        if scores:
            out[level] = sum(scores) / len(scores)
            every += scores
    out["all"] = sum(every) / len(every) if every else 0.0
    return out


@dataclass(frozen=True)
class Masks:
    """What a skeleton hides: entity names and values, and the persona's voice phrases (the longest phrase wins
    where two overlap, so an alias inside a client's full name does not split it); a story's own sentences are
    left out (they are the story's, said at each of its levels, not the author's clauses)."""

    entities: frozenset[str] = frozenset()
    voice: frozenset[str] = frozenset()
    owned: frozenset[str] = frozenset()  # the stories' own sentences, left out of the skeleton altogether

    def skeleton(self, prompt: str) -> str:
        for sentence in self.owned:
            prompt = prompt.replace(sentence, " ")
        text = _QUOTED.sub(ENTITY, prompt)
        pattern = _pattern(self.entities | self.voice)
        if pattern is not None:
            voice = {v.casefold() for v in self.voice} - {e.casefold() for e in self.entities}
            text = pattern.sub(lambda m: VOICE if m.group(0).casefold() in voice else ENTITY, text)
        text = _NUMBER.sub(ENTITY, text)
        text = re.sub(rf"(?:{re.escape(ENTITY)}[\s,'s]*(?:and\s+|&\s+)?)+{re.escape(ENTITY)}", ENTITY, text)
        return " ".join(text.split()).lower()


_PATTERNS: dict[frozenset[str], re.Pattern[str] | None] = {}


def _pattern(phrases: frozenset[str]) -> re.Pattern[str] | None:
    if phrases not in _PATTERNS:
        ordered = sorted({p.strip() for p in phrases if len(p.strip()) >= 2}, key=len, reverse=True)
        _PATTERNS[phrases] = (
            re.compile(r"(?<![\w])(?:" + "|".join(re.escape(p) for p in ordered) + r")(?![\w])", re.I)
            if ordered
            else None
        )
    return _PATTERNS[phrases]


def clauses(skeleton: str) -> list[str]:
    """A skeleton cut at sentence and clause punctuation; pieces of fewer than three words are not clauses."""
    out = []
    for piece in _CLAUSE.split(skeleton):
        piece = " ".join(piece.strip(" ,").split())
        if len(re.findall(r"[a-z']+", piece)) >= MIN_CLAUSE_WORDS:
            out.append(piece)
    return out


@dataclass
class Rotation:
    """The rotation-aware variety of a set of prompts."""

    prompts: int
    nn_similarity: float
    nn_max: float
    clause_max_reuse: int
    clause_entropy: float
    clause_count: int
    most_reused: list[tuple[str, int]] = field(default_factory=list)
    nearest: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.nn_similarity <= SKELETON_TARGET and self.clause_max_reuse <= MAX_CLAUSE_REUSE

    def summary(self) -> str:
        return (
            f"skeleton nearest-neighbour {self.nn_similarity:.3f} (max {self.nn_max:.3f}, target ≤ "
            f"{SKELETON_TARGET}); clauses {self.clause_count}, most reused ×{self.clause_max_reuse} (target ≤ "
            f"{MAX_CLAUSE_REUSE}), entropy {self.clause_entropy:.2f} bits"
        )


def rotation(prompts: Iterable[tuple[str, str, str]], masks: Masks) -> Rotation:
    """Nearest-neighbour skeleton similarity (same level, other stories) and the clause inventory of
    (story, level, prompt) triples."""
    items = [(story, level, masks.skeleton(prompt)) for story, level, prompt in prompts]
    grams = [trigrams(s) for _, _, s in items]
    nearest: list[float] = []
    per_level: dict[str, list[float]] = {}
    for i, (story, level, _) in enumerate(items):
        best = 0.0
        for j, (other, other_level, _) in enumerate(items):
            if j != i and other_level == level and other != story:
                union = grams[i] | grams[j]
                best = max(best, len(grams[i] & grams[j]) / len(union) if union else 0.0)
        nearest.append(best)
        per_level.setdefault(level, []).append(best)
    inventory = Counter(c for _, _, s in items for c in clauses(s))
    total = sum(inventory.values())
    entropy = -sum((n / total) * math.log2(n / total) for n in inventory.values()) if total else 0.0
    return Rotation(
        prompts=len(items),
        nn_similarity=sum(nearest) / len(nearest) if nearest else 0.0,
        nn_max=max(nearest, default=0.0),
        clause_max_reuse=max(inventory.values(), default=0),
        clause_entropy=entropy,
        clause_count=len(inventory),
        most_reused=inventory.most_common(5),
        nearest={level: sum(v) / len(v) for level, v in sorted(per_level.items())},
    )


def masks_for(
    world: World, tasks: Iterable[Task], voices: Iterable[Voice] = (), owned: Iterable[str] = ()
) -> Masks:
    """The entities an agent is told about (every catalog name, app, origin, option value and label, document
    title; the dashboards, tabs, notes, backends and apps of the tasks), the personas' voice phrases and the
    stories' own sentences (`owned`: each story's purpose and deadline, said at its every level by design, as a
    persona's phrases are — what the measure looks for is the author's clauses recurring, not a story's)."""
    names: set[str] = set()
    for fixture in world.backends.values():
        names.add(fixture.origin)
        for app in fixture.catalog.apps:
            names.add(str(app.get("name") or ""))
        for widget in fixture.catalog.widgets.values():
            names.add(widget.name)
            names.add(str(widget.definition.get("category") or ""))
            for param in widget.params:
                for option in param.get("options") or []:
                    if isinstance(option, dict):
                        names.update({str(option.get("label") or ""), str(option.get("value") or "")})
                    else:
                        names.add(str(option))
    names.update(s.name for s in world.skills.values())
    names.update(r.title for r in world.resources.values())
    names.update(p.name.replace("_", " ") for p in world.prompts.values())
    for task in tasks:
        setup = task.setup
        names.add(setup.default_selected_dashboard or "")
        for dash in setup.initial_state.seeded_dashboards():
            names.add(dash.name)
            names.update(t.name or "" for t in dash.tabs or [])
            names.update(g.name or "" for g in dash.generated_widgets)
        names.update(g.name_contains or "" for g in task.eval.required_generated_widgets)
        names.update(task.eval.required_tab_names)
        for step in task.eval.required_tools:
            for key in ("name", "app_name", "dashboard_name"):
                if isinstance(step.args.get(key), str):
                    names.add(step.args[key])
        for d in task.eval.required_widget_defs:
            names.add(d.backend_name)
            names.update(str(v) for v in d.expect.values() if isinstance(v, str))
    voice: set[str] = set()
    for v in voices:
        voice.update(v.openers + v.deadlines + v.signoffs + v.note_words)
        voice.update(v.aliases.values())
        voice.update(v.period_names.values())
    return Masks(
        frozenset(n for n in names if n and len(n) >= 2),
        frozenset(voice),
        frozenset(o for o in owned if o.strip()),
    )
