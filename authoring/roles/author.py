"""The author role: one story's facts and its persona in, a task for one level out.

Two drivers sit behind the `AuthorDriver` protocol. The rule driver (the embedded default, deterministic, no
network) compiles the facts into the five levels and builds each level's reference by planning against the
simulator: it performs the reference's calls in a real episode and reads back what they return (the rows a note
must record, the id a new backend receives). Its requests are worded by authoring/phrasing.py. The levels go
deeper than their prompts: Find seeds a look-alike a signature cannot tell from the target, Derive resolves in
the document that defines the policy (a seeded note, or a resource), Ground sets a parameter or the tab's title
from a fact read in its source (followed through a reference when the source points elsewhere) on a lived-in
board with a twin to leave alone and a second view to repair, and Compose keys the table it builds on the value
Ground found. The LLM driver writes the same contract as one model session per story: it inspects the catalog,
rows, skills and resources in fresh episodes of the story's setup and hands each level in with `submit_level`
(whose parameter is the task file's JSON Schema), which runs the same parse and gates the pipeline runs, so the
model sees every gate's verdict and can fix the task before the pipeline does. The conversation is appended to
`history` as plain message dicts, so the next level and every feedback round continue the same session, across a
checkpoint and a resume. Either way the gates decide, not the author.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import jinja2
import yaml

from certify.agents.parsing import parse_arguments
from certify.agents.retrieval import BM25, terms
from certify.gates import certify_task, leaked_values
from certify.grader.match import numbers_in, text_contains
from certify.model_client import Completion
from certify.shortcuts import run_battery
from certify.task import LEVEL_NAMES, LEVELS, Task, TaskFileError, parse_task
from simulator import TOOL_NAMES, SetupError, Workspace, World
from simulator.params import value_allowed
from simulator.slug import slugify
from simulator.workspace import INDEX_URI
from simulator.world import WidgetDef

from ..factcheck import STEP, ResolvedStory, ResolvedTarget
from ..factcheck import value_text as _value
from ..failures import RoleFailure
from ..phrasing import MAX_PROMPT_WORDS, Ask, Build, Ground, Phrasing
from ..sources import Persona
from .llm import EVIDENCE, Endpoint, clip

SLACK_TURNS = 3
MAX_PHRASINGS = 8
MAX_CONTRASTS = 5
FIND_DRAWS = 3
MAX_DISTRACTORS = 24
SEED_W, SEED_H, NOTE_H = 20, 14, 8


class AuthoringError(Exception):
    """The author cannot produce the level (a fact the level needs is missing)."""


@dataclass
class AuthorContext:
    """What an author session works from; everything in it is plain data or the (immutable) world."""

    world: World
    persona: Persona
    story: ResolvedStory
    baseline: str
    backends: list[str]
    skills: list[str]
    siblings: tuple[str, ...] = ()
    defaults: dict[str, Any] | None = None


@dataclass
class Draft:
    task: dict[str, Any]
    notes: list[str] = field(default_factory=list)


class AuthorDriver(Protocol):
    name: str

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        """Write the task of `level`; `feedback` holds gate results and review flags from earlier rounds, and
        `history` the session so far (the driver appends to it; it must stay JSON-serialisable)."""
        ...


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
_ENV.filters["ucfirst"] = lambda text: text[:1].upper() + text[1:]


def render(template: str, **variables: Any) -> str:
    return _compiled(template).render(**variables)


@lru_cache(maxsize=512)
def _compiled(template: str) -> jinja2.Template:
    """Compiling dominated rendering: the same skill templates are rendered for every level and round."""
    return _ENV.from_string(template)


def _pick(options: list[str], *keys: Any) -> str:
    if not options:
        return ""
    digest = hashlib.sha256("|".join(str(k) for k in keys).encode()).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


def _uuid(*keys: str) -> str:
    return "w_" + hashlib.sha256("|".join(keys).encode()).hexdigest()[:4]


def _label(param: dict[str, Any] | None, key: str) -> str:
    """How a person names a parameter or column: its declared label when it has one ("Event Type" → "event
    type"), else the key with underscores read as spaces; acronyms keep their case."""
    label = (
        str((param or {}).get("label") or (param or {}).get("headerName") or key).replace("_", " ").strip()
    )
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in label.split())


def where_phrase(where: str) -> str:
    """Turn a planted phrase's location ("the last step of its workflow (how the pack opens)") into what a
    person would ask to record ("what the last step of its workflow says about how the pack opens")."""
    match = re.match(r"(.*?)\s*\((.*)\)\s*$", where)
    if match:
        return f"what {match.group(1)} says about {match.group(2)}"
    return where if where.startswith("what ") else f"what {where} says"


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _nth(name: str, index: int) -> str:
    """One of several instances of a named target, by position ("the second holdings book")."""
    ordinal = ("first", "second", "third", "fourth")[index]
    bare = re.sub(r"^(?:the|an?)\s+", "", name, flags=re.I)
    return f"the {ordinal} {bare}"


class RuleAuthor:
    """Deterministic compilation of facts into levels (the embedded default)."""

    name = "rules"

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        history.append({"level": level, "feedback": list(feedback)})
        return Draft(_Compiler(ctx, level).compile())


