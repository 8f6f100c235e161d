"""The simulated workspace: one class whose tool methods are the tool contract.

`Workspace.start(world, setup)` builds an episode (baseline + the task's initial state + the default selected
dashboard opened); `ws.call(tool, args)` runs one tool and always returns an envelope. Bad input from the
agent never escapes as an exception: it becomes an error envelope with a stable code and message and is
counted as an invalid call. Exceptions that do escape are bugs in the simulator.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .envelope import Envelope
from .errors import SetupError, ToolError
from .grid import Rect, clamp_to_grid, next_free_y, settle
from .params import sanitize_create, sanitize_update
from .setup import DashboardSeed, GeneratedWidgetSeed, Setup
from .slug import slugify
from .state import CustomBackend, Dashboard, Tab, Widget, stable_hash
from .toolspec import (
    TOOLS,
    AddGenerativeWidgetArgs,
    AssignTasksArgs,
    CreateWidgetArgs,
    GetParamsOptionsArgs,
    GetSkillContentArgs,
    GetWidgetDataArgs,
    GetWorkspacePromptArgs,
    ListAvailableWidgetsArgs,
    ManageAppsArgs,
    ManageBackendsArgs,
    ManageDashboardArgs,
    ManageNavigationBarArgs,
    NavigateWorkspaceArgs,
    NoArgs,
    ReadWorkspaceResourceArgs,
    UpdateWidgetArgs,
    UpdateWidgetLayoutArgs,
    WidgetInstanceArgs,
    WidgetRefArgs,
    describe_validation_error,
    ignored_note,
    tool,
)
from .validation import validate_apps, validate_widgets
from .world import Catalog, Skill, WidgetDef, World

INVALID_ARGUMENTS = "invalid_arguments"
INVALID_REQUEST = "invalid_request"
NOT_FOUND = "not_found"
CONFLICT = "conflict"
VALIDATION_FAILED = "validation_failed"
UNKNOWN_TOOL = "unknown_tool"
TOOL_NOT_ALLOWED = "tool_not_allowed"

INDEX_URI = "openbb://workspace/app-builder/index"
SKILL_URI_PREFIX = "openbb://workspace/skills/"
LAYOUT_KEYS = ("x", "y", "w", "h", "gridData", "tab_id")
GENERATED_SIZES = {"chart": (24.0, 12.0)}
_BASELINE_BUILD = "baseline"  # the first item of a baseline build's key in World.cache
_STARTED = "started"  # World.cache's key for the started workspaces, by setup
STARTED_SIZE = 512
_STARTED_LOCK = threading.Lock()
DEFAULT_GENERATED_SIZE = (20.0, 8.0)


@dataclass(slots=True)
class Connection:
    """A backend connected to the workspace, under an id given in connection order."""

    id: str
    name: str
    url: str
    catalog: Catalog
    kind: str  # "fixture" | "custom" | "declared"

    def copy(self) -> Connection:
        """Its own copy for another episode (a call may replace its catalog); `copy.copy` went through pickling's
        reduce protocol for every connection of every episode started or forked."""
        return Connection(self.id, self.name, self.url, self.catalog, self.kind)

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "url": self.url,
            "status": "connected",
            "widget_count": len(self.catalog.widgets),
            "app_count": len(self.catalog.apps),
        }


@dataclass(slots=True)
class CallRecord:
    tool: str
    args: Any
    ok: bool
    code: str | None = None


@dataclass(slots=True)
class _Seeded:
    """A baseline built once per (world, baseline, connected backends) and shared by every episode."""

    dashboards: list[Dashboard]
    widget_counter: int
    dash_counter: int


@dataclass
class Counters:
    dashboards: int = 0
    widgets: int = 0
    backends: int = 0
    requests: int = 0

    def copy(self) -> Counters:
        # for each episode started or forked: dataclasses.replace costs several times this
        return Counters(self.dashboards, self.widgets, self.backends, self.requests)


class Workspace:
    def __init__(self, world: World) -> None:
        self.world = world
        self.connections: list[Connection] = []
        self.custom: dict[str, CustomBackend] = {}
        self.dashboards: dict[str, Dashboard] = {}
        self.current: str = ""
        self.counters = Counters()
        self.skills: dict[str, Skill] = {}
        self.allowed_tools: frozenset[str] | None = None
        self.calls: list[CallRecord] = []
        self.invalid_calls = 0
        self.initial_dashboards: dict[str, Dashboard] = {}
        self.initial_custom: dict[str, dict[str, Any]] = {}
        self.initial_current: str = ""

    # ================================================================ episode setup
    @classmethod
    def start(
        cls, world: World, setup: Setup | dict[str, Any] | None = None, *, content: str | None = None
    ) -> Workspace:
        """A new episode: baseline + the setup's initial state merged + default_selected_dashboard opened.
        `content`: the setup's `model_dump_json()`, from a caller that has it already (one that never edits a
        setup in place can remember it per setup); else it is serialised here."""
        if setup is None:
            setup = Setup()
        elif isinstance(setup, dict):
            try:
                setup = Setup.model_validate(setup)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise SetupError(".".join(str(p) for p in err["loc"]) or "(root)", err["msg"]) from exc
        # Starting is a pure function of the world and the setup, and a certification starts hundreds of
        # episodes of one setup (every replay, variant and agent): the started workspace is built once and each
        # episode gets a fresh copy of it. Keyed by the setup's content, so a setup edited in place is a new key.
        key = content if content is not None else setup.model_dump_json()
        with _STARTED_LOCK:
            started = world.cache.setdefault(_STARTED, OrderedDict())
            prototype = started.get(key)
            if prototype is not None:
                started.move_to_end(key)
        if prototype is None or type(prototype) is not cls:
            prototype = cls._build(world, setup)
            with _STARTED_LOCK:
                started[key] = prototype
                if len(started) > STARTED_SIZE:
                    started.popitem(last=False)
        return prototype._episode()

    def _shallow(self) -> Workspace:
        """A workspace holding this one's state in containers of its own (`_episode`, `fork`): the connections,
        the dicts a call adds to and the counters are copied, the dashboards themselves shared (frozen ones are
        cloned on their first write)."""
        ws = type(self)(self.world)
        ws.connections = [c.copy() for c in self.connections]
        ws.custom = dict(self.custom)
        ws.dashboards = dict(self.dashboards)
        ws.current = self.current
        ws.counters = self.counters.copy()
        ws.skills = dict(self.skills)
        ws.allowed_tools = self.allowed_tools
        return ws

    def _episode(self) -> Workspace:
        """A new episode in the state this started workspace holds. Its dashboards are frozen (the first write
        clones one), so they are shared; what a call may change in place — a connection's catalog, the
        counters, the dicts a call adds to — is the episode's own."""
        ws = self._shallow()
        ws.initial_dashboards = dict(self.initial_dashboards)
        ws.initial_custom = {k: v.to_dict() for k, v in self.custom.items()}
        ws.initial_current = self.initial_current
        return ws

    def fork(self) -> Workspace:
        """This episode as it is now, twice: the copy and this workspace go on independently. The simulator is
        deterministic, so a caller that would replay the same calls on a fresh episode to reach this state (a
        gate trying many variants of one call list, agents that share their first calls) can fork here
        instead. Copy on write, as `_episode`: this workspace's dashboards are frozen first (the next write of
        either side clones the one it changes), and only the containers a call changes in place are copied —
        the call log and the counters with them, so request ids and the invalid-call count go on as they
        would. What the episode started from (`initial_*`, never changed after the start) is shared."""
        for dash in self.dashboards.values():
            dash.frozen = True
        ws = self._shallow()
        ws.calls = list(self.calls)
        ws.invalid_calls = self.invalid_calls
        ws.initial_dashboards = self.initial_dashboards
        ws.initial_custom = self.initial_custom
        ws.initial_current = self.initial_current
        return ws

    @classmethod
    def _build(cls, world: World, setup: Setup) -> Workspace:
        """Baseline + the setup's initial state merged + default_selected_dashboard opened (`start` copies it)."""
        ws = cls(world)
        ws.allowed_tools = frozenset(setup.allowed_tools) if setup.allowed_tools else None

        baseline = None
        if setup.workspace_baseline:
            baseline = world.baselines.get(setup.workspace_baseline)
            if baseline is None:
                raise SetupError(
                    "workspace_baseline",
                    f"unknown baseline '{setup.workspace_baseline}' "
                    f"(world has: {', '.join(sorted(world.baselines)) or 'none'})",
                )
        backend_names = setup.workspace_backends
        if backend_names is None:
            backend_names = (
                list(baseline.default_backends or world.default_backends)
                if baseline
                else list(world.default_backends)
            )
        fixtures = []
        seen_files: set[str] = set()
        origins: dict[str, str] = {}
        for i, name in enumerate(backend_names):
            fixture = world.backend(name)
            if fixture is None:
                raise SetupError(f"workspace_backends[{i}]", f"unknown backend '{name}'")
            if fixture.file in seen_files:
                continue
            if fixture.origin in origins:
                raise SetupError(
                    f"workspace_backends[{i}]",
                    f"'{name}' serves origin '{fixture.origin}' "
                    f"already served by '{origins[fixture.origin]}'; connect only one of them",
                )
            seen_files.add(fixture.file)
            origins[fixture.origin] = name
            fixtures.append(fixture)
        for fixture in fixtures:
            ws._connect(fixture.origin, f"fixture://{fixture.slug}", fixture.catalog, "fixture")

        for i, slug in enumerate(setup.workspace_skills or []):
            skill = world.skills.get(slug)
            if skill is None:
                raise SetupError(f"workspace_skills[{i}]", f"unknown skill '{slug}'")
            ws.skills[slug] = skill

        state = setup.initial_state
        for i, seed in enumerate(state.custom_backends):
            widgets, wreport = validate_widgets(seed.widgets_json if seed.widgets_json is not None else {})
            apps, areport = validate_apps(seed.apps_json, set(widgets))
            if wreport.errors or areport.errors:
                raise SetupError(
                    f"initial_state.custom_backends[{i}]", "; ".join(wreport.errors + areport.errors)
                )
            conn = ws._connect(
                seed.name,
                seed.url.rstrip("/"),
                Catalog.build(seed.name, widgets, apps),
                "custom",
                backend_id=seed.backend_id,
            )
            ws.custom[conn.id] = CustomBackend(
                conn.id,
                seed.name,
                conn.url,
                widgets,
                apps,
                list(dict.fromkeys(seed.warnings + wreport.warnings + areport.warnings)),
            )

        if baseline is not None:
            seeded = ws._baseline(baseline)
            for dash in seeded.dashboards:
                ws.dashboards[dash.id] = dash
            ws.counters.widgets = seeded.widget_counter
            ws.counters.dashboards = seeded.dash_counter
            ws.current = ws._baseline_active(baseline, seeded)

        task_dashboards = state.seeded_dashboards()
        for i, dseed in enumerate(task_dashboards):
            activate = dseed.activate if dseed.activate is not None else baseline is None
            dash = ws._seed_dashboard(dseed, f"initial_state.dashboards[{i}]")
            ws.dashboards[dash.id] = dash
            if activate:
                ws.current = dash.id
        if not ws.dashboards:
            dash = ws._new_dashboard("Home")
            ws.dashboards[dash.id] = dash
            ws.current = dash.id
        if not ws.current:
            ws.current = next(iter(ws.dashboards))

        if setup.default_selected_dashboard is not None:
            match = next(
                (d for d in ws.dashboards.values() if d.name == setup.default_selected_dashboard), None
            )
            if match is None:
                raise SetupError(
                    "default_selected_dashboard",
                    f"'{setup.default_selected_dashboard}' matches no seeded dashboard",
                )
            ws.current = match.id
            if match.tabs and match.active_tab != match.tabs[0].id:
                ws._mutable(match.id).active_tab = match.tabs[0].id

        for dash in ws.dashboards.values():
            dash.frozen = True
        ws.initial_dashboards = dict(ws.dashboards)
        ws.initial_custom = {k: v.to_dict() for k, v in ws.custom.items()}
        ws.initial_current = ws.current
        return ws

    @staticmethod
    def shared_builds(world: World) -> dict[Any, Any]:
        """The baseline builds cached on `world`, for a world derived from it (a counterfactual copy with other
        documents or one catalog replaced). A build's key names the baseline object and every catalog object it
        was seeded from, so in the derived world a build whose parts were replaced is never hit, and one whose
        parts are shared holds exactly what seeding them again would give (seeding reads nothing else)."""
        return {k: v for k, v in world.cache.items() if isinstance(k, tuple) and k[:1] == (_BASELINE_BUILD,)}

    def _baseline_active(self, baseline: Any, seeded: _Seeded) -> str:
        active = ""
        for seed, dash in zip(baseline.dashboards, seeded.dashboards, strict=True):
            if seed.activate is None or seed.activate:
                active = dash.id
        return active or (seeded.dashboards[0].id if seeded.dashboards else "")

    def _baseline(self, baseline: Any) -> _Seeded:
        # Baselines only reference world fixtures, so the connected fixtures (not a task's custom backends,
        # which are new objects every episode) decide whether a cached build can be shared.
        key = (
            _BASELINE_BUILD,
            baseline.slug,
            id(baseline),
            tuple((c.name, id(c.catalog)) for c in self.connections if c.kind == "fixture"),
        )
        hit = self.world.cache.get(key)
        if hit is None:
            saved = Counters(self.counters.dashboards, self.counters.widgets)
            self.counters.dashboards = self.counters.widgets = 0
            dashboards = []
            for i, seed in enumerate(baseline.dashboards):
                dashboards.append(
                    self._baseline_dashboard(seed, f"baseline '{baseline.slug}' dashboards[{i}]")
                )
            hit = _Seeded(dashboards, self.counters.widgets, self.counters.dashboards)
            self.counters.dashboards, self.counters.widgets = saved.dashboards, saved.widgets
            self.world.cache[key] = hit
        return hit

    def _baseline_dashboard(self, seed: DashboardSeed, where: str) -> Dashboard:
        """One baseline dashboard seeded (frozen), or the one seeded before from the same seed at the same
        counters out of the same catalog widgets. Seeding reads nothing else (the seed, the counters, and for each
        placed widget the origin it resolves to and that widget's definition), so a derived world with one
        catalog replaced (a counterfactual copy exchanging two widgets) seeds again only the dashboards that
        place one of the replaced widgets, instead of the whole baseline. Kept under the baseline builds' key
        (`shared_builds` hands them on)."""
        placed: list[tuple[str, WidgetDef]] = []
        resolved: list[tuple[str, WidgetDef]] | None = placed
        for ws in seed.widgets:
            conn = (
                self._origin_or_none(ws.origin)
                if ws.origin is not None
                else next(iter(c for c in self.connections if ws.widget_id in c.catalog.widgets), None)
            )
            definition = conn.catalog.widgets.get(ws.widget_id) if conn is not None else None
            if (
                conn is None
                or definition is None
                or (
                    ws.origin is None
                    and sum(ws.widget_id in c.catalog.widgets for c in self.connections) != 1
                )
            ):
                resolved = None  # a seed that does not resolve fails as it always did, never from a memo
                break
            placed.append((conn.name, definition))
        key = None
        if resolved is not None:
            key = (
                _BASELINE_BUILD,
                "dashboard",
                id(seed),
                self.counters.dashboards,
                self.counters.widgets,
                tuple((name, id(d)) for name, d in resolved),
            )
            hit = self.world.cache.get(key)
            if hit is not None and hit[0] is seed:
                _, _, dash, dashboards, widgets = hit
                self.counters.dashboards, self.counters.widgets = dashboards, widgets
                return dash
        dash = self._seed_dashboard(seed, where)
        dash.frozen = True
        if key is not None:
            # the seed and the definitions held beside the dashboard, so the ids in the key stay theirs
            self.world.cache[key] = (seed, resolved, dash, self.counters.dashboards, self.counters.widgets)
        return dash

    def _connect(
        self, name: str, url: str, catalog: Catalog, kind: str, backend_id: str | None = None
    ) -> Connection:
        self.counters.backends += 1
        conn = Connection(backend_id or f"backend_{self.counters.backends:03d}", name, url, catalog, kind)
        self.connections.append(conn)
        return conn

    def _next_widget_uuid(self, explicit: str | None = None) -> str:
        self.counters.widgets += 1
        return explicit or f"widget_{self.counters.widgets:03d}"

    def _new_dashboard(self, name: str, dashboard_id: str | None = None) -> Dashboard:
        self.counters.dashboards += 1
        return Dashboard(dashboard_id or f"dash_{self.counters.dashboards:03d}", name, [Tab("", "")], [], "")

    def _seed_dashboard(self, seed: DashboardSeed, where: str) -> Dashboard:
        dash = self._new_dashboard(seed.name, seed.dashboard_id)
        if seed.dashboard_id is not None and seed.dashboard_id in self.dashboards:
            raise SetupError(f"{where}.dashboard_id", f"'{seed.dashboard_id}' is already used")
        if seed.tabs is not None:
            dash.tabs = []
            for t in seed.tabs:
                tab_id = t.id if t.id is not None else slugify(t.name or "")
                if dash.tab(tab_id) is None:
                    dash.tabs.append(Tab(tab_id, t.name if t.name is not None else tab_id))
            dash.active_tab = dash.tabs[0].id if dash.tabs else ""
        dash.navigation_bar = bool(seed.navigation_bar)
        uuids: set[str] = set()
        for j, ws in enumerate(seed.widgets):
            w_where = f"{where}.widgets[{j}]"
            conn = self._seed_origin(ws.origin, ws.widget_id, w_where)
            definition = conn.catalog.widgets.get(ws.widget_id)
            if definition is None:
                raise SetupError(
                    f"{w_where}.widget_id", f"unknown widget '{ws.widget_id}' for backend '{conn.name}'"
                )
            tab_id = self._seed_tab(dash, ws.tab_id)
            widget = _placed(
                definition,
                self._next_widget_uuid(ws.widget_uuid),
                ws.widget_id,
                conn.name,
                tab_id,
                ws.data_args,
                ws.ui_args,
            )
            self._seed_layout(dash, widget, ws.layout)
            if widget.uuid in uuids:
                raise SetupError(f"{w_where}.widget_uuid", f"duplicate widget_uuid '{widget.uuid}'")
            uuids.add(widget.uuid)
            dash.widgets.append(widget)
        for j, gs in enumerate(seed.generated_widgets):
            widget = self._generated(
                dash, gs, self._seed_tab(dash, gs.tab_id), f"{where}.generated_widgets[{j}]"
            )
            if widget.uuid in uuids:
                raise SetupError(
                    f"{where}.generated_widgets[{j}].widget_uuid", f"duplicate widget_uuid '{widget.uuid}'"
                )
            uuids.add(widget.uuid)
            dash.widgets.append(widget)
        return dash

    def _seed_origin(self, origin: str | None, widget_id: str, where: str) -> Connection:
        if origin is not None:
            conn = self._origin_or_none(origin)
            if conn is None:
                raise SetupError(f"{where}.origin", f"backend origin '{origin}' is not connected")
            return conn
        serving = [c for c in self.connections if widget_id in c.catalog.widgets]
        if len(serving) != 1:
            raise SetupError(
                f"{where}.origin",
                f"widget '{widget_id}' needs an origin ({len(serving)} connected backends serve it)",
            )
        return serving[0]

    @staticmethod
    def _seed_tab(dash: Dashboard, tab_id: str | None) -> str:
        if tab_id is None:
            return dash.active_tab if dash.tab(dash.active_tab) else (dash.tabs[0].id if dash.tabs else "")
        if dash.tab(tab_id) is None:
            dash.tabs.append(Tab(tab_id, tab_id))
        return tab_id

    @staticmethod
    def _seed_layout(dash: Dashboard, widget: Widget, layout: Any) -> None:
        layout = layout or None
        x = layout.x if layout is not None and layout.x is not None else 0.0
        w = layout.w if layout is not None and layout.w is not None else widget.w
        h = layout.h if layout is not None and layout.h is not None else widget.h
        if layout is not None and layout.y is not None:
            y = layout.y
        else:
            y = next_free_y((o.rect for o in dash.on_tab(widget.tab_id)), dash.floor)
        widget.x, widget.y, widget.w, widget.h = float(x), float(y), float(w), float(h)
        if layout is not None:
            for key in ("min_w", "min_h", "max_w", "max_h"):
                if getattr(layout, key) is not None:
                    widget.extras[key] = getattr(layout, key)

    def _generated(self, dash: Dashboard, gs: GeneratedWidgetSeed, tab_id: str, where: str) -> Widget:
        kind = gs.widget_type
        if kind not in ("note", "table", "chart", "html"):
            raise SetupError(f"{where}.widget_type", f"'{kind}' is not one of note, table, chart, html")
        w, h = GENERATED_SIZES.get(kind, DEFAULT_GENERATED_SIZE)
        widget = Widget(
            uuid=self._next_widget_uuid(gs.widget_uuid),
            widget_id=f"generated_{kind}",
            origin="generated",
            name=gs.name or kind.title(),
            type=kind,
            tab_id=tab_id,
            x=0.0,
            y=0.0,
            w=w,
            h=h,
            generated=True,
            generated_data=gs.data,
            chart_params=gs.chart_params,
            description=gs.description,
        )
        self._seed_layout(dash, widget, gs.layout)
        return widget

    # ================================================================ dispatch
    def call(self, tool_name: str, args: Any = None) -> Envelope:
        """Run one tool call. Every outcome is an envelope; refused calls are counted as invalid."""
        return Envelope.of(self._answer(tool_name, args))

    def answer(self, tool_name: str, args: Any = None) -> dict[str, Any]:
        """`call(...).to_dict()`: the envelope as the agent reads it. Built as a dict directly (an episode makes
        tens of thousands of calls in a certification, and the model was only ever read back as this dict),
        unless a subclass answers through its own `call`."""
        if type(self).call is not Workspace.call:
            return self.call(tool_name, args).to_dict()
        return self._answer(tool_name, args)

    def _answer(self, tool_name: str, args: Any) -> dict[str, Any]:
        self.counters.requests += 1
        request_id = f"req_{self.counters.requests:04d}"
        spec = TOOLS.get(tool_name) if isinstance(tool_name, str) else None
        if spec is None:
            return self._refuse(
                str(tool_name), args, UNKNOWN_TOOL, f"Unknown tool '{tool_name}'.", request_id
            )
        if self.allowed_tools is not None and tool_name not in self.allowed_tools:
            return self._refuse(
                tool_name,
                args,
                TOOL_NOT_ALLOWED,
                f"Tool '{tool_name}' is not allowed for this task.",
                request_id,
            )
        if args is None:
            args = {}
        if not isinstance(args, dict):
            return self._refuse(
                tool_name,
                args,
                INVALID_ARGUMENTS,
                f"{tool_name}: arguments must be a JSON object.",
                request_id,
            )
        try:
            self._precheck(tool_name, args)
        except ToolError as exc:
            return self._refuse(tool_name, args, exc.code, exc.message, request_id)
        ignored = spec.unknown_keys(args)
        note = f" {ignored_note(ignored)}" if ignored else ""
        try:
            parsed = spec.args_model.model_validate(
                {k: v for k, v in args.items() if k not in ignored} if ignored else args
            )
        except ValidationError as exc:
            return self._refuse(
                tool_name,
                args,
                INVALID_ARGUMENTS,
                describe_validation_error(tool_name, exc) + note,
                request_id,
            )
        try:
            data = spec.method(self, parsed)
        except ToolError as exc:
            return self._refuse(tool_name, args, exc.code, exc.message + note, request_id, exc.retryable)
        self.calls.append(CallRecord(tool_name, args, True))
        return {
            "ok": True,
            "command": tool_name,
            "request_id": request_id,
            "message": f"ok.{note}" if ignored else "ok",
            "data": data,
            "error": None,
        }

    def _refuse(
        self, tool_name: str, args: Any, code: str, message: str, request_id: str, retryable: bool = False
    ) -> dict[str, Any]:
        self.invalid_calls += 1
        self.calls.append(CallRecord(tool_name, args, False, code))
        return {
            "ok": False,
            "command": tool_name,
            "request_id": request_id,
            "message": message,
            "data": None,
            "error": {"code": code, "message": message, "retryable": retryable},
        }

    @staticmethod
    def _precheck(tool_name: str, args: dict[str, Any]) -> None:
        """Keys the source refused (they stay refused although other unknown keys are ignored), with messages
        that say more than a schema failure would."""
        if tool_name == "update_widget":
            ui = args.get("ui_args")
            if ui is None and isinstance(args.get("config"), dict):
                ui = args["config"].get("ui_args")
            if any(k in args for k in LAYOUT_KEYS) or (
                isinstance(ui, dict) and any(k in ui for k in LAYOUT_KEYS)
            ):
                raise ToolError(INVALID_REQUEST, "Use update_widget_layout for layout fields.")
        elif tool_name == "manage_apps" and ("apps_json" in args or "widgets_json" in args):
            raise ToolError(
                INVALID_REQUEST,
                "manage_apps does not publish apps or widgets; publish them with "
                "manage_backends operation='add' or 'refresh', then instantiate with manage_apps.",
            )
        elif (
            tool_name == "manage_navigation_bar"
            and isinstance(args.get("tabs"), list)
            and not all(isinstance(t, dict) and set(t) == {"name"} for t in args["tabs"])
        ):
            raise ToolError(INVALID_ARGUMENTS, "tabs must be objects with only the key name.")

    # ================================================================ views
    @property
    def current_dashboard(self) -> Dashboard:
        return self.dashboards[self.current]

    def workspace_state(self) -> dict[str, Any]:
        return {"current_dashboard_uuid": self.current, "current_tab_id": self.current_dashboard.active_tab}

    def agent_snapshot(self) -> dict[str, Any]:
        return {
            "workspace_state": self.workspace_state(),
            "dashboards": [
                {
                    "dashboard_id": d.id,
                    "name": d.name,
                    "is_active": d.id == self.current,
                    "tab_count": len(d.tabs),
                    "widget_count": len(d.widgets),
                }
                for d in self.dashboards.values()
            ],
            "dashboard_composition": self.current_dashboard.composition(),
            "backends": [c.summary() for c in self.connections],
            "skills": [
                {"slug": s.slug, "name": s.name, "description": s.description} for s in self.skills.values()
            ],
        }

    def snapshot(self) -> dict[str, Any]:
        """The grader's view: every composition, custom backends, and where the agent left off."""
        return {
            "workspace_state": self.workspace_state(),
            "dashboards": [{"dashboard_id": d.id, "name": d.name} for d in self.dashboards.values()],
            "dashboard_compositions": {d.id: d.composition() for d in self.dashboards.values()},
            "dashboard_composition": self.current_dashboard.composition(),
            "backends": [c.summary() for c in self.connections],
            "custom_backends": {k: v.to_dict() for k, v in self.custom.items()},
            "skills": [
                {"slug": s.slug, "name": s.name, "description": s.description} for s in self.skills.values()
            ],
        }

    def state_hash(self) -> str:
        """Stable hash of everything a grader can see; equal for equal states whatever the path."""
        return stable_hash(
            {
                "current": self.current,
                "dashboards": [d.digest() for d in self.dashboards.values()],
                "custom": {k: v.to_dict() for k, v in self.custom.items()},
                "backends": [(c.id, c.name, c.url, c.kind) for c in self.connections],
            }
        )

    def dashboard_payload(self, dash: Dashboard) -> dict[str, Any]:
        return {
            "dashboard_id": dash.id,
            "name": dash.name,
            "dashboard_composition": dash.composition(),
            "session_context": self.workspace_state(),
        }

    # ================================================================ resolution helpers
    def _mutable(self, dashboard_id: str) -> Dashboard:
        dash = self.dashboards[dashboard_id]
        if dash.frozen:
            dash = dash.clone()
            self.dashboards[dashboard_id] = dash
        return dash

    def _dashboard(self, dashboard_id: str | None) -> Dashboard:
        if not dashboard_id:
            return self.current_dashboard
        dash = self.dashboards.get(dashboard_id)
        if dash is None:
            raise ToolError(NOT_FOUND, f"Unknown dashboard_id '{dashboard_id}'.")
        return dash

    def _origin_or_none(self, origin: str) -> Connection | None:
        for conn in reversed(self.connections):
            if conn.name == origin:
                return conn
        return None

    def _origin(self, origin: str) -> Connection:
        conn = self._origin_or_none(origin)
        if conn is None:
            names = ", ".join(dict.fromkeys(c.name for c in self.connections))
            raise ToolError(NOT_FOUND, f"Unknown backend origin '{origin}'. Connected origins: {names}.")
        return conn

    def _widget_def(self, origin: str, widget_id: str) -> WidgetDef:
        conn = self._origin(origin)
        definition = conn.catalog.widgets.get(widget_id)
        if definition is None:
            raise ToolError(NOT_FOUND, f"Unknown widget_id '{widget_id}' for backend '{conn.name}'.")
        return definition

    def _connection(self, backend_id: str | None) -> Connection:
        for conn in self.connections:
            if conn.id == backend_id:
                return conn
        raise ToolError(NOT_FOUND, f"Unknown backend_id '{backend_id or ''}'.")

    def _instance(self, dash: Dashboard, args: WidgetInstanceArgs) -> Widget:
        """The placed widget a call addresses. A widget_uuid wins over widget_id (as in the source); an origin
        given next to either narrows the match to widgets of that backend."""
        if args.widget_uuid:
            for w in dash.widgets:
                if w.uuid == args.widget_uuid:
                    if args.origin is not None and w.origin != args.origin:
                        raise ToolError(
                            NOT_FOUND,
                            f"Widget '{w.uuid}' on dashboard '{dash.id}' has origin "
                            f"'{w.origin}', not '{args.origin}'.",
                        )
                    return w
            raise ToolError(NOT_FOUND, f"Unknown widget_uuid '{args.widget_uuid}' on dashboard '{dash.id}'.")
        if not args.widget_id:
            raise ToolError(
                INVALID_REQUEST, "Give widget_uuid (or widget_id when exactly one instance exists)."
            )
        matches = [
            w
            for w in dash.widgets
            if w.widget_id == args.widget_id and (args.origin is None or w.origin == args.origin)
        ]
        if len(matches) != 1:
            of = f" of origin '{args.origin}'" if args.origin is not None else ""
            raise ToolError(
                NOT_FOUND if not matches else INVALID_REQUEST,
                f"widget_id '{args.widget_id}'{of} matched {len(matches)} widgets on dashboard "
                f"'{dash.id}'; use widget_uuid.",
            )
        return matches[0]

    def _widget_for_write(self, args: WidgetInstanceArgs) -> tuple[Dashboard, Widget]:
        dash = self._dashboard(args.dashboard_id)
        found = self._instance(dash, args)
        dash = self._mutable(dash.id)
        widget = next(w for w in dash.widgets if w.uuid == found.uuid)
        return dash, widget

    def _definition_of(self, widget: Widget) -> WidgetDef | None:
        if widget.generated:
            return None
        conn = self._origin_or_none(widget.origin)
        return conn.catalog.widgets.get(widget.widget_id) if conn else None

    def _place_new(self, dash: Dashboard, widget: Widget) -> None:
        widget.x = 0.0
        widget.y = next_free_y((o.rect for o in dash.on_tab(widget.tab_id)), dash.floor)

    @staticmethod
    def _ensure_active_tab(dash: Dashboard) -> str:
        if dash.tab(dash.active_tab) is None:
            if not dash.tabs:
                dash.tabs.append(Tab("", ""))
            dash.active_tab = dash.tabs[0].id
        return dash.active_tab

    # ================================================================ tools: reading the workspace
    @tool(NoArgs, "read", "showing")
    def get_workspace_snapshot(self, args: NoArgs) -> dict[str, Any]:
        """Describe the workspace: the current dashboard and tab, every dashboard, the current dashboard's
        composition (tabs, widgets, parameters, layouts), connected backends and available skills."""
        return self.agent_snapshot()

    @tool(ManageDashboardArgs, "write", "showing", read_operations=("read",))
    def manage_dashboard(self, args: ManageDashboardArgs) -> dict[str, Any]:
        """Create, read or rename a dashboard. create needs name; update needs dashboard_id and name and only
        renames. Dashboards cannot be deleted."""
        if args.operation == "create":
            if not args.name or not args.name.strip():
                raise ToolError(INVALID_REQUEST, "manage_dashboard operation='create' requires name.")
            if args.dashboard_id and args.dashboard_id in self.dashboards:
                raise ToolError(
                    CONFLICT, f"A dashboard with dashboard_id '{args.dashboard_id}' already exists."
                )
            dash = self._new_dashboard(args.name, args.dashboard_id or None)
            self.dashboards[dash.id] = dash
            if args.activate:
                self.current = dash.id
            return self.dashboard_payload(dash)
        if args.operation == "read":
            return self.dashboard_payload(self._dashboard(args.dashboard_id))
        if not args.dashboard_id or args.name is None:
            raise ToolError(
                INVALID_REQUEST, "manage_dashboard operation='update' requires dashboard_id and name."
            )
        self._dashboard(args.dashboard_id)
        dash = self._mutable(args.dashboard_id)
        dash.name = args.name
        return self.dashboard_payload(dash)

    @tool(ManageNavigationBarArgs, "write")
    def manage_navigation_bar(self, args: ManageNavigationBarArgs) -> dict[str, Any]:
        """Manage a dashboard's tabs: create (replace the tab set), add_tabs, remove_tabs (by name or id), or
        rename_tabs with rename_map {tab_id: new name}. A tab's id is derived from its name at creation and
        never changes; widgets on a removed tab stay in the dashboard but are no longer on any tab."""
        dash = self._dashboard(args.dashboard_id)
        op = args.operation
        if op in ("create", "add_tabs", "remove_tabs") and not args.tabs:
            raise ToolError(INVALID_REQUEST, f"manage_navigation_bar operation='{op}' requires tabs.")
        if op == "rename_tabs":
            if not args.rename_map:
                raise ToolError(INVALID_REQUEST, "rename_tabs requires rename_map.")
            unknown = [t for t in args.rename_map if dash.tab(t) is None]
            if unknown:
                raise ToolError(
                    NOT_FOUND,
                    f"Unknown tab_id '{unknown[0]}' on dashboard '{dash.id}'. "
                    f"Tab ids: {', '.join(repr(t) for t in dash.tab_ids())}.",
                )
            dash = self._mutable(dash.id)
            for tab_id, name in args.rename_map.items():
                dash.tab(tab_id).name = name  # type: ignore[union-attr]
            return self.dashboard_payload(dash)
        tabs = args.tabs or []
        if op == "remove_tabs":
            targets = []
            for t in tabs:
                match = (
                    dash.tab(t.name)
                    or dash.tab(slugify(t.name))
                    or next((x for x in dash.tabs if x.name.casefold() == t.name.casefold()), None)
                )
                if match is None:
                    raise ToolError(NOT_FOUND, f"No tab named '{t.name}' on dashboard '{dash.id}'.")
                targets.append(match.id)
            dash = self._mutable(dash.id)
            dash.tabs = [t for t in dash.tabs if t.id not in targets]
            if dash.tab(dash.active_tab) is None:
                dash.active_tab = dash.tabs[0].id if dash.tabs else ""
            return self.dashboard_payload(dash)
        dash = self._mutable(dash.id)
        if op == "create":
            dash.tabs = []
        for t in tabs:
            tab_id = slugify(t.name)
            if dash.tab(tab_id) is None:
                dash.tabs.append(Tab(tab_id, t.name))
        dash.navigation_bar = True
        if op == "create" or dash.tab(dash.active_tab) is None:
            dash.active_tab = dash.tabs[0].id
        return self.dashboard_payload(dash)

    @tool(NavigateWorkspaceArgs, "write", "showing")
    def navigate_workspace(self, args: NavigateWorkspaceArgs) -> dict[str, Any]:
        """Open a dashboard (operation dashboard, dashboard_id, optional tab_id) or a tab of the current or a
        given dashboard (operation tab, tab_id)."""
        if args.operation == "dashboard" and (
            not args.dashboard_id or args.dashboard_id not in self.dashboards
        ):
            raise ToolError(NOT_FOUND, f"Unknown dashboard_id '{args.dashboard_id or ''}'.")
        dash = self._dashboard(args.dashboard_id)
        tab_id = args.tab_id
        if args.operation == "tab" and tab_id is None:
            raise ToolError(INVALID_REQUEST, "navigate_workspace operation='tab' requires tab_id.")
        if tab_id is not None and dash.tab(tab_id) is None:
            raise ToolError(
                NOT_FOUND,
                f"Unknown tab_id '{tab_id}' on dashboard '{dash.id}'. "
                f"Tab ids: {', '.join(repr(t) for t in dash.tab_ids())}.",
            )
        self.current = dash.id
        if tab_id is not None and dash.active_tab != tab_id:
            self._mutable(dash.id).active_tab = tab_id
        return self.agent_snapshot()

    # ================================================================ tools: the catalog
    @tool(ListAvailableWidgetsArgs, "read")
    def list_available_widgets(self, args: ListAvailableWidgetsArgs) -> dict[str, Any]:
        """List the widgets the connected backends serve: origin, widget_id, name, description, type,
        category, grid size and backend_id. Filter by origin (display name) or backend_id."""
        conns = self.connections
        if args.backend_id is not None:
            conns = [self._connection(args.backend_id)]
        if args.origin is not None:
            conns = [c for c in conns if c.name == args.origin]
        widgets = []
        for conn in conns:
            widgets.extend(conn.catalog.listing(conn.id))
        return {"widgets": widgets}

    @tool(WidgetRefArgs, "read", "widget")
    def get_widget_schema(self, args: WidgetRefArgs) -> dict[str, Any]:
        """The full definition of a catalog widget: params with their types, defaults and options, grid size."""
        return {"schema": self._widget_def(args.origin, args.widget_id).schema()}

    @tool(GetParamsOptionsArgs, "read", "widget")
    def get_params_options(self, args: GetParamsOptionsArgs) -> dict[str, Any]:
        """The declared options of one parameter of a catalog widget."""
        definition = self._widget_def(args.origin, args.widget_id)
        for param in definition.option_params:
            if param.get("paramName") == args.param_name:
                options = param.get("options")
                return {"options": list(options) if isinstance(options, list) else []}
        names = ", ".join(str(p.get("paramName")) for p in definition.option_params) or "none"
        raise ToolError(
            NOT_FOUND,
            f"Widget '{args.widget_id}' has no parameter '{args.param_name}' (parameters: {names}).",
        )

    @tool(GetWidgetDataArgs, "read", "widget", "data")
    def get_widget_data(self, args: GetWidgetDataArgs) -> dict[str, Any]:
        """The rows a widget serves for the given data_args (unset params take their defaults), or the rows of
        a placed widget given its widget_uuid."""
        if args.widget_uuid:
            dash = self._dashboard(args.dashboard_id)
            placed = self._instance(
                dash, WidgetInstanceArgs(widget_uuid=args.widget_uuid, origin=args.origin)
            )
            if placed.generated:
                data = placed.generated_data
                return {"data": data if isinstance(data, list) else [{"content": data}]}
            definition = self._widget_def(placed.origin, placed.widget_id)
            data_args = dict(placed.data_args)
            if args.data_args:
                data_args.update(args.data_args)
        else:
            if not args.origin or not args.widget_id:
                raise ToolError(
                    INVALID_REQUEST, "get_widget_data requires origin and widget_id (or widget_uuid)."
                )
            definition = self._widget_def(args.origin, args.widget_id)
            data_args = args.data_args or {}
        return {"data": _serve_rows(definition, sanitize_create(definition, data_args))}

    # ================================================================ tools: widgets on dashboards
    @tool(CreateWidgetArgs, "write", "placing", "widget")
    def create_widget(self, args: CreateWidgetArgs) -> dict[str, Any]:
        """Add a catalog widget to a dashboard (the current one by default), on its active tab at x=0 below the
        tab's lowest widget. Declared params keep the values given; undeclared keys are dropped; missing
        params take their defaults."""
        dash = self._dashboard(args.dashboard_id)
        definition = self._widget_def(args.origin, args.widget_id)
        dash = self._mutable(dash.id)
        tab_id = self._ensure_active_tab(dash)
        widget = _placed(
            definition,
            self._next_widget_uuid(),
            definition.widget_id,
            definition.origin,
            tab_id,
            args.data_args,
            args.ui_args,
        )
        self._place_new(dash, widget)
        dash.widgets.append(widget)
        return {"widget": widget.to_dict()}

    @tool(UpdateWidgetArgs, "write", "instance", "showing")
    def update_widget(self, args: UpdateWidgetArgs) -> dict[str, Any]:
        """Change a placed widget's data_args or ui_args (merged into the current ones). Values outside a
        param's declared options and undeclared keys are dropped. Layout goes through update_widget_layout."""
        _, widget = self._widget_for_write(args)
        if args.data_args:
            definition = self._definition_of(widget)
            update = sanitize_update(definition, args.data_args) if definition else dict(args.data_args)
            widget.data_args.update(update)
        if args.ui_args:
            widget.ui_args.update(args.ui_args)
        return {"widget": widget.to_dict()}

    @tool(UpdateWidgetLayoutArgs, "write", "instance", "showing")
    def update_widget_layout(self, args: UpdateWidgetLayoutArgs) -> dict[str, Any]:
        """Move or resize a placed widget (x, y, w, h on the 40-column grid; optionally onto another existing
        tab). The widget floats up to the highest free position at its columns; other widgets never move."""
        if args.w <= 0 or args.h <= 0:
            raise ToolError(INVALID_REQUEST, "update_widget_layout requires positive w and h.")
        dash, widget = self._widget_for_write(args)
        if args.tab_id is not None:
            if dash.tab(args.tab_id) is None:
                raise ToolError(
                    NOT_FOUND,
                    f"Unknown tab_id '{args.tab_id}' on dashboard '{dash.id}'. "
                    f"Tab ids: {', '.join(repr(t) for t in dash.tab_ids())}.",
                )
            widget.tab_id = args.tab_id
        wanted = clamp_to_grid(Rect(args.x, args.y, args.w, args.h), dash.floor)
        final = settle(wanted, [o.rect for o in dash.on_tab(widget.tab_id, exclude=widget.uuid)], dash.floor)
        widget.x, widget.y, widget.w, widget.h = final.x, final.y, final.w, final.h
        for key in ("min_w", "min_h", "max_w", "max_h"):
            value = getattr(args, key)
            if value is None:
                widget.extras.pop(key, None)
            else:
                widget.extras[key] = value
        return {"widget": widget.to_dict()}

    @tool(WidgetInstanceArgs, "write", "instance")
    def delete_widget(self, args: WidgetInstanceArgs) -> dict[str, Any]:
        """Remove a placed widget. Nothing else moves."""
        dash, widget = self._widget_for_write(args)
        dash.widgets = [w for w in dash.widgets if w.uuid != widget.uuid]
        return {"deleted_widget_uuid": widget.uuid}

    @tool(WidgetInstanceArgs, "read", "instance", "showing")
    def read_widget(self, args: WidgetInstanceArgs) -> dict[str, Any]:
        """A placed widget: its origin, widget_id, parameters, ui settings, content and layout."""
        dash = self._dashboard(args.dashboard_id)
        return {"widget": self._instance(dash, args).to_dict()}

    @tool(AddGenerativeWidgetArgs, "write", "placing")
    def add_generative_widget(self, args: AddGenerativeWidgetArgs) -> dict[str, Any]:
        """Add a widget authored on the spot: a note or html (string data), or a table or chart (a list of row
        objects; charts also need chart_params {chartType, xKey, yKey}), on an existing tab."""
        kind = args.widget_type
        if kind in ("note", "html") and not isinstance(args.data, str):
            raise ToolError(INVALID_REQUEST, "note and html widgets require string data.")
        if kind in ("table", "chart") and not isinstance(args.data, list):
            raise ToolError(INVALID_REQUEST, "table and chart widgets require array data.")
        if kind == "chart" and args.chart_params is None:
            raise ToolError(INVALID_REQUEST, "chart_params must include chartType, xKey, and yKey.")
        dash = self._dashboard(args.dashboard_id)
        if args.inner_tab is not None:
            match = dash.tab(args.inner_tab) or next(
                (t for t in dash.tabs if t.name.casefold() == args.inner_tab.casefold()), None
            )
            if match is None:
                raise ToolError(
                    NOT_FOUND,
                    f"Unknown inner_tab '{args.inner_tab}' on dashboard '{dash.id}'. "
                    f"Tab ids: {', '.join(repr(t) for t in dash.tab_ids())}.",
                )
            dash = self._mutable(dash.id)
            tab_id = match.id
        else:
            dash = self._mutable(dash.id)
            tab_id = self._ensure_active_tab(dash)
        w, h = GENERATED_SIZES.get(kind, DEFAULT_GENERATED_SIZE)
        widget = Widget(
            uuid=self._next_widget_uuid(),
            widget_id=f"generated_{kind}",
            origin="generated",
            name=args.name or kind.title(),
            type=kind,
            tab_id=tab_id,
            x=0.0,
            y=0.0,
            w=w,
            h=h,
            generated=True,
            generated_data=args.data,
            chart_params=args.chart_params.model_dump() if args.chart_params else None,
            description=args.description,
        )
        self._place_new(dash, widget)
        dash.widgets.append(widget)
        return {"widget": widget.to_dict()}

    # ================================================================ tools: backends and apps
    @tool(ManageBackendsArgs, "write", read_operations=("list",))
    def manage_backends(self, args: ManageBackendsArgs) -> dict[str, Any]:
        """List connected backends; add one (a known fixture by name, or a custom backend with name, url,
        widgets_json and apps_json, validated like the front end does); refresh a custom backend with new
        widgets_json/apps_json; or delete a custom backend."""
        op = args.operation
        if op == "list":
            return {"backends": [c.summary() for c in self.connections]}
        authored = "widgets_json" in args.model_fields_set or "apps_json" in args.model_fields_set
        if op == "add":
            if not args.name or not args.name.strip():
                raise ToolError(INVALID_REQUEST, "manage_backends operation='add' requires name.")
            if not authored:
                return self._add_fixture(args)
            return self._add_custom(args)
        conn = self._connection(args.backend_id) if args.backend_id else None
        if conn is None:
            raise ToolError(NOT_FOUND, f"Unknown backend_id '{args.backend_id or ''}'.")
        if op == "refresh":
            if not authored:
                return {"backend_id": conn.id}
            if conn.kind != "custom":
                raise ToolError(
                    INVALID_REQUEST,
                    "refresh with widgets_json/apps_json is only supported for "
                    "custom backends added with widgets_json.",
                )
            return self._refresh_custom(conn, args)
        if conn.kind == "fixture":
            raise ToolError(INVALID_REQUEST, "manage_backends delete requires a custom backend_id.")
        self.connections = [c for c in self.connections if c.id != conn.id]
        self.custom.pop(conn.id, None)
        return {"message": "Backend deleted.", "backend_id": conn.id}

    def _add_fixture(self, args: ManageBackendsArgs) -> dict[str, Any]:
        fixture = self.world.backend(str(args.name))
        if fixture is None:
            raise ToolError(
                NOT_FOUND,
                f"Unknown fixture backend '{args.name}'. Add a custom backend with url and "
                "widgets_json instead.",
            )
        if self._origin_or_none(fixture.origin) is not None:
            raise ToolError(CONFLICT, f'A backend with the name "{fixture.origin}" already exists.')
        url = (args.url or f"fixture://{fixture.slug}").rstrip("/")
        conn = self._connect(fixture.origin, url, fixture.catalog, "declared", backend_id=args.backend_id)
        self.custom[conn.id] = CustomBackend(conn.id, fixture.origin, url, None, None, [], fixture.slug)
        return {"backend_id": conn.id, "backends": [c.summary() for c in self.connections]}

    def _add_custom(self, args: ManageBackendsArgs) -> dict[str, Any]:
        if not args.url or not args.url.strip():
            raise ToolError(INVALID_REQUEST, "manage_backends operation='add' requires name and url.")
        name = args.name.strip() if args.name else ""
        if self._origin_or_none(name) is not None:
            raise ToolError(CONFLICT, f'A backend with the name "{name}" already exists.')
        if args.widgets_json is None:
            raise ToolError(
                INVALID_REQUEST,
                "manage_backends operation='add' with apps_json also requires "
                "widgets_json (the widgets.json content your backend serves).",
            )
        widgets, apps, warnings = self._validate_payload(args.widgets_json, args.apps_json, "")
        url = args.url.strip().rstrip("/")
        conn = self._connect(name, url, Catalog.build(name, widgets, apps), "custom")
        self.custom[conn.id] = CustomBackend(conn.id, name, url, widgets, apps, warnings)
        return {
            "message": "Backend added.",
            "backend_id": conn.id,
            "backend": {k: v for k, v in conn.summary().items() if k != "status"},
            "validation_warnings": warnings,
        }

    def _refresh_custom(self, conn: Connection, args: ManageBackendsArgs) -> dict[str, Any]:
        current = self.custom[conn.id]
        widgets_in = args.widgets_json if "widgets_json" in args.model_fields_set else current.widgets_json
        apps_in = args.apps_json if "apps_json" in args.model_fields_set else current.apps_json
        widgets, apps, warnings = self._validate_payload(widgets_in, apps_in, "Backend refresh failed: ")
        conn.catalog = Catalog.build(conn.name, widgets, apps)
        self.custom[conn.id] = CustomBackend(conn.id, conn.name, conn.url, widgets, apps, warnings)
        return {
            "message": "Backend refreshed.",
            "backend_id": conn.id,
            "backend": {k: v for k, v in conn.summary().items() if k != "status"},
            "validation_warnings": warnings,
        }

    @staticmethod
    def _validate_payload(widgets_json: Any, apps_json: Any, prefix: str) -> tuple[dict, list, list[str]]:
        widgets, wreport = validate_widgets(widgets_json)
        if wreport.errors:
            raise ToolError(VALIDATION_FAILED, prefix + wreport.summary("Widget validation failed"))
        apps, areport = validate_apps(apps_json, set(widgets))
        if areport.errors:
            raise ToolError(VALIDATION_FAILED, prefix + areport.summary("App validation failed"))
        return widgets, apps, wreport.warnings + areport.warnings

    @tool(ManageAppsArgs, "write", read_operations=("list", "read"))
    def manage_apps(self, args: ManageAppsArgs) -> dict[str, Any]:
        """List the apps a backend serves, read one (app_name or template_id), or instantiate it as a new
        dashboard built from the app's tabs and layouts (dashboard_name optional; activate default true)."""
        conn = self._connection(args.backend_id)
        if args.operation == "list":
            return {"apps": [_app_summary(a) for a in conn.catalog.apps]}
        app = next(
            (
                a
                for a in conn.catalog.apps
                if (args.app_name and a.get("name") == args.app_name)
                or (args.template_id and _template_id(a) == args.template_id)
            ),
            None,
        )
        if app is None:
            served = ", ".join(str(a.get("name")) for a in conn.catalog.apps) or "none"
            wanted = args.app_name or args.template_id or ""
            raise ToolError(NOT_FOUND, f"App '{wanted}' not found. Apps served by this backend: {served}.")
        if args.operation == "read":
            return {"app": app}
        tabs = _dict_or_empty(app.get("tabs"))
        missing = sorted(
            {
                str(item.get("i"))
                for tab in tabs.values()
                if isinstance(tab, dict)
                for item in tab.get("layout") or []
                if isinstance(item, dict)
                and item.get("i") != "navigation_bar"
                and item.get("i") not in conn.catalog.widgets
            }
        )
        if missing:
            raise ToolError(
                INVALID_REQUEST,
                f"Unable to create app because these widgets are unavailable: {', '.join(missing)}",
            )
        dash = self._new_dashboard(args.dashboard_name or str(app.get("name") or "App"))
        dash.tabs = []
        for key, tab in tabs.items():
            tab = tab if isinstance(tab, dict) else {}
            dash.tabs.append(Tab(str(key), str(tab.get("name") or key)))
        dash.active_tab = dash.tabs[0].id if dash.tabs else ""
        if not dash.tabs:
            dash.tabs = [Tab("", "")]
        for key, tab in tabs.items():
            for item in (tab.get("layout") or []) if isinstance(tab, dict) else []:
                if not isinstance(item, dict) or item.get("i") == "navigation_bar":
                    continue
                definition = conn.catalog.widgets[item["i"]]
                gw, gh = definition.grid_size()
                state = _dict_or_empty(item.get("state"))
                dash.widgets.append(
                    Widget(
                        uuid=self._next_widget_uuid(),
                        widget_id=definition.widget_id,
                        origin=conn.name,
                        name=definition.name,
                        type=definition.type,
                        tab_id=str(key),
                        x=float(item.get("x", 0)),
                        y=float(item.get("y", 0)),
                        w=float(item.get("w", gw)),
                        h=float(item.get("h", gh)),
                        data_args=sanitize_create(definition, dict(state.get("params") or {})),
                    )
                )
        self.dashboards[dash.id] = dash
        if args.activate:
            self.current = dash.id
        return self.dashboard_payload(dash)

    # ================================================================ tools: knowledge
    @tool(GetSkillContentArgs, "read", "data", "document")
    def get_skill_content(self, args: GetSkillContentArgs) -> dict[str, Any]:
        """The full text of one of the workspace's skills (slugs are listed in the snapshot)."""
        skill = self.skills.get(args.slug)
        if skill is None:
            raise ToolError(NOT_FOUND, f"Unknown skill slug '{args.slug}'.")
        return skill.public()

    @tool(ReadWorkspaceResourceArgs, "read", "data", "document", "knowledge")
    def read_workspace_resource(self, args: ReadWorkspaceResourceArgs) -> dict[str, Any]:
        """Read a workspace documentation resource by URI; start at openbb://workspace/app-builder/index.
        Skills are also readable as openbb://workspace/skills/<slug>."""
        uri = args.uri
        if uri == INDEX_URI:
            return self._index(self.world.resources.get(uri))
        if uri.startswith(SKILL_URI_PREFIX) and uri[len(SKILL_URI_PREFIX) :] in self.skills:
            skill = self.skills[uri[len(SKILL_URI_PREFIX) :]]
            return {
                "uri": uri,
                "mime_type": "application/json",
                **skill.public(),
                "text": f"{skill.name}: {skill.description} {skill.content}",
            }
        resource = self.world.resources.get(uri)
        if resource is None:
            valid = [
                INDEX_URI,
                *sorted(u for u in self.world.resources if u != INDEX_URI),
                *sorted(SKILL_URI_PREFIX + s for s in self.skills),
            ]
            raise ToolError(
                NOT_FOUND, f"Unknown workspace resource URI '{uri}'. Valid URIs: {', '.join(valid)}."
            )
        return {"uri": uri, "mime_type": "text/markdown", "title": resource.title, "text": resource.text}

    def _index(self, resource: Any) -> dict[str, Any]:
        apps, lines = [], []
        for conn in self.connections:
            entries, said = _index_entries(conn.id, conn.name, conn.catalog.apps)
            apps += [{**e, "tab_ids": list(e["tab_ids"])} for e in entries]  # the caller's own copies
            lines += said
        head = resource.text if resource is not None else "Workspace app builder index"
        text = "\n".join([head, "", "Apps served by the connected backends:", *lines])
        return {"uri": INDEX_URI, "mime_type": "application/json", "text": text, "apps": apps}

    @tool(GetWorkspacePromptArgs, "read", "data", "document", "knowledge")
    def get_workspace_prompt(self, args: GetWorkspacePromptArgs) -> dict[str, Any]:
        """One of the workspace's operating prompts: workspace_tool_usage or workspace_session_context."""
        prompt = self.world.prompts.get(args.name)
        if prompt is None:
            raise ToolError(NOT_FOUND, f"Workspace prompt '{args.name}' is not available in this workspace.")
        return {
            "name": prompt.name,
            "description": prompt.description,
            "messages": [{"role": "user", "content": prompt.text}],
            "text": prompt.text,
        }

    @tool(AssignTasksArgs, "write")
    def assign_tasks_to_agents(self, args: AssignTasksArgs) -> dict[str, Any]:
        """Hand tasks to other agents: task_requests [{id, description, assigned_holder_url,
        assigned_agent_id}]."""
        return {"task_requests": [r.model_dump(exclude_none=True) for r in args.task_requests]}


