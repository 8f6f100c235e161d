"""One story read at one level: what the level's request says, and what it hides.

Seeding, planning and wording all ask the same questions of the facts (which values does the prompt state for a
target, which parameter does the Ground fact set, what must the prompt never say); they are answered here once.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from certify import HiddenValue
from simulator import BackendFixture, WidgetDef, value_allowed

from ...factcheck import ResolvedStory, ResolvedTarget, between, listed_fits, second_view
from ...factcheck import value_text as said_as_text
from .context import AuthorContext, AuthoringError
from .evalblock import record


@lru_cache(maxsize=8192)
def word_pattern(value: str, flags: int = 0) -> re.Pattern[str]:
    """`value` as a word (not inside another word or a hyphenation), as `certify.states_value` reads it, compiled
    once: the rule author asks it of every catalog name for every level, thousands of patterns that would flush
    the `re` module's own cache (512 entries) and every constant pattern with them."""
    return re.compile(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", flags)


def states_name(text: str, name: str) -> bool:
    """`certify.states_value(text, name, any_case=True)`, with the name's pattern compiled once."""
    return bool(name.strip()) and word_pattern(name, re.I).search(text) is not None


def pick(options: list[str], *keys: Any) -> str:
    """One of `options`, drawn by a hash of `keys` (the same keys always draw the same option)."""
    if not options:
        return ""
    digest = hashlib.sha256("|".join(str(k) for k in keys).encode()).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


@dataclass(frozen=True)
class Level:
    """Level `number` (0 Execute … 4 Compose) of the context's story."""

    ctx: AuthorContext
    number: int
    # which order of its rules a policy note the level seeds takes (0: the story's drawn order; k: rotated by k)
    draw: int = 0

    @property
    def story(self) -> ResolvedStory:
        return self.ctx.story

    @property
    def slug(self) -> str:
        return self.ctx.story.story.slug

    @property
    def dash(self) -> str:
        return self.ctx.story.facts.dashboard

    @property
    def kind(self) -> str:
        return self.ctx.story.kind

    @property
    def lived(self) -> bool:
        """Ground and Compose work on a lived-in board (a twin, furniture, a prior note)."""
        return self.number >= 3

    @property
    def first(self) -> ResolvedTarget:
        """The target the levels climb on."""
        return self.ctx.story.targets[0]

    @property
    def grounded_key(self) -> str | None:
        """The target parameter the Ground fact sets (None when it sets the tab's title, or nothing)."""
        sets = self.story.governance.sets
        return sets if sets not in (None, "tab") else None

    def uuid(self, role: str) -> str:
        """The uuid of what the level seeds in `role` (stable across rounds and runs)."""
        keys = (self.ctx.persona.slug, self.slug, role)
        return "w_" + hashlib.sha256("|".join(keys).encode()).hexdigest()[:4]

    # -- the world, as the story's setup connects it -------------------------------------------------------
    def fixture(self, origin: str) -> BackendFixture | None:
        """The connected backend serving `origin`."""
        return self.ctx.world.fixture_of(origin, self.ctx.backends)

    def widget_def(self, origin: str, widget_id: str) -> WidgetDef:
        fixture = self.fixture(origin)
        if fixture is None or widget_id not in fixture.catalog.widgets:
            raise AuthoringError(
                f"{self.slug} level{self.number}: no backend of the setup ({', '.join(self.ctx.backends)}) "
                f"serves '{widget_id}' from origin '{origin}'; connect the backend that serves it"
            )
        return fixture.catalog.widgets[widget_id]

    def target_setting(self, key: str) -> ResolvedTarget:
        """The first target with a graded value of parameter `key`."""
        found = next((t for t in self.story.targets if key in t.params), None)
        if found is None:
            raise AuthoringError(
                f"{self.story.story.file}: no target of the story has a graded value of '{key}'; give the "
                f"parameter a value in facts.params or a target's params"
            )
        return found

    # -- what the request says ----------------------------------------------------------------------------
    def said(self, t: ResolvedTarget, level: int | None = None) -> dict[str, Any]:
        """The values the prompt states for a target (at this level, or another): all its parameters, except at a
        Find repair whose full set of values no other widget takes, or whose full set leaves it the first or
        the last listed of the widgets of its app that take them while the values to change do not — there
        only the values to change are said (the rest stand on the placed widget: the graded core is the same),
        so that the values alone do not single the target out, and the board can seat a widget that takes
        them on each side of it in the catalog's order (`seeding._open_sides`: a reader of places then takes
        a look-alike)."""
        at = self.number if level is None else level
        s = self.story
        if (
            at == 1
            and s.kind == "repair"
            and t is s.targets[0]
            and (self._signature_unique(t) or self._changed_between(t))
        ):
            return {k: v for k, v in t.params.items() if k in s.seeded_wrong}
        return t.params

    def _changed_between(self, t: ResolvedTarget) -> bool:
        """Whether the values a repair changes leave `t` listed between widgets of its app that take them, while
        all its values leave it at an end of those that take them (once per world, backends, widget and values,
        as `_signature_unique`)."""
        changed = tuple(k for k in t.params if k in self.story.seeded_wrong)
        key = (
            "authoring:changed_between",
            self.ctx.world.fingerprint,
            tuple(self.ctx.backends),
            t.origin,
            t.widget_id,
            repr(sorted(t.params.items())),
            changed,
        )
        cache = self.ctx.world.cache
        if key not in cache:
            backends = list(self.ctx.backends)
            cache[key] = (
                bool(changed)
                and len(changed) < len(t.params)
                and not between(listed_fits(self.ctx.world, t, backends), t.widget_id)
                and between(listed_fits(self.ctx.world, t, backends, changed), t.widget_id)
            )
        return bool(cache[key])

    def _signature_unique(self, t: ResolvedTarget) -> bool:
        """Whether no other widget of the target's app takes every value of the target. Asked for every value the
        wording says, so answered once per world, backends, widget and values (a world is immutable: the answer
        lives in its cache, keyed by its fingerprint too, as a world derived with parts replaced has its own)."""
        try:
            values = json.dumps(t.params, sort_keys=True)
        except (TypeError, ValueError):
            return self._signature_unique_now(t)
        world = self.ctx.world
        key = (
            "authoring:signature_unique",
            world.fingerprint,
            tuple(self.ctx.backends),
            t.origin,
            t.widget_id,
            values,
        )
        if key not in world.cache:
            world.cache[key] = self._signature_unique_now(t)
        return bool(world.cache[key])

    def _signature_unique_now(self, t: ResolvedTarget) -> bool:
        fixture = self.fixture(t.origin)
        return fixture is not None and not any(
            wid != t.widget_id
            and all((p := d.param(k)) is not None and value_allowed(p, v) for k, v in t.params.items())
            for wid, d in fixture.catalog.widgets.items()
        )

    def shared_params(self) -> dict[str, Any] | None:
        """The parameter set when every target shares it (said once for all), else None."""
        targets = self.story.targets
        sets = [self.said(t) for t in targets if t.params]
        if len(sets) == len(targets) and all(p == sets[0] for p in sets):
            return sets[0]
        return None

    def target_names(self, describe: bool, hint: str | None = None) -> list[str]:
        """How the prompt names each target. At Find the first target goes by the find hint, and so does every
        other target that is the same catalog widget (with other parameters): naming one of them would name the
        hidden widget."""
        t0 = self.first
        return [
            (hint or self.story.find_hint)
            if describe and (t.origin, t.widget_id) == (t0.origin, t0.widget_id)
            else t.name
            for t in self.story.targets
        ]

    @property
    def compare(self) -> tuple[str, Any] | None:
        """At Derive, the rival rule the request also asks for, as (phrase, value): a second view of the carried
        target on the value that rule sets (`factcheck.second_view`, which `check` asks too). None at other
        levels."""
        s = self.story
        if self.number != 2:
            return None
        return second_view(s.story, s.policy_doc, s.targets[s.carried_target], s.carried_key, s.carried_value)

    # -- what it hides ------------------------------------------------------------------------------------
    def hidden(self) -> list[dict[str, Any]]:
        """meta.hidden: what the level withholds from its prompt."""

        def value(kind: str, text: str, **source: str) -> dict[str, Any]:
            return record(HiddenValue, "meta.hidden entry", kind=kind, value=text, **source)

        if self.number == 1:
            pointer = self.story.find_pointer
            if pointer is not None and pointer.twins:
                # an instance among twins of the target's widget: what the level hides is the instance, told
                # apart by the values it is seeded on (the pointer's entry says them)
                wrong = self.story.seeded_wrong
                instance = {k: wrong[k] for k, _ in pointer.twins[0] if k in wrong}
                return [
                    record(
                        HiddenValue,
                        "meta.hidden entry",
                        kind="target",
                        value=self.first.name,
                        source=f"note:{pointer.note}",
                        instance=instance,
                    )
                ]
            if pointer is not None:
                # found by the planted pointer: the counterfactual copy swaps what the pointer names
                return [value("target", self.first.name, source=f"note:{pointer.note}")]
            return [value("target", self.first.name)]
        if self.number == 2:
            out = [value("carried", said_as_text(self.story.carried_value))]
            if self.compare is not None:
                out.append(value("carried", said_as_text(self.compare[1])))
            return out
        if self.lived:
            gov = self.story.governance
            out = [value("planted", gov.phrase, source=gov.source)]
            if gov.sets is not None:
                out.append(value("carried", said_as_text(gov.value)))
            return out
        return []

    def hidden_values(self) -> set[str]:
        """Values the level must not say anywhere in its prompt."""
        return {h["value"] for h in self.hidden() if h["kind"] != "target"}