class _Compiler:
    def __init__(self, ctx: AuthorContext, level: int) -> None:
        self.ctx = ctx
        self.level = level
        self.s = ctx.story
        self.f = ctx.story.facts
        self.slug = ctx.story.story.slug
        self.voice = ctx.persona.voice
        self.dash = self.f.dashboard
        self.steps: list[dict[str, Any]] = []
        self.seeds: list[dict[str, Any]] = []
        self.generated_seeds: list[dict[str, Any]] = []
        self.evals: dict[str, Any] = {}
        self.ws: Workspace | None = None
        self.attempt = 0
        self.draw = 0
        self.contrast = ""

    # -- phrasing -----------------------------------------------------------------------------------------
    def origin_phrase(self, t: ResolvedTarget) -> str:
        return f"{t.origin}'s {t.app}" if t.app else t.origin

    def target_names(self, describe: bool) -> list[str]:
        """How the prompt names each target. At Find the first target goes by the find hint, and so does every
        other target that is the same catalog widget (with other parameters): naming one of them would name the
        hidden widget."""
        t0 = self.s.targets[0]
        return [
            self.described() if describe and (t.origin, t.widget_id) == (t0.origin, t0.widget_id) else t.name
            for t in self.s.targets
        ]

    def described(self) -> str:
        """The Find level's description of the first target (its contrast follows where it comes from, so the
        description itself stays the phrase the request describes the widget by)."""
        return self.f.find_hint

    def said(self, t: ResolvedTarget, level: int | None = None) -> dict[str, Any]:
        """The values the prompt states for a target (at this level, or another): all its parameters, except at a
        Find repair whose full set of values no other widget takes — there only the values to change are said
        (the rest stand on the placed widget), so that the values alone do not single the target out."""
        at = self.level if level is None else level
        if at == 1 and self.s.kind == "repair" and t is self.s.targets[0] and self._signature_unique(t):
            return {k: v for k, v in t.params.items() if k in self.s.seeded_wrong}
        return t.params

    def _signature_unique(self, t: ResolvedTarget) -> bool:
        fixture = next(
            (
                fx
                for b in self.ctx.backends
                if (fx := self.ctx.world.backend(b)) is not None and fx.origin == t.origin
            ),
            None,
        )
        return fixture is not None and not any(
            wid != t.widget_id
            and all((p := d.param(k)) is not None and value_allowed(p, v) for k, v in t.params.items())
            for wid, d in fixture.catalog.widgets.items()
        )

    def shared_params(self) -> dict[str, Any] | None:
        """The parameter set when every target shares it (said once for all), else None."""
        sets = [self.said(t) for t in self.s.targets if t.params]
        if len(sets) == len(self.s.targets) and all(p == sets[0] for p in sets):
            return sets[0]
        return None

    # -- the plan -----------------------------------------------------------------------------------------
    def compile(self) -> dict[str, Any]:
        level, kind = self.level, self.s.kind
        lived = level >= 3
        self.tab_id, self.tab_name = self.s.tab_id, self.s.tab_name
        self._seed_dashboard(lived)
        setup = {
            "workspace_baseline": self.ctx.baseline,
            "workspace_backends": list(self.ctx.backends),
            "workspace_skills": list(self.ctx.skills),
            "default_selected_dashboard": self.dash,
            "allowed_tools": list(TOOL_NAMES),
            "initial_state": {
                "dashboard": {
                    "name": self.dash,
                    "activate": False,
                    "tabs": [{"id": self.tab_id, "name": self.tab_name}],
                    "widgets": self.seeds,
                    "generated_widgets": self.generated_seeds,
                }
            },
        }
        if not self.generated_seeds:
            setup["initial_state"]["dashboard"].pop("generated_widgets")
        self.ws = Workspace.start(self.ctx.world, setup)
        self.step("get_workspace_snapshot", {}, optional=True)
        if lived:
            self._read_source()
        build = self._build() if level == 4 else None
        for origin in dict.fromkeys(t.origin for t in self.s.targets):
            self.step("list_available_widgets", {"origin": origin}, optional=True)
        for t in {(t.origin, t.widget_id): t for t in self.s.targets}.values():
            self.step("get_widget_schema", {"origin": t.origin, "widget_id": t.widget_id}, optional=True)
        if level == 2:
            doc = self.s.policy_doc
            if doc is not None and doc.kind == "resource":
                # Derive resolves the phrase where the world defines it: the index, then the defining resource.
                if INDEX_URI in self.ctx.world.resources:
                    self.step("read_workspace_resource", {"uri": INDEX_URI}, optional=True)
                self.step("read_workspace_resource", {"uri": doc.ref}, optional=True)
            t = self.s.targets[self.s.carried_target]
            self.step(
                "get_params_options",
                {"origin": t.origin, "widget_id": t.widget_id, "param_name": self.s.carried_key},
                optional=True,
            )
        if lived:
            # what an agent checks before Ground's work: the options of the parameter its fact sets, and the
            # schema of the second view it repairs
            if self.grounded_key is not None:
                t = next(t for t in self.s.targets if self.grounded_key in t.params)
                self.step(
                    "get_params_options",
                    {"origin": t.origin, "widget_id": t.widget_id, "param_name": self.grounded_key},
                    optional=True,
                )
            if self.fix is not None and self.furniture is not None:
                self.step(
                    "get_widget_schema",
                    {"origin": self.furniture[2], "widget_id": self.furniture[0]},
                    optional=True,
                )
        rows_by_target = self._main_actions(kind)
        if lived:
            self._retitle()
        note_text = self._notes(kind, rows_by_target, lived)
        if build is not None:
            self.step(
                "manage_apps",
                {
                    "operation": "instantiate",
                    "backend_id": build["backend_id"],
                    "app_name": build["app"],
                    "dashboard_name": build["app"],
                    "activate": False,
                },
                outcome=True,
            )
        self._finish_required_widgets()
        hidden = self._hidden()
        ev: dict[str, Any] = {"required_tools": self.steps}
        ev.update(self.evals)
        ev["judged_dashboard"] = self.dash
        ev["max_unrequested_widgets"] = 0
        ev["trace_checks"] = {"ids_known_from": "any_result"}
        ev["max_turns"] = len(self.steps) + SLACK_TURNS
        task = {
            "id": f"{self.slug}_level{level}",
            "difficulty": LEVELS[level],
            "prompt": "",
            "setup": setup,
            "eval": ev,
            "meta": {
                "persona": self.ctx.persona.slug,
                "story": self.slug,
                "level": level,
                "level_name": LEVEL_NAMES[LEVELS[level]],
                "hidden": hidden,
                "authored_by": "rules",
            },
        }
        # At Find, the description's contrast is a sibling a word matcher takes for the target; of the
        # candidates (each in a few wordings: the words around the description move a word matcher too), the
        # first that leaves no shortcut agent passing is kept (the gates would refuse the others).
        trials = [(c, d) for c in self._contrasts() for d in range(FIND_DRAWS)] if level == 1 else [("", 0)]
        for contrast, draw in trials:
            self.contrast, self.draw = contrast, draw
            task["prompt"] = self._phrase(kind, note_text, build, task)
            if level != 1 or not any(
                r.passed
                for r in run_battery(
                    self.ctx.world, parse_task(task, f"{task['id']}.json", self.ctx.defaults)
                )
            ):
                break
        return task

    def _phrase(self, kind: str, note_text: str, build: dict[str, Any] | None, task: dict[str, Any]) -> str:
        """The prompt. A draw whose wording happens to say a hidden value ("the open dashboard" when the hidden
        status is Open) gives way to another draw, and so does one longer than a single clear ask reads (the
        shortest draw is kept when none fits)."""
        self.attempt = 0
        prompt = self._prompt(kind, note_text, build)
        fits: list[str] = []
        while self.attempt < MAX_PHRASINGS:
            if not leaked_values(
                self.ctx.world,
                parse_task({**task, "prompt": prompt}, f"{task['id']}.json", self.ctx.defaults),
            ):
                if len(prompt.split()) <= MAX_PROMPT_WORDS:
                    return prompt
                fits.append(prompt)
            self.attempt += 1
            prompt = self._prompt(kind, note_text, build)
        return min(fits, key=lambda p: len(p.split())) if fits else prompt

    def step(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        optional: bool = False,
        outcome: bool = False,
        graded: list[str] | None = None,
    ) -> dict[str, Any]:
        """Add a reference step and perform it in the planning episode; a failing step is an authoring bug.

        `optional` marks discovery an agent may skip; `outcome` marks work whose effect the state checks grade
        (any route to the same state passes); otherwise the call itself is graded on `graded` (a method the
        level is about, such as reading the governing skill)."""
        assert self.ws is not None
        envelope = self.ws.call(tool, args).to_dict()
        if not envelope["ok"]:
            raise AuthoringError(
                f"{self.slug} level{self.level}: planned {tool} fails: {envelope['message']}"
            )
        entry: dict[str, Any] = {"tool": tool, "args": args}
        if optional:
            entry["optional"] = True
        elif outcome:
            entry["outcome"] = True
        elif graded is not None:
            entry["graded_args"] = graded
        self.steps.append(entry)
        return envelope

    # -- seeded state -------------------------------------------------------------------------------------
    def _slot(self, index: int, h: int = SEED_H, w: int = SEED_W) -> dict[str, int]:
        return {"x": 0 if index % 2 == 0 else SEED_W, "y": SEED_H * (index // 2), "w": w, "h": h}

    def _seed(
        self, role: str, t: ResolvedTarget | None, widget_id: str, origin: str, params: dict[str, Any]
    ) -> str:
        uuid = _uuid(self.ctx.persona.slug, self.slug, role)
        self.seeds.append(
            {
                "origin": origin,
                "widget_id": widget_id,
                "widget_uuid": uuid,
                "tab_id": self.tab_id,
                "data_args": dict(params),
                "layout": self._slot(len(self.seeds)),
            }
        )
        return uuid

    def _other_value(self, t: ResolvedTarget, key: str, avoid: set[str]) -> Any:
        param = t.widget.param(key) or {}
        for opt in param.get("options") or []:
            value = opt.get("value") if isinstance(opt, dict) else opt
            if str(value) not in avoid:
                return value
        return None

    def _twin_params(self) -> dict[str, Any] | None:
        t0 = self.s.targets[0]
        twin = dict(t0.params)
        grounded = self.grounded_key
        keys = list(self.s.seeded_wrong) if self.s.kind == "repair" else [self.s.carried_key]
        if grounded is not None and grounded in t0.params:
            keys = [grounded, *(k for k in keys if k != grounded)]
        keys += [k for k in t0.params if k not in keys]
        changed = False
        for key in keys:
            if key not in twin:
                continue
            avoid = {
                str(t.params.get(key))
                for t in self.s.targets
                if (t.origin, t.widget_id) == (t0.origin, t0.widget_id)
            } | {str(self.s.seeded_wrong.get(key, t0.params.get(key)))}
            other = self._other_value(t0, key, avoid)
            if other is not None:
                twin[key] = other
                changed = True
                if self.s.kind != "repair":
                    break
        return twin if changed else None

    def _widget_def(self, origin: str, widget_id: str) -> WidgetDef:
        fixture = next(
            fx
            for b in self.ctx.backends
            if (fx := self.ctx.world.backend(b)) is not None and fx.origin == origin
        )
        return fixture.catalog.widgets[widget_id]

    def _decoy(self) -> tuple[str, str, dict[str, Any]] | None:
        """A widget whose parameters take the values the Find prompt states (all of them if any does; one of the
        target's app first), seeded on another cut at every level (the graded core stays constant): with it on the
        dashboard, "the one placed widget that accepts the stated values" is no longer the target, so finding the
        target takes the description (or its name)."""
        t0 = self.s.targets[0]
        fixture = next(
            (
                fx
                for b in self.ctx.backends
                if (fx := self.ctx.world.backend(b)) is not None and fx.origin == t0.origin
            ),
            None,
        )
        if fixture is None:
            return None
        taken = {t.widget_id for t in self.s.targets}
        app = t0.widget.definition.get("category")
        best: tuple[int, bool, str] | None = None
        for wid, definition in fixture.catalog.widgets.items():
            if wid in taken:
                continue
            fit = sum(
                1
                for k, v in self.said(t0, level=1).items()
                if (p := definition.param(k)) is not None and value_allowed(p, v)
            )
            candidate = (fit, definition.definition.get("category") == app, wid)
            if fit and (best is None or candidate > best):
                best = candidate
        if best is None:
            return None
        definition = fixture.catalog.widgets[best[2]]
        params: dict[str, Any] = {}
        for p in definition.option_params:
            name = str(p.get("paramName"))
            values = [o.get("value") if isinstance(o, dict) else o for o in p.get("options") or []]
            if name in t0.params:
                own = [
                    o.get("value") if isinstance(o, dict) else o
                    for o in (t0.widget.param(name) or {}).get("options") or []
                ]
                fallback = [self.s.seeded_wrong.get(name), p.get("value"), *own]
                other = next(
                    (
                        v
                        for v in [*values, *([] if values else fallback)]
                        if v is not None and str(v) != str(t0.params[name])
                    ),
                    None,
                )
                if other is not None:
                    params[name] = other
        return definition.widget_id, t0.origin, params

    @property
    def grounded_key(self) -> str | None:
        """The target parameter the Ground fact sets (None when it sets the tab's title, or nothing)."""
        sets = self.s.governance.sets
        return sets if sets not in (None, "tab") else None

    def hidden_values(self) -> set[str]:
        """Values the level must not say anywhere in its prompt."""
        return {h["value"] for h in self._hidden() if h["kind"] != "target"}

    def _furniture_fix(self) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
        """The real repair of a lived-in add or read: the furniture was left on a wrong value of one of its
        parameters (never the one the level grounds, and never saying a hidden value); ("", wrong, right)."""
        assert self.furniture is not None
        wid, _, origin, params = self.furniture
        definition = next(
            fx
            for b in self.ctx.backends
            if (fx := self.ctx.world.backend(b)) is not None and fx.origin == origin
        ).catalog.widgets[wid]
        hidden = self.hidden_values()
        for p in definition.option_params:
            key = str(p.get("paramName"))
            right = params.get(key, p.get("value"))
            if key in (self.grounded_key, self.s.carried_key) or right is None or _value(right) in hidden:
                continue
            wrong = next(
                (
                    v
                    for o in p.get("options") or []
                    if (v := o.get("value") if isinstance(o, dict) else o) is not None
                    and str(v) != str(right)
                    and _value(v) not in hidden
                ),
                None,
            )
            if wrong is not None:
                return "", {key: wrong}, {key: right}
        return None

    def _furniture(self) -> tuple[str, str, str, dict[str, Any]] | None:
        t0 = self.s.targets[0]
        fixture = next(
            (
                self.ctx.world.backend(b)
                for b in self.ctx.backends
                if (fx := self.ctx.world.backend(b)) is not None and fx.origin == t0.origin
            ),
            None,
        )
        if fixture is None:
            return None
        taken = {t.widget_id for t in self.s.targets} | ({self.decoy[0]} if self.decoy else set())
        pool = []
        if t0.app:
            for app in fixture.catalog.apps:
                if app.get("name") == t0.app:
                    for tab in (app.get("tabs") or {}).values():
                        pool += [str(i.get("i")) for i in (tab.get("layout") or []) if isinstance(i, dict)]
        if not pool:
            pool = list(fixture.catalog.widgets)
        pool = [w for w in dict.fromkeys(pool) if w not in taken and w in fixture.catalog.widgets]
        if not pool:
            return None
        if self.s.governance.sets:
            # the furniture gets a real repair at Ground: prefer a view with a parameter Ground does not decide
            fixable = [
                w
                for w in pool
                if any(
                    str(q.get("paramName")) not in (self.grounded_key, self.s.carried_key)
                    for q in fixture.catalog.widgets[w].option_params
                )
            ]
            pool = fixable or pool
        widget = fixture.catalog.widgets[_pick(sorted(pool), self.slug, "furniture")]
        params: dict[str, Any] = {}
        for p in widget.option_params:
            name = p.get("paramName")
            if name in t0.params and any(
                str(o.get("value") if isinstance(o, dict) else o) == str(t0.params[name])
                for o in p.get("options") or []
            ):
                params[str(name)] = t0.params[name]
            elif p.get("value") is not None:
                params[str(name)] = p["value"]
        return widget.widget_id, widget.name, t0.origin, params

    def _seed_dashboard(self, lived: bool) -> None:
        self.stale: dict[int, str] = {}
        self.stale_args: dict[int, dict[str, Any]] = {}
        self.twin: dict[str, Any] | None = None
        self.furniture: tuple[str, str, str, dict[str, Any]] | None = None
        self.decoy: tuple[str, str, dict[str, Any]] | None = None
        self.prior_note: dict[str, Any] | None = None
        self.fix: tuple[str, dict[str, Any], dict[str, Any]] | None = None
        self.policy_note: dict[str, Any] | None = None
        self.tab_title: str | None = None
        if self.s.kind == "repair":
            for i, t in enumerate(self.s.targets):
                wrong = {**t.params, **(self.s.seeded_wrong if i == 0 else {})}
                key = self.s.carried_key
                if (
                    self.level == 2
                    and i == self.s.carried_target
                    and str(wrong.get(key)) == str(t.params.get(key))
                ):
                    # Derive hides the carried value: the widget left wrong must not already show it.
                    other = self._other_value(t, key, {str(t.params.get(key))})
                    if other is not None:
                        wrong[key] = other
                self.stale[i] = self._seed(f"stale{i}", t, t.widget_id, t.origin, wrong)
                self.stale_args[i] = wrong
            self.decoy = self._decoy()
            if self.decoy is not None:
                wid, origin, params = self.decoy
                self.decoy_uuid = self._seed("decoy", None, wid, origin, params)
        if self.level == 2 and self.s.policy_doc is not None and self.s.policy_doc.kind == "note":
            doc = self.s.policy_doc
            uuid = _uuid(self.ctx.persona.slug, self.slug, "policy-note")
            layout = self._slot(len(self.seeds), NOTE_H)
            self.generated_seeds.append(
                {
                    "widget_type": "note",
                    "widget_uuid": uuid,
                    "name": doc.ref,
                    "data": doc.text,
                    "tab_id": self.tab_id,
                    "layout": layout,
                }
            )
            self.policy_note = {"uuid": uuid, "name": doc.ref, "text": doc.text, "layout": layout}
        if not lived:
            return
        t0 = self.s.targets[0]
        twin = self._twin_params()
        if twin is not None:
            self.twin = {"uuid": self._seed("twin", t0, t0.widget_id, t0.origin, twin), "params": twin}
        self.furniture = self._furniture()
        if self.furniture is not None:
            wid, _, origin, params = self.furniture
            self.fix = self._furniture_fix() if self.s.governance.sets else None
            seeded = {**params, **self.fix[1]} if self.fix else params
            uuid = self._seed("furniture", None, wid, origin, seeded)
            if self.fix is not None:
                self.fix = (uuid, self.fix[1], self.fix[2])
        text = (
            f"Prior pass on {self.dash}: leave the {t0.name} cut to "
            f"{', '.join(_value(v) for v in (twin or t0.params).values())} in place"
            + (f" next to the {self.furniture[1]}" if self.furniture else "")
            + " until the next review."
        )
        uuid = _uuid(self.ctx.persona.slug, self.slug, "prior-note")
        layout = self._slot(len(self.seeds), NOTE_H, SEED_W if len(self.seeds) % 2 else 2 * SEED_W)
        self.generated_seeds.append(
            {
                "widget_type": "note",
                "widget_uuid": uuid,
                "name": f"Prior {self.dash} Note",
                "data": text,
                "tab_id": self.tab_id,
                "layout": layout,
            }
        )
        self.prior_note = {"uuid": uuid, "name": f"Prior {self.dash} Note", "text": text, "layout": layout}

    def _read_source(self) -> None:
        """Ground reads its source — the method the level is about, graded as a call — and, when the fact sits in
        a document the source refers to, that document too. A resource is found through the index first (a step
        an agent that knows the URI may skip)."""
        gov = self.s.governance
        if (gov.kind == "resource" or gov.hop is not None) and INDEX_URI in self.ctx.world.resources:
            self.step("read_workspace_resource", {"uri": INDEX_URI}, optional=True)
        tool, args = gov.read_call()
        self.step(tool, args, graded=list(args))
        if gov.hop is not None:
            self.step("read_workspace_resource", {"uri": gov.hop.uri}, graded=["uri"])

    def _retitle(self) -> None:
        """A Ground fact that names the tab: the dashboard's tab takes that title (its id stays)."""
        gov = self.s.governance
        if gov.sets != "tab":
            return
        self.tab_title = str(gov.value)
        self.step(
            "manage_navigation_bar",
            {"operation": "rename_tabs", "rename_map": {self.tab_id: self.tab_title}},
            outcome=True,
        )

    # -- the work -----------------------------------------------------------------------------------------
    def _main_actions(self, kind: str) -> list[list[Any]]:
        rows: list[list[Any]] = []
        required_widgets = []
        for i, t in enumerate(self.s.targets):
            if kind == "repair":
                # An instance seeded right needs no repair: its update is a step the agent may skip.
                seeded_right = self.stale_args[i] == dict(t.params)
                self.step(
                    "update_widget",
                    {"widget_uuid": self.stale[i], "data_args": dict(t.params)},
                    outcome=not seeded_right,
                    optional=seeded_right,
                )
                required_widgets.append(
                    {
                        "origin": t.origin,
                        "widget_id": t.widget_id,
                        "data_args": dict(t.params),
                        "tab_id": self.tab_id,
                        "max_count": 1,
                    }
                )
            elif kind == "read":
                envelope = self.step(
                    "get_widget_data",
                    {"origin": t.origin, "widget_id": t.widget_id, "data_args": dict(t.params)},
                    optional=True,
                )
                rows.append(list(envelope["data"]["data"]))
                # Opening the view read on the board (once, on the cut read) is a fair way to read it.
                required_widgets.append(
                    {
                        "origin": t.origin,
                        "widget_id": t.widget_id,
                        "data_args": dict(t.params),
                        "tab_id": self.tab_id,
                        "min_count": 0,
                        "max_count": 1,
                    }
                )
            else:
                args: dict[str, Any] = {"origin": t.origin, "widget_id": t.widget_id}
                if t.params:
                    args["data_args"] = dict(t.params)
                self.step("create_widget", args, outcome=True)
                req: dict[str, Any] = {
                    "origin": t.origin,
                    "widget_id": t.widget_id,
                    "tab_id": self.tab_id,
                    "max_count": 1,
                }
                if t.params:
                    req["data_args"] = dict(t.params)
                required_widgets.append(req)
        if self.decoy is not None:
            # The decoy stays exactly as seeded: its parameters as placed, and a stated one it was placed without
            # still absent (None matches only a missing value).
            wid, origin, _ = self.decoy
            assert self.ws is not None
            placed = next(w for w in self.ws.current_dashboard.widgets if w.uuid == self.decoy_uuid)
            declared = {str(p.get("paramName")) for p in self._widget_def(origin, wid).option_params}
            pinned = {k: None for k in self.said(self.s.targets[0], level=1) if k in declared} | dict(
                placed.data_args
            )
            required_widgets.append(
                {
                    "origin": origin,
                    "widget_id": wid,
                    "data_args": pinned,
                    "tab_id": self.tab_id,
                    "max_count": 1,
                }
            )
        if self.fix is not None and self.furniture is not None:
            uuid, _, right = self.fix
            wid, name, origin, params = self.furniture
            self.step("update_widget", {"widget_uuid": uuid, "data_args": dict(right)}, outcome=True)
            self.furniture = (wid, name, origin, {**params, **right})
        if self.level >= 3:
            if self.twin is not None:
                required_widgets.append(
                    {
                        "origin": self.s.targets[0].origin,
                        "widget_id": self.s.targets[0].widget_id,
                        "data_args": self.twin["params"],
                        "tab_id": self.tab_id,
                        "max_count": 1,
                    }
                )
            if self.furniture is not None:
                wid, _, origin, params = self.furniture
                required_widgets.append(
                    {
                        "origin": origin,
                        "widget_id": wid,
                        "data_args": params,
                        "tab_id": self.tab_id,
                        "max_count": 1,
                    }
                )
        if required_widgets:
            self.evals["required_widgets"] = required_widgets
        return rows

    def _record_fields(self, rows: list[list[Any]]) -> list[tuple[str, str]]:
        """(label, value) pairs a read note must carry: the first served row's columns, minus the parameters."""
        t = self.s.targets[0]
        served = rows[0] if rows else []
        if not served or not isinstance(served[0], dict):
            raise AuthoringError(f"{self.slug}: '{t.name}' serves no rows for {t.params}; nothing to record")
        row = served[0]
        wanted = self.f.record or [k for k in row if k not in t.params][:5]
        missing = [k for k in wanted if k not in row]
        if missing:
            raise AuthoringError(
                f"{self.story_file}: facts.record: the served row has no column {missing[0]!r}"
            )
        return [(k, _value(row[k])) for k in wanted]

    @property
    def story_file(self) -> str:
        return self.s.story.file

    def _notes(self, kind: str, rows: list[list[Any]], lived: bool) -> str:
        gens: list[dict[str, Any]] = []
        if self.prior_note is not None:
            gens.append(
                {
                    "widget_type": "note",
                    "name_contains": self.prior_note["name"],
                    "data_contains": [self.prior_note["text"]],
                    "tab_id": self.tab_id,
                }
            )
        if self.policy_note is not None:
            gens.append(
                {
                    "widget_type": "note",
                    "name_contains": self.policy_note["name"],
                    "data_contains": self.policy_note["text"].splitlines(),
                    "tab_id": self.tab_id,
                }
            )
        gov = self.s.governance
        acts = gov.sets is not None
        note_text = ""
        if kind == "read":
            self.fields = self._record_fields(rows)
            name = self.f.note or f"{self.dash} Note"
            body = " | ".join(f"{k}: {v}" for k, v in self.fields)
            contains = [v for _, v in self.fields]
            if lived and not acts:
                body += f". Per the {gov.name}: {gov.phrase}."
                contains.append(gov.phrase)
            self.step(
                "add_generative_widget", {"widget_type": "note", "name": name, "data": body}, outcome=True
            )
            gens.append(
                {
                    "widget_type": "note",
                    "name_contains": name,
                    "data_contains": contains,
                    "must_not_contain": self._distractors(body, lived),
                    "tab_id": self.tab_id,
                }
            )
            note_text = name
        elif lived and not acts:
            name = f"{self.dash} Governance Note"
            body = f"Per the {gov.name}: {gov.phrase}."
            self.step(
                "add_generative_widget", {"widget_type": "note", "name": name, "data": body}, outcome=True
            )
            gens.append(
                {
                    "widget_type": "note",
                    "name_contains": name,
                    "data_contains": [gov.phrase],
                    "must_not_contain": self._distractors(body, lived),
                    "tab_id": self.tab_id,
                }
            )
            note_text = name
        if gens:
            self.evals["required_generated_widgets"] = gens
        if lived:
            self.evals["required_tabs"] = [self.tab_id]
            self.evals["required_tab_names"] = [self.tab_title or self.tab_name]
            pins = [
                {"widget_uuid": s["widget_uuid"], "tab_id": self.tab_id, **s["layout"]}
                for s in self.seeds
                if s["widget_uuid"] not in self.stale.values()
            ]
            pins += [
                {"widget_uuid": g["widget_uuid"], "tab_id": self.tab_id, **g["layout"]}
                for g in self.generated_seeds
            ]
            self.evals["required_layouts"] = pins
        return note_text

    def _distractors(self, body: str, lived: bool) -> list[str]:
        """What a note must not say: the figures other cuts of the target serve (another option of one of its
        parameters) and, at Ground, the other facts planted in the governing source — the values an agent
        that writes every candidate would write. Values the right note also says are never listed."""
        out: list[str] = []
        # Whatever a faithful note could say is never a distractor: the note itself, every row the cut read
        # serves (a note may record them all) and the prompt.
        fair = " ".join([body, self._served_text(), self.f.find_hint or ""])
        nums = numbers_in(fair)

        def keep(value: Any) -> None:
            text = _value(value).strip()
            if len(text) >= 3 and text not in out and not text_contains(fair, text, blob_numbers=nums):
                out.append(text)

        if lived:
            for phrase in self._other_facts():
                keep(phrase)
        if self.s.kind == "read":
            assert self.ws is not None
            t = self.s.targets[0]
            fields = [k for k, _ in self.fields]
            for key in t.params:
                for opt in (t.widget.param(key) or {}).get("options") or []:
                    value = opt.get("value") if isinstance(opt, dict) else opt
                    if str(value) == str(t.params[key]):
                        continue
                    envelope = self.ws.call(
                        "get_widget_data",
                        {"origin": t.origin, "widget_id": t.widget_id, "data_args": {**t.params, key: value}},
                    ).to_dict()
                    served = (envelope.get("data") or {}).get("data") or []
                    for row in served[:1]:
                        for f in fields:
                            if isinstance(row, dict) and f in row:
                                keep(row[f])
        return out[:MAX_DISTRACTORS]

    def _served_text(self) -> str:
        """Every row the read's target serves on the cut read, as text."""
        if self.s.kind != "read":
            return ""
        assert self.ws is not None
        t = self.s.targets[0]
        envelope = self.ws.call(
            "get_widget_data", {"origin": t.origin, "widget_id": t.widget_id, "data_args": dict(t.params)}
        ).to_dict()
        return json.dumps((envelope.get("data") or {}).get("data") or [], default=str)

    def _other_facts(self) -> list[str]:
        """What the governing source says besides the fact the level asks for: its other planted facts, or,
        when it plants none, its other workflow steps (a skill) or sentences (a resource)."""
        gov = self.s.governance
        world = self.ctx.world
        source = {"skill": world.skills, "resource": world.resources, "prompt": world.prompts}.get(
            gov.kind, {}
        ).get(gov.ref)
        if source is None:
            return []
        planted = [p.phrase for p in source.planted if p.phrase != gov.phrase]
        if planted:
            return planted
        text = source.content if gov.kind == "skill" else source.text
        parts = [m[1] for m in STEP.findall(text)] or re.split(r"(?<=[.!?])\s+", text.strip())
        return [
            p.strip().rstrip(".")
            for p in parts
            if gov.phrase.casefold() not in p.casefold() and len(p.split()) >= 3
        ][:6]

    def _build(self) -> dict[str, Any]:
        """Compose builds a backend and app and uses what it built: the table is keyed on the parameter the
        Ground fact set and placed on the dashboard with the value found, or (a fact that titles the tab) the
        app's tab takes the board's new title."""
        b = self.f.build
        gov = self.s.governance
        table_id = slugify(b.table).replace("-", "_")
        app = (
            b.app or (b.backend[: -len(" Service")] if b.backend.endswith(" Service") else b.backend) + " App"
        )
        tab_like = gov.sets == "tab"
        tab_name = str(gov.value) if tab_like else (b.tab or b.table.split()[-1])
        tab_id = slugify(tab_name).replace("-", "_")
        port = 9000 + int(hashlib.sha256(b.backend.encode()).hexdigest(), 16) % 900
        widget: dict[str, Any] = {
            "name": b.table,
            "description": f"Authored {b.table.lower()} for {self.dash}.",
            "endpoint": f"/{slugify(b.table)}",
            "type": "table",
            "gridData": {"w": 40, "h": 10},
        }
        keyed = self.grounded_key
        placed: dict[str, Any] = {}
        if keyed is not None:
            target = next(t for t in self.s.targets if keyed in t.params)
            declared = target.widget.param(keyed) or {}
            widget["params"] = [
                {
                    k: declared[k]
                    for k in ("paramName", "type", "value", "label", "description", "options")
                    if k in declared
                }
            ]
            placed = {keyed: target.params[keyed]}
        widgets = {table_id: widget}
        apps = [
            {
                "name": app,
                "description": f"Authored app for the {self.dash} work.",
                "tabs": {
                    tab_id: {
                        "id": tab_id,
                        "name": tab_name,
                        "layout": [{"i": table_id, "x": 0, "y": 0, "w": 40, "h": 10}],
                    }
                },
            }
        ]
        self.step(
            "read_workspace_resource", {"uri": "openbb://workspace/specs/widgets-json"}, optional=True
        ) if "openbb://workspace/specs/widgets-json" in self.ctx.world.resources else None
        envelope = self.step(
            "manage_backends",
            {
                "operation": "add",
                "name": b.backend,
                "url": f"http://127.0.0.1:{port}",
                "widgets_json": widgets,
                "apps_json": apps,
            },
            outcome=True,
        )
        backend_id = envelope["data"]["backend_id"]
        self.step("manage_apps", {"operation": "list", "backend_id": backend_id}, optional=True)
        self.step("list_available_widgets", {"origin": b.backend}, optional=True)
        create: dict[str, Any] = {"origin": b.backend, "widget_id": table_id}
        if placed:
            create["data_args"] = placed
        self.step("create_widget", create, outcome=True)
        # The ids of what the agent builds are its own choice (the prompt gives names): graded by name.
        definition: dict[str, Any] = {"backend_name": b.backend, "name": b.table, "expect": {"type": "table"}}
        if keyed is not None:
            definition["params_include"] = [{"paramName": keyed}]
        self.evals["required_widget_defs"] = [definition]
        self.evals["required_app_defs"] = [
            {
                "backend_name": b.backend,
                "name_contains": app,
                "tab_names_include": [tab_name],
                "layout_refs_valid": True,
                "no_overlaps": True,
                "widgets_on_tab": [{"tab_name": tab_name, "widget_name": b.table}],
            }
        ]
        self.evals["required_tool_results"] = [
            {"tool": "manage_apps", "data_contains": [app, tab_name, b.backend]}
        ]
        self.built = {
            "origin": b.backend,
            "name": b.table,
            "max_count": 1,
            **({"data_args": placed} if placed else {}),
        }
        return {
            "backend": b.backend,
            "table": b.table,
            "app": app,
            "tab": tab_name,
            "backend_id": backend_id,
            "keyed": keyed,
            "tab_like": tab_like,
        }

    def _contrasts(self) -> list[str]:
        """At Find, what the description is not: the catalog description of a sibling easily taken for the
        target (one that takes the same stated values, and whose words the request's words match best), most
        confusable first. Said in the prompt ("not the view of ..."), it gives a reader what tells the two
        apart, and it makes the request's words point at the sibling, so matching words alone picks wrong."""
        t0 = self.s.targets[0]
        fixture = next(
            (
                fx
                for b in self.ctx.backends
                if (fx := self.ctx.world.backend(b)) is not None and fx.origin == t0.origin
            ),
            None,
        )
        if fixture is None:
            return [""]
        app = t0.widget.definition.get("category")
        taken = {t.widget_id for t in self.s.targets}
        own = set(terms(str(t0.widget.definition.get("description") or "")))
        siblings = [
            d
            for wid, d in fixture.catalog.widgets.items()
            if wid not in taken
            and d.definition.get("category") == app
            and str(d.definition.get("description") or "").strip()
            and _jaccard(own, set(terms(str(d.definition["description"])))) < 0.5
        ]
        if self.decoy is not None and self.decoy[0] in fixture.catalog.widgets:
            placed = fixture.catalog.widgets[self.decoy[0]]
            siblings = [placed] + [d for d in siblings if d is not placed]

        def fit(d: WidgetDef) -> int:
            return sum(
                1 for k, v in self.said(t0).items() if (p := d.param(k)) is not None and value_allowed(p, v)
            )

        query = f"{self.f.find_hint} {t0.widget.definition.get('description') or ''}"
        near = (
            BM25([f"{d.name} {d.definition.get('description')}" for d in siblings]).scores(query)
            if siblings
            else []
        )
        order = sorted(
            range(len(siblings)),
            key=lambda i: (-(i == 0 and self.decoy is not None), -fit(siblings[i]), -near[i]),
        )
        out = []
        for i in order[:MAX_CONTRASTS]:
            text = str(siblings[i].definition["description"]).strip().rstrip(".")
            out.append(f"not the view of {text[:1].lower() + text[1:]}")
        return out or [""]

    def _finish_required_widgets(self) -> None:
        if getattr(self, "built", None):
            self.evals.setdefault("required_widgets", []).insert(0, {**self.built, "tab_id": self.tab_id})

    # -- the prompt ---------------------------------------------------------------------------------------
    def _pairs(self, t: ResolvedTarget, params: dict[str, Any]) -> list[tuple[str, str, str]]:
        """(label, value, how the prompt says it): the carried value at Derive through the policy phrase, the
        grounded value at Ground and Compose not at all."""
        out = []
        for key, value in params.items():
            mode = "stated"
            if self.level == 2 and key == self.s.carried_key:
                mode = "policy"
            elif self.level >= 3 and key == self.grounded_key:
                mode = "ground"
            out.append((_label(t.widget.param(key), key), _value(value), mode))
        return out

    def _ground(self) -> Ground | None:
        gov = self.s.governance
        if self.level < 3 or gov.sets is None:
            return None
        source = gov.mention
        position = gov.position
        where = (
            position.replace(" of its ", f" of {source}'s ", 1)
            if " of its " in position
            else f"the {position[4:]} in {source}"
            if position.startswith("its ")
            else f"{position} of {source}"
        )
        hop_row = None
        if gov.hop is not None:
            held = self.ctx.world.resources.get(gov.hop.uri)
            entry = next((pl for pl in (held.planted if held else ()) if pl.phrase == gov.phrase), None)
            hop_position = entry.where.split(" (")[0] if entry and entry.where else ""
            hop_row = f"the {hop_position[4:]}" if hop_position.startswith("its ") else None
        label = None
        if self.grounded_key is not None:
            t = next(t for t in self.s.targets if self.grounded_key in t.params)
            label = _label(t.widget.param(self.grounded_key), self.grounded_key)
        return Ground(
            source=source,
            where=where,
            where_short=position,
            topic=gov.topic,
            label=label,
            tab=self.tab_name if label is None else None,
            hop_row=hop_row,
        )

    def _prompt(self, kind: str, note_name: str, build: dict[str, Any] | None) -> str:
        level = self.level
        lived = level >= 3
        describe = level == 1
        names = self.target_names(describe)
        groups: list[tuple[list[str], str]] = []
        for t, name in zip(self.s.targets, names, strict=True):
            where = self.origin_phrase(t)
            if groups and groups[-1][1] == where:
                groups[-1][0].append(name)
            else:
                groups.append(([name], where))
        shared = self.shared_params()
        if shared is not None:
            params: list[tuple[str | None, list[tuple[str, str, str]]]] = [
                (None, self._pairs(self.s.targets[0], shared))
            ]
        else:
            params = [
                (
                    name if names.count(name) == 1 else _nth(name, names[:i].count(name)),
                    self._pairs(t, self.said(t)),
                )
                for i, (t, name) in enumerate(zip(self.s.targets, names, strict=True))
                if t.params
            ]
        t0 = self.s.targets[0]
        stale = None
        if kind == "repair" and lived:
            wrong = {**t0.params, **self.s.seeded_wrong}
            stale = [(_label(t0.widget.param(k), k), _value(x)) for k, x in wrong.items()]
        note = None
        if kind == "read":
            columns = {
                c.get("field"): c
                for c in (t0.widget.definition.get("schema_data") or {})
                .get("table", {})
                .get("columnsDefs", [])
                if isinstance(c, dict)
            }
            note = (note_name, [_label(columns.get(k), k) for k, _ in self.fields])
        twin = None
        if lived and self.twin is not None:
            twin = (
                t0.name,
                [(_label(t0.widget.param(k), k), _value(x)) for k, x in self.twin["params"].items()],
            )
        furniture = None
        if self.fix is not None and self.furniture is not None:
            definition = self.furniture
            _, wrong, right = self.fix
            param_of = {str(p.get("paramName")): p for p in (self._furniture_def().option_params)}
            furniture = (
                definition[1],
                [(_label(param_of.get(k), k), _value(v)) for k, v in wrong.items()],
                [(_label(param_of.get(k), k), _value(v)) for k, v in right.items()],
            )
        ask_build = None
        if build is not None:
            label = None
            if build["keyed"] is not None:
                t = next(t for t in self.s.targets if build["keyed"] in t.params)
                label = _label(t.widget.param(build["keyed"]), build["keyed"])
            ask_build = Build(
                backend=build["backend"],
                table=build["table"],
                app=build["app"],
                tab=build["tab"],
                keyed=label,
                tab_like_board=build["tab_like"],
            )
        ask = Ask(
            kind=kind,
            dash=self.dash,
            groups=groups,
            params=params,
            phrase=self.f.policy.phrase,
            stale=stale,
            note=note,
            twin=twin,
            furniture=furniture,
            keep=lived,
            ground=self._ground(),
            build=ask_build,
            hidden=self.hidden_values(),
            contrast=self.contrast if describe else "",
            described=self.described() if describe else "",
        )
        # a rephrasing (after a draw that happened to say a hidden value) draws again from another seed
        redraw = [self.attempt, self.draw] if self.attempt or self.draw else []
        phrasing = Phrasing(self.voice, self.ctx.persona.slug, self.slug, level, *redraw)
        prompt = phrasing.compose(ask)
        if lived and self.s.governance.sets is None:
            prompt += " " + self._legacy_ground(phrasing, kind, note_name)
        return " ".join(prompt.split())

    def _furniture_def(self):
        assert self.furniture is not None
        wid, _, origin, _ = self.furniture
        return next(
            fx
            for b in self.ctx.backends
            if (fx := self.ctx.world.backend(b)) is not None and fx.origin == origin
        ).catalog.widgets[wid]

    def _legacy_ground(self, phrasing: Phrasing, kind: str, note_name: str) -> str:
        """A story whose governance names no fact: the level reads the source and writes what it plants into a
        note (the only Ground a foreign world without planted facts allows)."""
        gov = self.s.governance
        what = where_phrase(gov.where)
        family = "ground_note_read" if kind == "read" else "ground_note"
        return phrasing.pick(family, source=gov.mention, what=what, note=note_name)

    def _hidden(self) -> list[dict[str, Any]]:
        if self.level == 1:
            return [{"kind": "target", "value": self.s.targets[0].name}]
        if self.level == 2:
            return [{"kind": "carried", "value": _value(self.s.carried_value)}]
        if self.level >= 3:
            gov = self.s.governance
            out = [{"kind": "planted", "value": gov.phrase, "source": gov.source}]
            if gov.sets is not None:
                out.append({"kind": "carried", "value": _value(gov.value)})
            return out
        return []


# -------------------------------------------------------------------------------------------- LLM driver
MAX_RESULT_CHARS = 12000
MAX_MATCHES = 25
SUBMIT = "submit_level"

LEVEL_DIALS = {
    0: "Execute: nothing is withheld. The prompt states the dashboard, each widget's display name, app and "
    "origin, and every parameter key and value as the catalog spells it. meta.hidden is empty.",
    1: "Find: exactly one target is described through the story's find_hint and never named (no word of its "
    "catalog name; when other targets are the same catalog widget with other parameters, they are described "
    "the same way); everything else as at Execute. meta.hidden = [{kind: target, value: <its catalog name>}].",
    2: "Derive: the policy phrase stands in for exactly one graded value (the policy's `carries` key), which the "
    "prompt never states in any spelling; the widget is named again. The value must be resolvable in the world: "
    "when the story defines the policy in a note, seed that note (the policy and its distractor) on the "
    "dashboard; when in a resource, the agent reads it there. meta.hidden = [{kind: carried, value}].",
    3: "Ground: a lived-in dashboard (a twin of the target on another value of the grounded parameter, a second view "
    "of the same app left on a wrong value that the prompt asks to repair, and a prior note) and a graded read of "
    "the governing source (and of the document its step refers to, when the fact is there). When the story's "
    "governance has `fact` and `sets`, the value (or tab title) the fact decides is not said: the prompt says "
    "where the fact is and the agent sets it; otherwise a named note records the source's distinctive phrase. "
    "meta.hidden = [{kind: planted, value: <phrase>, source: skill:<slug> | resource:<uri> | prompt:<name>}] "
    "plus {kind: carried, value: <what the fact sets>} when it sets one.",
    4: "Compose: level 3 plus a build that uses what the work found: add a custom backend serving the story's table "
    "(manage_backends add with widgets_json and apps_json; keyed on the grounded parameter when the fact sets "
    "one), publish and instantiate its app (its tab titled like the board's when the fact titles the tab), and "
    "put the built widget on the dashboard set to the grounded value. meta.hidden as at level 3.",
}


def _fn(
    name: str,
    description: str,
    properties: dict[str, Any],
    required: list[str],
    defs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    if defs:
        parameters["$defs"] = defs
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _task_parameter() -> tuple[dict[str, Any], dict[str, Any]]:
    """The task file's JSON Schema, from the Task model itself (its definitions hoisted to the tool's root)."""
    schema = Task.model_json_schema()
    defs = schema.pop("$defs", {})
    schema["description"] = (
        "the complete task file {id, difficulty, prompt, setup, eval, meta}; the taskset's "
        "task_defaults are merged into it"
    )
    return schema, defs


_STR = {"type": "string"}
_TASK, _TASK_DEFS = _task_parameter()
TOOLS = [
    _fn(
        "search_catalog",
        "Find catalog widgets of the backends the story's tasks connect, by words of their name, "
        "description, category, app or id (an empty query lists them all). Returns origin, widget_id, name, "
        "description, app and category.",
        {"query": _STR, "origin": {**_STR, "description": "origin display name"}},
        ["query"],
    ),
    _fn(
        "get_widget_schema",
        "The full definition of one catalog widget: params with types, defaults and options, grid size.",
        {"origin": _STR, "widget_id": _STR},
        ["origin", "widget_id"],
    ),
    _fn(
        "get_widget_rows",
        "The rows get_widget_data serves for data_args in a fresh episode of the story's setup "
        "(unset params take their defaults). Take every graded note value from here.",
        {"origin": _STR, "widget_id": _STR, "data_args": {"type": "object"}},
        ["origin", "widget_id", "data_args"],
    ),
    _fn("read_skill", "The full text of a workspace skill by slug.", {"slug": _STR}, ["slug"]),
    _fn("read_resource", "A workspace documentation resource by URI.", {"uri": _STR}, ["uri"]),
    _fn("read_prompt", "A workspace prompt by name.", {"name": _STR}, ["name"]),
    _fn(
        SUBMIT,
        "Hand in the complete task object of the level. It is parsed with the taskset defaults "
        "merged and certified by the gates (schema, grounding, oracle, noop, load_bearing, leak, determinism); "
        "the result says whether it certified and what each gate found. Fix and resubmit until it certifies.",
        {"task": _TASK},
        ["task"],
        _TASK_DEFS,
    ),
]
AUTHOR_TOOLS = [t["function"]["name"] for t in TOOLS]

OPENING_PROMPT = """\
This session writes the five levels of one story for one persona, level by level, and any revision the
gates or reviewers ask for later. Each level is certified before the next one starts.

## Persona: {{ persona_title }} ({{ persona_slug }})
{{ persona_text }}

## Story: {{ story_title }} ({{ story_slug }})
{{ story_prose }}

### Facts (the story's front matter)
```yaml
{{ facts }}```

### The facts resolved against the world
```yaml
{{ resolved }}```

### The episode setup every level starts from (add seeded widgets and notes to initial_state as the level needs)
```json
{{ setup }}
```
"""

LEVEL_PROMPT = """\
## {{ 'Revise' if revision else 'Write' }} level {{ level }} ({{ level_name }})
Task id `{{ task_id }}`, difficulty `level{{ level }}`, meta.story `{{ story_slug }}`, meta.persona `{{ persona_slug }}`.
Dial: {{ dial }}
{% if written %}
### Levels already written for this story
{% for item in written %}
level{{ item.level }} ({{ 'certified' if item.certified else 'not certified' }}):
```json
{{ item.task }}
```
{% endfor %}{% endif %}{% if feedback %}
### Feedback to address
{% for line in feedback %}- {{ line }}
{% endfor %}{% endif %}
Inspect the catalog and plan against the served rows with the tools, then call submit_level with the complete
task object; resubmit until it certifies."""

NUDGE = (
    "No level was submitted. Call submit_level with the complete task object of level {level} (id "
    "{task_id}); a reply without a tool call hands nothing in."
)


def _is_message(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("role") in ("user", "assistant", "tool")


def _written(history: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The latest submission of each level so far in this session."""
    out: dict[int, dict[str, Any]] = {}
    for entry in history:
        draft = entry.get("draft") if isinstance(entry, dict) else None
        if isinstance(draft, dict) and isinstance(draft.get("task"), dict):
            out[int(draft["level"])] = draft
    return out


_GATING = threading.Lock()
"""Gates are CPU-bound under one interpreter lock: run together they finish no sooner, and they starve the
thread that reads the other stories' model replies (each reply then waited tens of ms for its turn)."""


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class _Tools:
    """What the model's tool calls run against: the world, in fresh episodes of the story's setup."""

    def __init__(self, ctx: AuthorContext, level: int) -> None:
        self.ctx = ctx
        self.level = level
        self.task_id = f"{ctx.story.story.slug}_level{level}"
        self.setup = story_setup(ctx)
        self.submissions = 0
        self.last: dict[str, Any] | None = None
        self.certified: dict[str, Any] | None = None

    def episode(self) -> Workspace:
        return Workspace.start(self.ctx.world, self.setup)

    def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = getattr(self, f"tool_{name}", None) if name in AUTHOR_TOOLS else None
        if handler is None:
            return {"error": f"unknown tool '{name}'; the tools are {', '.join(AUTHOR_TOOLS)}"}
        try:
            return handler(**args)
        except TypeError as exc:
            return {"error": f"{name}: bad arguments ({exc})"}
        except SetupError as exc:
            return {"error": f"the story's setup does not start: {exc}"}

    def _envelope(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        envelope = self.episode().call(tool, args)
        return {"data": envelope.data} if envelope.ok else {"error": envelope.message}

    def tool_search_catalog(self, query: str = "", origin: str | None = None) -> dict[str, Any]:
        wanted = _words(query)
        matches: list[tuple[int, str, dict[str, Any]]] = []
        for conn in self.episode().connections:
            if origin and conn.name != origin:
                continue
            apps = {
                str(a.get("name")): {
                    str(i.get("i"))
                    for t in (a.get("tabs") or {}).values()
                    if isinstance(t, dict)
                    for i in t.get("layout") or []
                    if isinstance(i, dict)
                }
                for a in conn.catalog.apps
            }
            for w in conn.catalog.widgets.values():
                in_apps = [name for name, ids in apps.items() if w.widget_id in ids]
                entry = {
                    "origin": conn.name,
                    "widget_id": w.widget_id,
                    "name": w.name,
                    "description": str(w.definition.get("description") or ""),
                    "app": in_apps,
                    "category": w.definition.get("category"),
                }
                score = len(
                    wanted
                    & _words(
                        " ".join(
                            [
                                w.name,
                                entry["description"],
                                str(entry["category"] or ""),
                                w.widget_id,
                                *in_apps,
                            ]
                        )
                    )
                )
                if score or not wanted:
                    matches.append((score, w.name, entry))
        matches.sort(key=lambda m: (-m[0], m[1]))
        if not matches:
            origins = sorted({c.name for c in self.episode().connections})
            return {"matches": [], "note": f"nothing matches; connected origins: {origins}"}
        return {"matches": [m[2] for m in matches[:MAX_MATCHES]], "total": len(matches)}

    def tool_get_widget_schema(self, origin: str, widget_id: str) -> dict[str, Any]:
        return self._envelope("get_widget_schema", {"origin": origin, "widget_id": widget_id})

    def tool_get_widget_rows(self, origin: str, widget_id: str, data_args: dict[str, Any]) -> dict[str, Any]:
        return self._envelope(
            "get_widget_data", {"origin": origin, "widget_id": widget_id, "data_args": data_args}
        )

    def tool_read_skill(self, slug: str) -> dict[str, Any]:
        skill = self.ctx.world.skills.get(slug)
        if skill is None:
            return {"error": f"unknown skill '{slug}'; the world has {sorted(self.ctx.world.skills)}"}
        return skill.public()

    def tool_read_resource(self, uri: str) -> dict[str, Any]:
        resource = self.ctx.world.resources.get(uri)
        if resource is None:
            return {"error": f"unknown resource '{uri}'; the world has {sorted(self.ctx.world.resources)}"}
        return {
            "uri": resource.uri,
            "title": resource.title,
            "description": resource.description,
            "text": resource.text,
        }

    def tool_read_prompt(self, name: str) -> dict[str, Any]:
        prompt = self.ctx.world.prompts.get(name)
        if prompt is None:
            return {"error": f"unknown prompt '{name}'; the world has {sorted(self.ctx.world.prompts)}"}
        return {"name": prompt.name, "description": prompt.description, "text": prompt.text}

    def tool_submit_level(self, task: Any) -> dict[str, Any]:
        if isinstance(task, str):
            try:
                task = json.loads(task)
            except json.JSONDecodeError as exc:
                return {"certified": False, "error": f"task is not a JSON object ({exc.msg})"}
        if not isinstance(task, dict):
            return {
                "certified": False,
                "error": "task must be a JSON object {id, difficulty, prompt, setup, eval, meta}",
            }
        self.submissions += 1
        self.last = task
        if task.get("id") != self.task_id or task.get("difficulty") != LEVELS[self.level]:
            return {
                "certified": False,
                "error": f"this level's task has id '{self.task_id}' and difficulty "
                f"'{LEVELS[self.level]}' (got {task.get('id')!r}, "
                f"{task.get('difficulty')!r})",
            }
        try:
            parsed = parse_task(task, f"{self.task_id}.json", self.ctx.defaults or _standard_defaults())
        except TaskFileError as exc:
            return {"certified": False, "error": f"the task does not validate: {exc.field}: {exc.message}"}
        try:
            with _GATING:
                cert = certify_task(self.ctx.world, parsed, f"{parsed.id}.json")
        except (
            Exception
        ) as exc:  # a draft the gates cannot even run on is feedback for the model, not a crash
            return {"certified": False, "error": f"the gates could not run on this task: {exc}"}
        if cert.certified:
            self.certified = task
        return {"certified": cert.certified, "gates": {k: v.to_dict() for k, v in cert.gates.items()}}


def story_setup(ctx: AuthorContext) -> dict[str, Any]:
    """The episode every level of the story starts from, before the level seeds its own widgets."""
    s = ctx.story
    return {
        "workspace_baseline": ctx.baseline,
        "workspace_backends": list(ctx.backends),
        "workspace_skills": list(ctx.skills),
        "default_selected_dashboard": s.facts.dashboard,
        "initial_state": {
            "dashboard": {
                "name": s.facts.dashboard,
                "activate": False,
                "tabs": [{"id": s.tab_id, "name": s.tab_name}],
                "widgets": [],
            }
        },
    }


def _resolved(ctx: AuthorContext) -> dict[str, Any]:
    s = ctx.story
    gov = s.governance
    return {
        "kind": s.kind,
        "targets": [
            {"name": t.name, "origin": t.origin, "app": t.app, "widget_id": t.widget_id, "params": t.params}
            for t in s.targets
        ],
        "carried": {"key": s.carried_key, "value": s.carried_value, "target": s.carried_target},
        "seeded_wrong": s.seeded_wrong,
        "governance": {
            "kind": gov.kind,
            "ref": gov.ref,
            "name": gov.name,
            "phrase": gov.phrase,
            "where": gov.where,
            "source": gov.source,
        },
        "tab": {"id": s.tab_id, "name": s.tab_name},
        "warnings": list(s.warnings),
    }


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _standard_defaults() -> dict[str, Any]:
    from ..taskset import STANDARD_DEFAULTS

    return STANDARD_DEFAULTS


def _said(completion: Completion) -> str:
    """What a reply said, as evidence: its text and the tool calls it made."""
    calls = [f"{c.function.name}({clip(c.function.arguments or '', 300)})" for c in completion.tool_calls]
    return clip(
        " ".join(part for part in (completion.text.strip(), *calls) if part) or "(an empty reply)", EVIDENCE
    )


class LLMAuthor:
    """One model session per story, levels in order, handed in through `submit_level`.

    A reply without a tool call is told to submit, and the next request forces `submit_level` (tool_choice); the
    last request of a draft forces it too. A draft that hands in nothing (after `max_nudges` such replies, or
    when its rounds run out) is a role failure with the last reply as evidence; one that hands in a task that
    does not certify returns it, and the pipeline's gate feedback takes over.
    """

    name = "llm"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        cfg = self.endpoint.config
        tools = _Tools(ctx, level)
        story, persona = ctx.story.story, ctx.persona
        earlier = [m for m in history if _is_message(m)]
        written = _written(history)
        new: list[dict[str, Any]] = []
        parts = []
        if not earlier:
            parts.append(
                render(
                    OPENING_PROMPT,
                    persona_title=persona.title,
                    persona_slug=persona.slug,
                    persona_text=persona.text,
                    story_title=story.title,
                    story_slug=story.slug,
                    story_prose=story.prose,
                    facts=_yaml(story.facts.model_dump(exclude_none=True)),
                    resolved=_yaml(_resolved(ctx)),
                    setup=json.dumps(tools.setup, indent=1),
                )
            )
        parts.append(
            render(
                LEVEL_PROMPT,
                revision=level in written,
                level=level,
                level_name=LEVEL_NAMES[LEVELS[level]],
                task_id=tools.task_id,
                story_slug=story.slug,
                persona_slug=persona.slug,
                dial=LEVEL_DIALS[level],
                feedback=list(feedback),
                written=[
                    {
                        "level": lv,
                        "certified": d.get("certified", False),
                        "task": json.dumps(d["task"], ensure_ascii=False),
                    }
                    for lv, d in sorted(written.items())
                ],
            )
        )
        new.append({"role": "user", "content": "\n\n".join(parts)})
        system = {"role": "system", "content": self.endpoint.skill("task-author")}
        rounds = nudges = 0
        force = False
        said = ""

        def record() -> None:
            history.extend(new)
            history.append(
                {
                    "draft": {
                        "level": level,
                        "task": tools.certified or tools.last,
                        "certified": tools.certified is not None,
                        "rounds": rounds,
                        "submissions": tools.submissions,
                    }
                }
            )

        while rounds < cfg.max_tool_rounds and tools.certified is None:
            rounds += 1
            choice = SUBMIT if force or rounds == cfg.max_tool_rounds else "auto"
            try:
                completion = self.endpoint.complete(
                    "author",
                    tools.task_id,
                    [system, *earlier, *new],
                    evidence=said,
                    tools=TOOLS,
                    tool_choice=choice,
                )
            except RoleFailure:
                record()
                raise
            said = _said(completion)
            calls = completion.tool_calls
            assistant: dict[str, Any] = {"role": "assistant", "content": completion.message.content}
            if not calls:
                nudges += 1
                new += [
                    assistant,
                    {"role": "user", "content": NUDGE.format(level=level, task_id=tools.task_id)},
                ]
                if nudges > cfg.max_nudges:
                    break
                force = True
                continue
            force = False
            assistant["tool_calls"] = [
                {
                    "id": c.id or f"call_{rounds}_{n}",
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for n, c in enumerate(calls)
            ]
            new.append(assistant)
            for record_, call in zip(assistant["tool_calls"], calls, strict=True):
                action = parse_arguments(call.function.name, call.function.arguments, "lenient").action
                result = (
                    {"error": action.parse_error}
                    if action.parse_error
                    else tools.run(action.tool, action.args)
                )
                if action.tool == SUBMIT:
                    failed = ", ".join(k for k, g in (result.get("gates") or {}).items() if not g["ok"])
                    verdict = (
                        "certified"
                        if result.get("certified")
                        else f"not certified ({failed or 'invalid task'})"
                    )
                    self.endpoint.progress(f"llm author {tools.task_id}: round {rounds}: {verdict}")
                new.append(
                    {
                        "role": "tool",
                        "tool_call_id": record_["id"],
                        "content": clip(
                            json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str),
                            MAX_RESULT_CHARS,
                        ),
                    }
                )
        record()
        task = tools.certified or tools.last
        if task is None:
            why = (
                f"{nudges} replies without a tool call"
                if nudges > cfg.max_nudges
                else f"{rounds} model request(s)"
            )
            raise RoleFailure("author", f"{tools.task_id}: no level was submitted ({why})", evidence=said)
        note = f"{rounds} model round(s), {tools.submissions} submission(s), " + (
            "certified"
            if tools.certified is not None
            else "not certified: the pipeline's gate feedback takes over"
        )
        return Draft(task, [note])