# The index's entries and lines for one connection's apps, by (backend id, backend name, the apps tuple held): a
# catalog's apps are never changed in place (a refresh builds a new catalog), and the index is read again in every
# episode whose agent looks for an app (each entry slugs its app's name).
_INDEX: dict[tuple[str, str, int], tuple[tuple[dict[str, Any], ...], list[dict[str, Any]], list[str]]] = {}
_INDEX_SIZE = 1024


def _index_entries(
    backend_id: str, backend_name: str, catalog_apps: tuple[dict[str, Any], ...]
) -> tuple[list[dict[str, Any]], list[str]]:
    key = (backend_id, backend_name, id(catalog_apps))
    held = _INDEX.get(key)
    if held is not None and held[0] is catalog_apps:
        return held[1], held[2]
    apps, lines = [], []
    for app in catalog_apps:
        tabs = _dict_or_empty(app.get("tabs"))
        entry: dict[str, Any] = {
            "backend_id": backend_id,
            "backend_name": backend_name,
            "name": app.get("name"),
            "template_id": _template_id(app),
            "description": app.get("description") or "",
            "tab_ids": sorted(str(k) for k in tabs),
        }
        apps.append(entry)
        lines.append(
            f"{backend_name} | {entry['name']} | {entry['template_id']} | {entry['description']} | "
            f"tabs={','.join(entry['tab_ids'])}"
        )
    if len(_INDEX) >= _INDEX_SIZE:
        _INDEX.clear()
    _INDEX[key] = (catalog_apps, apps, lines)
    return apps, lines


