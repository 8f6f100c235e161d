"""The author role: one story's facts and its persona in, a task for one level out.

Two drivers sit behind the `AuthorDriver` protocol. The rule driver (the embedded default, deterministic, no
network) compiles the facts into the five levels and builds each level's reference by planning against the
simulator: it performs the reference's calls in a real episode and reads back what they return (the rows a note
must record, the id a new backend receives). Its requests are worded by authoring/phrasing.py. The levels go
deeper than their prompts: Find seeds a neighbour a signature cannot tell from the target, Derive resolves in
the document that defines the policy (a seeded note, or a resource), Ground sets a parameter or the tab's title
from a fact read in its source (followed through a reference when the source points elsewhere) on a lived-in
board with a twin to leave alone and a second view to repair, and Compose keys the table it builds on the value
Ground found. The LLM driver (authoring/llm_author.py) writes the same contract through tool calls. Either way
the gates decide, not the author.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import jinja2

from certify.task import LEVEL_NAMES, LEVELS
from simulator import TOOL_NAMES, Workspace, World
from simulator.params import value_allowed
from simulator.slug import slugify
from simulator.workspace import INDEX_URI

from .factcheck import ResolvedStory, ResolvedTarget
from .factcheck import value_text as _value
from .phrasing import Ask, Build, Ground, Phrasing
from .sources import Persona

SLACK_TURNS = 3
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

    def draft(self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]) -> Draft:
        """Write the task of `level`; `feedback` holds gate results and review flags from earlier rounds, and
        `history` the session so far (the driver appends to it; it must stay JSON-serialisable)."""
        ...


_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
_ENV.filters["ucfirst"] = lambda text: text[:1].upper() + text[1:]


def render(template: str, **variables: Any) -> str:
    return _ENV.from_string(template).render(**variables)


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
    label = str((param or {}).get("label") or (param or {}).get("headerName") or key).replace("_", " ").strip()
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in label.split())


def where_phrase(where: str) -> str:
    """Turn a planted phrase's location ("the last step of its workflow (how the pack opens)") into what a
    person would ask to record ("what the last step of its workflow says about how the pack opens")."""
    match = re.match(r"(.*?)\s*\((.*)\)\s*$", where)
    if match:
        return f"what {match.group(1)} says about {match.group(2)}"
    return where if where.startswith("what ") else f"what {where} says"


def _nth(name: str, index: int) -> str:
    """One of several instances of a named target, by position ("the second holdings book")."""
    ordinal = ("first", "second", "third", "fourth")[index]
    bare = re.sub(r"^(?:the|an?)\s+", "", name, flags=re.I)
    return f"the {ordinal} {bare}"


class RuleAuthor:
    """Deterministic compilation of facts into levels (the embedded default)."""

    name = "rules"

    def draft(self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]) -> Draft:
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

    # -- phrasing -----------------------------------------------------------------------------------------
    def origin_phrase(self, t: ResolvedTarget) -> str:
        return f"{t.origin}'s {t.app}" if t.app else t.origin

    def target_names(self, describe: bool) -> list[str]:
        """How the prompt names each target. At Find the first target goes by the find hint, and so does every
        other target that is the same catalog widget (with other parameters): naming one of them would name the
        hidden widget."""
        t0 = self.s.targets[0]
        return [self.f.find_hint if describe and (t.origin, t.widget_id) == (t0.origin, t0.widget_id) else t.name
                for t in self.s.targets]

    def shared_params(self) -> dict[str, Any] | None:
        """The parameter set when every target shares it (said once for all), else None."""
        sets = [t.params for t in self.s.targets if t.params]
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
            "initial_state": {"dashboard": {
                "name": self.dash, "activate": False, "tabs": [{"id": self.tab_id, "name": self.tab_name}],
                "widgets": self.seeds, "generated_widgets": self.generated_seeds,
            }},
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
            self.step("get_params_options", {"origin": t.origin, "widget_id": t.widget_id,
                                             "param_name": self.s.carried_key}, optional=True)
        rows_by_target = self._main_actions(kind)
        if lived:
            self._retitle()
        note_text = self._notes(kind, rows_by_target, lived)
        if build is not None:
            self.step("manage_apps", {"operation": "instantiate", "backend_id": build["backend_id"],
                                      "app_name": build["app"], "dashboard_name": build["app"], "activate": False},
                      graded=["operation"])
        prompt = self._prompt(kind, note_text, build)
        hidden = self._hidden()
        task_id = f"{self.slug}_level{level}"
        ev: dict[str, Any] = {"required_tools": self.steps}
        ev.update(self.evals)
        ev["required_dashboard_name_contains"] = self.dash
        ev["max_turns"] = len(self.steps) + SLACK_TURNS
        return {
            "id": task_id,
            "difficulty": LEVELS[level],
            "prompt": prompt,
            "setup": setup,
            "eval": ev,
            "meta": {"persona": self.ctx.persona.slug, "story": self.slug, "level": level,
                     "level_name": LEVEL_NAMES[LEVELS[level]], "hidden": hidden, "authored_by": "rules"},
        }

    def step(self, tool: str, args: dict[str, Any], *, optional: bool = False,
             graded: list[str] | None = None) -> dict[str, Any]:
        """Add a reference step and perform it in the planning episode; a failing step is an authoring bug."""
        assert self.ws is not None
        envelope = self.ws.call(tool, args).to_dict()
        if not envelope["ok"]:
            raise AuthoringError(f"{self.slug} level{self.level}: planned {tool} fails: {envelope['message']}")
        entry: dict[str, Any] = {"tool": tool, "args": args}
        if optional:
            entry["optional"] = True
        elif graded is not None:
            entry["graded_args"] = graded
        self.steps.append(entry)
        return envelope

    # -- seeded state -------------------------------------------------------------------------------------
    def _slot(self, index: int, h: int = SEED_H, w: int = SEED_W) -> dict[str, int]:
        return {"x": 0 if index % 2 == 0 else SEED_W, "y": SEED_H * (index // 2), "w": w, "h": h}

    def _seed(self, role: str, t: ResolvedTarget | None, widget_id: str, origin: str, params: dict[str, Any]) -> str:
        uuid = _uuid(self.ctx.persona.slug, self.slug, role)
        self.seeds.append({"origin": origin, "widget_id": widget_id, "widget_uuid": uuid, "tab_id": self.tab_id,
                           "data_args": dict(params), "layout": self._slot(len(self.seeds))})
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
            avoid = {str(t.params.get(key)) for t in self.s.targets if (t.origin, t.widget_id) ==
                     (t0.origin, t0.widget_id)} | {str(self.s.seeded_wrong.get(key, t0.params.get(key)))}
            other = self._other_value(t0, key, avoid)
            if other is not None:
                twin[key] = other
                changed = True
                if self.s.kind != "repair":
                    break
        return twin if changed else None

    @property
    def grounded_key(self) -> str | None:
        """The target parameter the Ground fact sets (None when it sets the tab's title, or nothing)."""
        sets = self.s.governance.sets
        return sets if sets not in (None, "tab") else None

    def hidden_values(self) -> set[str]:
        """Values the level must not say anywhere in its prompt."""
        return {h["value"] for h in self._hidden() if h["kind"] != "target"}

    def _seed_neighbour(self) -> None:
        """At Find, a repair's target is not alone on the board: a neighbour of the same app that takes the
        values the prompt states sits next to it, so the placed widget that fits the values is not the answer;
        only the description tells them apart."""
        t0 = self.s.targets[0]
        fixture = next((fx for b in self.ctx.backends if (fx := self.ctx.world.backend(b)) is not None
                        and fx.origin == t0.origin), None)
        if fixture is None:
            return
        taken = {t.widget_id for t in self.s.targets}
        app = t0.widget.definition.get("category")
        best: tuple[int, bool, str] | None = None
        for wid, definition in fixture.catalog.widgets.items():
            if wid in taken:
                continue
            fit = sum(1 for k, v in t0.params.items() if (q := definition.param(k)) is not None
                      and value_allowed(q, v))
            candidate = (fit, definition.definition.get("category") == app, wid)
            if fit and (best is None or candidate > best):
                best = candidate
        if best is None:
            return
        definition = fixture.catalog.widgets[best[2]]
        params = {k: v for k, v in {**t0.params, **self.s.seeded_wrong}.items()
                  if (q := definition.param(k)) is not None and value_allowed(q, v)}
        self._seed("neighbour", None, definition.widget_id, t0.origin, params)
        self.neighbour = (definition.widget_id, definition.name, t0.origin, params)

    def _furniture_fix(self) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
        """The real repair of a lived-in add or read: the furniture was left on a wrong value of one of its
        parameters (never the one the level grounds, and never saying a hidden value); ("", wrong, right)."""
        assert self.furniture is not None
        wid, _, origin, params = self.furniture
        definition = next(fx for b in self.ctx.backends if (fx := self.ctx.world.backend(b)) is not None
                          and fx.origin == origin).catalog.widgets[wid]
        hidden = self.hidden_values()
        for p in definition.option_params:
            key = str(p.get("paramName"))
            right = params.get(key, p.get("value"))
            if key in (self.grounded_key, self.s.carried_key) or right is None or _value(right) in hidden:
                continue
            wrong = next((v for o in p.get("options") or [] if (v := o.get("value") if isinstance(o, dict) else o)
                          is not None and str(v) != str(right) and _value(v) not in hidden), None)
            if wrong is not None:
                return "", {key: wrong}, {key: right}
        return None

    def _furniture(self) -> tuple[str, str, str, dict[str, Any]] | None:
        t0 = self.s.targets[0]
        fixture = next((self.ctx.world.backend(b) for b in self.ctx.backends
                        if (fx := self.ctx.world.backend(b)) is not None and fx.origin == t0.origin), None)
        if fixture is None:
            return None
        taken = {t.widget_id for t in self.s.targets}
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
        widget = fixture.catalog.widgets[_pick(sorted(pool), self.slug, "furniture")]
        params: dict[str, Any] = {}
        for p in widget.option_params:
            name = p.get("paramName")
            if name in t0.params and any(str(o.get("value") if isinstance(o, dict) else o) == str(t0.params[name])
                                         for o in p.get("options") or []):
                params[str(name)] = t0.params[name]
            elif p.get("value") is not None:
                params[str(name)] = p["value"]
        return widget.widget_id, widget.name, t0.origin, params

    def _seed_dashboard(self, lived: bool) -> None:
        self.stale: dict[int, str] = {}
        self.twin: dict[str, Any] | None = None
        self.furniture: tuple[str, str, str, dict[str, Any]] | None = None
        self.fix: tuple[str, dict[str, Any], dict[str, Any]] | None = None
        self.prior_note: dict[str, Any] | None = None
        self.neighbour: tuple[str, str, str, dict[str, Any]] | None = None
        self.policy_note: dict[str, Any] | None = None
        self.tab_title: str | None = None
        if self.s.kind == "repair":
            for i, t in enumerate(self.s.targets):
                wrong = {**t.params, **(self.s.seeded_wrong if i == 0 else {})}
                self.stale[i] = self._seed(f"stale{i}", t, t.widget_id, t.origin, wrong)
            if self.level == 1:
                self._seed_neighbour()
        if self.level == 2 and self.s.policy_doc is not None and self.s.policy_doc.kind == "note":
            doc = self.s.policy_doc
            uuid = _uuid(self.ctx.persona.slug, self.slug, "policy-note")
            layout = self._slot(len(self.seeds), NOTE_H)
            self.generated_seeds.append({"widget_type": "note", "widget_uuid": uuid, "name": doc.ref,
                                         "data": doc.text, "tab_id": self.tab_id, "layout": layout})
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
            self.fix = self._furniture_fix() if self.s.kind != "repair" and self.s.governance.sets else None
            seeded = {**params, **self.fix[1]} if self.fix else params
            uuid = self._seed("furniture", None, wid, origin, seeded)
            if self.fix is not None:
                self.fix = (uuid, self.fix[1], self.fix[2])
        text = (f"Prior pass on {self.dash}: leave the {t0.name} cut to "
                f"{', '.join(_value(v) for v in (twin or t0.params).values())} in place"
                + (f" next to the {self.furniture[1]}" if self.furniture else "") + " until the next review.")
        uuid = _uuid(self.ctx.persona.slug, self.slug, "prior-note")
        layout = self._slot(len(self.seeds), NOTE_H, SEED_W if len(self.seeds) % 2 else 2 * SEED_W)
        self.generated_seeds.append({"widget_type": "note", "widget_uuid": uuid, "name": f"Prior {self.dash} Note",
                                     "data": text, "tab_id": self.tab_id, "layout": layout})
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
        self.step("manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {self.tab_id: self.tab_title}},
                  graded=["operation"])

    # -- the work -----------------------------------------------------------------------------------------
    def _main_actions(self, kind: str) -> list[list[Any]]:
        rows: list[list[Any]] = []
        required_widgets = []
        for i, t in enumerate(self.s.targets):
            if kind == "repair":
                self.step("update_widget", {"widget_uuid": self.stale[i], "data_args": dict(t.params)},
                          graded=["widget_uuid", "data_args"])
                required_widgets.append({"origin": t.origin, "widget_id": t.widget_id, "data_args": dict(t.params),
                                         "tab_id": self.tab_id, "max_count": 1})
            elif kind == "read":
                envelope = self.step("get_widget_data", {"origin": t.origin, "widget_id": t.widget_id,
                                                         "data_args": dict(t.params)},
                                     graded=["origin", "widget_id", "data_args"])
                rows.append(list(envelope["data"]["data"]))
            else:
                args: dict[str, Any] = {"origin": t.origin, "widget_id": t.widget_id}
                if t.params:
                    args["data_args"] = dict(t.params)
                self.step("create_widget", args, graded=["origin", "widget_id", "data_args"] if t.params else
                          ["origin", "widget_id"])
                req: dict[str, Any] = {"origin": t.origin, "widget_id": t.widget_id, "tab_id": self.tab_id}
                if t.params:
                    req["data_args"] = dict(t.params)
                required_widgets.append(req)
        if self.neighbour is not None:
            wid, _, origin, params = self.neighbour
            required_widgets.append({"origin": origin, "widget_id": wid, "data_args": params, "tab_id": self.tab_id,
                                     "max_count": 1})
        if self.fix is not None and self.furniture is not None:
            uuid, _, right = self.fix
            wid, _, origin, params = self.furniture
            self.step("update_widget", {"widget_uuid": uuid, "data_args": dict(right)},
                      graded=["widget_uuid", "data_args"])
            self.furniture = (wid, self.furniture[1], origin, {**params, **right})
        if self.level >= 3:
            if self.twin is not None:
                required_widgets.append({"origin": self.s.targets[0].origin, "widget_id": self.s.targets[0].widget_id,
                                         "data_args": self.twin["params"], "tab_id": self.tab_id, "max_count": 1})
            if self.furniture is not None:
                wid, _, origin, params = self.furniture
                required_widgets.append({"origin": origin, "widget_id": wid, "data_args": params,
                                         "tab_id": self.tab_id, "max_count": 1})
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
            raise AuthoringError(f"{self.story_file}: facts.record: the served row has no column {missing[0]!r}")
        return [(k, _value(row[k])) for k in wanted]

    @property
    def story_file(self) -> str:
        return self.s.story.file

    def _notes(self, kind: str, rows: list[list[Any]], lived: bool) -> str:
        gens: list[dict[str, Any]] = []
        if self.prior_note is not None:
            gens.append({"widget_type": "note", "name_contains": self.prior_note["name"],
                         "data_contains": [self.prior_note["text"]], "tab_id": self.tab_id})
        if self.policy_note is not None:
            gens.append({"widget_type": "note", "name_contains": self.policy_note["name"],
                         "data_contains": self.policy_note["text"].splitlines(), "tab_id": self.tab_id})
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
            self.step("add_generative_widget", {"widget_type": "note", "name": name, "data": body},
                      graded=["widget_type"])
            gens.append({"widget_type": "note", "name_contains": name, "data_contains": contains,
                         "tab_id": self.tab_id})
            note_text = name
        elif lived and not acts:
            name = f"{self.dash} Governance Note"
            self.step("add_generative_widget", {"widget_type": "note", "name": name,
                                                "data": f"Per the {gov.name}: {gov.phrase}."}, graded=["widget_type"])
            gens.append({"widget_type": "note", "name_contains": name, "data_contains": [gov.phrase],
                         "tab_id": self.tab_id})
            note_text = name
        if gens:
            self.evals["required_generated_widgets"] = gens
        if lived:
            self.evals["required_tabs"] = [self.tab_id]
            self.evals["required_tab_names"] = [self.tab_title or self.tab_name]
            pins = [{"widget_uuid": s["widget_uuid"], "tab_id": self.tab_id, **s["layout"]} for s in self.seeds
                    if s["widget_uuid"] not in self.stale.values()]
            pins += [{"widget_uuid": g["widget_uuid"], "tab_id": self.tab_id, **g["layout"]}
                     for g in self.generated_seeds]
            self.evals["required_layouts"] = pins
        return note_text

    def _build(self) -> dict[str, Any]:
        """Compose builds a backend and app and uses what it built: the table is keyed on the parameter the
        Ground fact set and placed on the dashboard with the value found, or (a fact that titles the tab) the
        app's tab takes the board's new title."""
        b = self.f.build
        gov = self.s.governance
        table_id = slugify(b.table).replace("-", "_")
        app = b.app or (b.backend[: -len(" Service")] if b.backend.endswith(" Service") else b.backend) + " App"
        tab_like = gov.sets == "tab"
        tab_name = str(gov.value) if tab_like else (b.tab or b.table.split()[-1])
        tab_id = slugify(tab_name).replace("-", "_")
        port = 9000 + int(hashlib.sha256(b.backend.encode()).hexdigest(), 16) % 900
        widget: dict[str, Any] = {"name": b.table, "description": f"Authored {b.table.lower()} for {self.dash}.",
                                  "endpoint": f"/{slugify(b.table)}", "type": "table", "gridData": {"w": 40, "h": 10}}
        keyed = self.grounded_key
        placed: dict[str, Any] = {}
        if keyed is not None:
            target = next(t for t in self.s.targets if keyed in t.params)
            declared = target.widget.param(keyed) or {}
            widget["params"] = [{k: declared[k] for k in ("paramName", "type", "value", "label", "description",
                                                          "options") if k in declared}]
            placed = {keyed: target.params[keyed]}
        widgets = {table_id: widget}
        apps = [{"name": app, "description": f"Authored app for the {self.dash} work.",
                 "tabs": {tab_id: {"id": tab_id, "name": tab_name, "layout": [
                     {"i": table_id, "x": 0, "y": 0, "w": 40, "h": 10}]}}}]
        self.step("read_workspace_resource", {"uri": "openbb://workspace/specs/widgets-json"}, optional=True) \
            if "openbb://workspace/specs/widgets-json" in self.ctx.world.resources else None
        envelope = self.step("manage_backends", {"operation": "add", "name": b.backend,
                                                 "url": f"http://127.0.0.1:{port}", "widgets_json": widgets,
                                                 "apps_json": apps}, graded=["operation", "name"])
        backend_id = envelope["data"]["backend_id"]
        self.step("manage_apps", {"operation": "list", "backend_id": backend_id}, optional=True)
        self.step("list_available_widgets", {"origin": b.backend}, optional=True)
        create: dict[str, Any] = {"origin": b.backend, "widget_id": table_id}
        if placed:
            create["data_args"] = placed
        self.step("create_widget", create, graded=list(create))
        definition: dict[str, Any] = {"backend_name": b.backend, "widget_id": table_id,
                                      "expect": {"name": b.table, "type": "table"}}
        if keyed is not None:
            definition["params_include"] = [{"paramName": keyed}]
        self.evals["required_widget_defs"] = [definition]
        self.evals["required_app_defs"] = [{"backend_name": b.backend, "name_contains": app, "tabs_include": [tab_id],
                                            "layout_refs_valid": True, "no_overlaps": True,
                                            "widgets_on_tab": [{"tab_id": tab_id, "widget_id": table_id}]}]
        self.evals["required_tool_results"] = [{"tool": "manage_apps", "data_contains": [app, tab_name, b.backend]}]
        self.built = {"origin": b.backend, "widget_id": table_id, **({"data_args": placed} if placed else {})}
        return {"backend": b.backend, "table": b.table, "app": app, "tab": tab_name, "backend_id": backend_id,
                "keyed": keyed, "tab_like": tab_like}

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
        where = (position.replace(" of its ", f" of {source}'s ", 1) if " of its " in position
                 else f"the {position[4:]} in {source}" if position.startswith("its ") else f"{position} of {source}")
        hop_row = None
        if gov.hop is not None:
            held = self.ctx.world.resources.get(gov.hop.uri)
            entry = next((pl for pl in (held.planted if held else ()) if pl.phrase == gov.phrase), None)
            hop_position = (entry.where.split(" (")[0] if entry and entry.where else "")
            hop_row = f"the {hop_position[4:]}" if hop_position.startswith("its ") else None
        label = None
        if self.grounded_key is not None:
            t = next(t for t in self.s.targets if self.grounded_key in t.params)
            label = _label(t.widget.param(self.grounded_key), self.grounded_key)
        return Ground(source=source, where=where, where_short=position, topic=gov.topic, label=label,
                      tab=self.tab_name if label is None else None, hop_row=hop_row)

    def _prompt(self, kind: str, note_name: str, build: dict[str, Any] | None) -> str:
        self._finish_required_widgets()
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
            params: list[tuple[str | None, list[tuple[str, str, str]]]] = [(None, self._pairs(self.s.targets[0],
                                                                                               shared))]
        else:
            params = [(name if names.count(name) == 1 else _nth(name, names[:i].count(name)), self._pairs(t, t.params))
                      for i, (t, name) in enumerate(zip(self.s.targets, names, strict=True)) if t.params]
        t0 = self.s.targets[0]
        stale = None
        if kind == "repair" and lived:
            wrong = {**t0.params, **self.s.seeded_wrong}
            stale = [(_label(t0.widget.param(k), k), _value(x)) for k, x in wrong.items()]
        note = None
        if kind == "read":
            columns = {c.get("field"): c for c in (t0.widget.definition.get("schema_data") or {})
                       .get("table", {}).get("columnsDefs", []) if isinstance(c, dict)}
            note = (note_name, [_label(columns.get(k), k) for k, _ in self.fields])
        twin = None
        if lived and self.twin is not None:
            twin = (t0.name, [(_label(t0.widget.param(k), k), _value(x)) for k, x in self.twin["params"].items()])
        furniture = None
        if self.fix is not None and self.furniture is not None:
            definition = self.furniture
            _, wrong, right = self.fix
            param_of = {str(p.get("paramName")): p for p in (self._furniture_def().option_params)}
            furniture = (definition[1], [(_label(param_of.get(k), k), _value(v)) for k, v in wrong.items()],
                         [(_label(param_of.get(k), k), _value(v)) for k, v in right.items()])
        ask_build = None
        if build is not None:
            label = None
            if build["keyed"] is not None:
                t = next(t for t in self.s.targets if build["keyed"] in t.params)
                label = _label(t.widget.param(build["keyed"]), build["keyed"])
            ask_build = Build(backend=build["backend"], table=build["table"], app=build["app"], tab=build["tab"],
                              keyed=label, tab_like_board=build["tab_like"])
        ask = Ask(kind=kind, dash=self.dash, groups=groups, params=params, phrase=self.f.policy.phrase, stale=stale,
                  note=note, twin=twin, furniture=furniture, keep=lived, ground=self._ground(), build=ask_build,
                  hidden=self.hidden_values())
        phrasing = Phrasing(self.voice, self.ctx.persona.slug, self.slug, level)
        prompt = phrasing.compose(ask)
        if lived and self.s.governance.sets is None:
            prompt += " " + self._legacy_ground(phrasing, kind, note_name)
        return " ".join(prompt.split())

    def _furniture_def(self):
        assert self.furniture is not None
        wid, _, origin, _ = self.furniture
        return next(fx for b in self.ctx.backends if (fx := self.ctx.world.backend(b)) is not None
                    and fx.origin == origin).catalog.widgets[wid]

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