def _dict_or_empty(value: Any) -> dict[str, Any]:
    """`value` when the JSON held an object there, else `{}`: catalog files are hand-written and may omit or
    mistype a section, which reads as empty rather than failing the call."""
    return value if isinstance(value, dict) else {}


def _template_id(app: dict[str, Any]) -> str:
    return str(app.get("template_id") or app.get("templateId") or slugify(str(app.get("name") or ""), "app"))


def _app_summary(app: dict[str, Any]) -> dict[str, Any]:
    tabs = _dict_or_empty(app.get("tabs"))
    return {
        "name": app.get("name"),
        "template_id": _template_id(app),
        "description": app.get("description") or "",
        "tab_count": len(tabs),
        "prompt_count": len(app.get("prompts") or []),
        "allow_customization": bool(app.get("allowCustomization", True)),
    }


def _serve_rows(definition: WidgetDef, data_args: dict[str, Any]) -> list[Any]:
    """Rows for a request: samples keyed by arguments, else the baked rows filtered on every requested
    parameter that is also a row column. Rows are bare: they never say which widget they came from."""
    if definition.sample_by_args:
        for sample in definition.sample_by_args:
            if (
                isinstance(sample, dict)
                and isinstance(sample.get("dataArgs"), dict)
                and all(str(data_args.get(k)) == str(v) for k, v in sample["dataArgs"].items())
            ):
                return list(sample.get("data") or [])
        for sample in definition.sample_by_args:
            if (
                isinstance(sample, dict)
                and isinstance(sample.get("dataArgs"), dict)
                and all(
                    str(sample["dataArgs"].get(k)) == str(v)
                    for k, v in data_args.items()
                    if k in sample["dataArgs"]
                )
            ):
                return list(sample.get("data") or [])
    rows = definition.rows
    if rows is None:
        sample = definition.sample_data
        return list(sample) if isinstance(sample, list) else ([] if sample is None else [sample])
    keys = [k for k in data_args if k in _columns(rows)]
    if not keys:
        return [dict(r) if isinstance(r, dict) else r for r in rows]
    want = tuple((k, str(data_args[k])) for k in keys)
    held = _SELECTED.get((id(rows), want))
    if held is None or held[0] is not rows:
        chosen = [r for r in rows if isinstance(r, dict) and all(str(r.get(k)) == v for k, v in want)]
        if len(_SELECTED) >= _COLUMNS_SIZE:
            _SELECTED.clear()
        held = _SELECTED[(id(rows), want)] = (rows, chosen)
    return [dict(r) for r in held[1]]


# The columns of a widget's baked rows, by the rows object (held beside them, so its id stays its own): a
# world's rows are read-only once loaded, and every read of a widget asked for them again.
_COLUMNS: dict[int, tuple[list[Any], frozenset[str]]] = {}
_COLUMNS_SIZE = 4096
# The rows a cut of them selects, by the rows object and the cut (the same reads recur in every episode of a
# task): each served as fresh copies, as before.
_SELECTED: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[list[Any], list[Any]]] = {}


def _columns(rows: list[Any]) -> frozenset[str]:
    held = _COLUMNS.get(id(rows))
    if held is not None and held[0] is rows:
        return held[1]
    columns: set[str] = set()
    for row in rows:
        if isinstance(row, dict):
            columns.update(row)
    if len(_COLUMNS) >= _COLUMNS_SIZE:
        _COLUMNS.clear()
    _COLUMNS[id(rows)] = (rows, frozenset(columns))
    return _COLUMNS[id(rows)][1]


def _placed(
    definition: WidgetDef,
    uuid: str,
    widget_id: str,
    origin: str,
    tab_id: str,
    data_args: dict[str, Any] | None,
    ui_args: dict[str, Any] | None,
) -> Widget:
    """A catalog widget as an instance: its schema's size at the origin (the caller places it), declared
    params kept, undeclared dropped, missing ones backfilled with their defaults."""
    w, h = definition.grid_size()
    return Widget(
        uuid=uuid,
        widget_id=widget_id,
        origin=origin,
        name=definition.name,
        type=definition.type,
        tab_id=tab_id,
        x=0.0,
        y=0.0,
        w=w,
        h=h,
        data_args=sanitize_create(definition, data_args or {}),
        ui_args=dict(ui_args or {}),
    )
