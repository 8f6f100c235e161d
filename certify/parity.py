"""`taskforge parity`: a task's reference replayed in the simulator and on a workspace server, verdicts compared.

The simulator claims to behave like the product; parity tests the claim task by task. For each task:

1. **Eligibility.** A task is refused, with the reason, when its setup cannot be built through public tool calls
   (a custom backend, a seeded layout a move cannot reproduce), when it needs what the server lacks (a tool, an
   argument, a backend origin, a skill), or when its checks read what no public call returns (a custom backend's
   widgets.json).
2. **Seeding through public calls**, on both sides: the task's dashboards (its own and any baseline board it
   touches) are created, their tabs set, their widgets placed and laid out, the opened one activated. On the
   simulator side this runs on a bare simulated workspace and must rebuild the task's own initial state exactly
   (else the task is refused): so both sides start from the same seeding, excluded from the graded trace.
3. **The reference replayed** on both. A server acknowledges a write before it lands, so after each write its
   state is polled until two consecutive snapshots agree (bounded).
4. **Ids normalised**: the task's ids (the simulator's counter ids) map to each side's ids by creation order,
   backend origins through `--origin-map`, tab ids by position; results and states are translated back before
   grading, so both are graded in the task's own terms.
5. **Both graded by the same grader**, and compared check by check: *agree* (same verdict, same evidence),
   *structural* (the shapes differ: a finding, the simulator or the task is wrong) or *data-only* (the product
   serves its own rows and documents: expected). Steps that succeed on one side and fail on the other, and read
   results that differ, are reported the same way.
6. **Cleanup** unless `--keep`: the widgets parity placed are deleted and its dashboards renamed for reuse (the
   product has no dashboard delete). A JSON record per task goes under `.taskforge/parity/<run>/`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from simulator import Dashboard, Setup, Tab, Widget, Workspace, World, reads_only, tools_of

from .episode import FINAL_ANSWER, TraceEvent, reference_calls
from .evaluate import new_run_id
from .grader import CheckFn, CheckResult, GradeResult, grade
from .grader.core import GradeContext, grade_context
from .surface import served_tools
from .task import Task

if TYPE_CHECKING:
    from mcp import Client

DEFAULT_OUT = Path(".taskforge") / "parity"
FREE_NAME = "taskforge parity (free)"
SEED_TOOLS = ("manage_dashboard", "manage_navigation_bar", "navigate_workspace", "get_workspace_snapshot")
# Checks whose evidence is served data (rows, documents): a difference there is expected against the product.
DATA_CODES = frozenset({"missing_tool_result"})
# Reads whose results are served data, compared step by step (a difference is data-only).
DATA_READS = frozenset(tools_of("data"))
Verdict = Literal["agree", "structural", "data_only"]


class ParityError(Exception):
    """The run cannot go on (the server went away mid-task); the task's record says where."""


# --- the two sides --------------------------------------------------------------------------------------------


class Target(Protocol):
    """A workspace reached through its public surface: the simulator in process, or a server over MCP."""

    label: str
    tools: dict[str, dict[str, Any]]  # name -> input schema
    resources: set[str]
    prompts: set[str]

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]: ...


class SimTarget:
    """A bare simulated workspace (the task's backends and skills, nothing seeded), in the simulator's shape."""

    def __init__(self, world: World, task: Task) -> None:
        self.label = "simulator"
        setup = Setup(
            workspace_backends=task.setup.workspace_backends,
            workspace_skills=sorted(world.skills),
        )
        self.workspace = Workspace.start(world, setup)
        self.tools = {
            t["name"]: t["parameters"] for t in served_tools(None, "simulator") if t["name"] != FINAL_ANSWER
        }
        self.resources: set[str] = set()
        self.prompts: set[str] = set()

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.workspace.call(tool, args).to_dict()


class McpTarget:
    """A server over a connected MCP client. A knowledge read the server serves as an MCP resource or prompt
    (the product's shape) is made that way and answered as the knowledge tool's envelope."""

    def __init__(
        self,
        client: Client,
        label: str,
        tools: dict[str, dict[str, Any]],
        resources: set[str],
        prompts: set[str],
    ) -> None:
        self.client = client
        self.label = label
        self.tools = tools
        self.resources = resources
        self.prompts = prompts

    @classmethod
    async def of(cls, client: Client, label: str) -> McpTarget:
        from .surface import observe

        surface = await observe(client)
        return cls(
            client,
            label,
            {t.name: t.input_schema for t in surface.tools},
            {r.uri for r in surface.resources},
            {p.name for p in surface.prompts},
        )

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        try:
            if tool == "read_workspace_resource" and tool not in self.tools:
                read = await self.client.read_resource(str(args.get("uri")))
                content = read.contents[0] if read.contents else None
                text = getattr(content, "text", "") if content is not None else ""
                data = {
                    "uri": args.get("uri"),
                    "mime_type": getattr(content, "mime_type", None),
                    "text": text,
                }
                return _envelope(tool, True, data)
            if tool == "get_workspace_prompt" and tool not in self.tools:
                got = await self.client.get_prompt(str(args.get("name")))
                messages = [{"role": m.role, "content": getattr(m.content, "text", "")} for m in got.messages]
                text = "\n".join(m["content"] for m in messages)
                return _envelope(tool, True, {"name": args.get("name"), "messages": messages, "text": text})
            result = await self.client.call_tool(tool, args)
        except MCPError as exc:
            return _envelope(tool, False, None, message=str(exc), code="mcp_error")
        content = result.structured_content
        if isinstance(content, dict) and "ok" in content:
            return content
        text = "".join(getattr(c, "text", "") for c in result.content)
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "ok" in parsed:
            return parsed
        return _envelope(
            tool, not result.is_error, parsed if parsed is not None else text, message=text[:200]
        )


def _envelope(tool: str, ok: bool, data: Any, *, message: str = "ok", code: str = "error") -> dict[str, Any]:
    return {
        "ok": ok,
        "command": tool,
        "request_id": None,
        "message": message,
        "data": data if ok else None,
        "error": None if ok else {"code": code, "message": message, "retryable": False},
    }


# --- ids ------------------------------------------------------------------------------------------------------


@dataclass
class IdMap:
    """The task's ids (as the certified replay made them) against one side's ids."""

    origins: dict[str, str]
    dashboards: dict[str, str] = field(default_factory=dict)
    widgets: dict[str, str] = field(default_factory=dict)
    backends: dict[str, str] = field(default_factory=dict)
    tabs: dict[str, dict[str, str]] = field(
        default_factory=dict
    )  # task dashboard id -> {task tab -> side tab}

    def back(self) -> IdMap:
        def inv(m: dict[str, str]) -> dict[str, str]:
            return {v: k for k, v in m.items()}

        out = IdMap(inv(self.origins), inv(self.dashboards), inv(self.widgets), inv(self.backends))
        out.tabs = {self.dashboards.get(d, d): inv(t) for d, t in self.tabs.items()}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "dashboards": self.dashboards,
            "widgets": self.widgets,
            "backends": self.backends,
            "tabs": self.tabs,
            "origins": {k: v for k, v in self.origins.items() if k != v},
        }


_DASH_KEYS = ("dashboard_id", "current_dashboard_uuid")
_WIDGET_KEYS = ("widget_uuid", "deleted_widget_uuid")
_TAB_KEYS = ("tab_id", "current_tab_id", "inner_tab")


def translate(value: Any, ids: IdMap, dashboard: str | None, *, strict: bool) -> Any:
    """`value` with every id it carries translated through `ids` (its dashboards, widgets, backends, tabs and
    origins, found by key). `dashboard` is the dashboard a bare tab id belongs to. Untranslatable ids are kept
    (`strict` False: arguments, which may name what the map does not know) or marked `unmapped:` (results: an id
    of the other side's own, which must never pass for one of the task's)."""

    def one(m: dict[str, str], v: Any) -> Any:
        if not isinstance(v, str) or (not v and not strict):
            return v
        if v in m:
            return m[v]
        return f"unmapped:{v}" if strict and v else v

    def walk(node: Any, dash: str | None) -> Any:
        if isinstance(node, list):
            return [walk(n, dash) for n in node]
        if not isinstance(node, dict):
            return node
        here = dash
        for key in _DASH_KEYS:
            if isinstance(node.get(key), str):
                here = node[key]
        out: dict[str, Any] = {}
        for key, v in node.items():
            if key in _DASH_KEYS:
                out[key] = one(ids.dashboards, v)
            elif key in _WIDGET_KEYS:
                out[key] = one(ids.widgets, v)
            elif key == "backend_id":
                out[key] = one(ids.backends, v)
            elif key in ("origin", "backend_name") and isinstance(v, str):
                out[key] = ids.origins.get(v, v)
            elif key in _TAB_KEYS and isinstance(v, str):
                tabs = ids.tabs.get(here or "", {})
                out[key] = tabs.get(v, v)
            elif key == "rename_map" and isinstance(v, dict):
                tabs = ids.tabs.get(here or "", {})
                out[key] = {tabs.get(k, k): walk(x, here) for k, x in v.items()}
            elif key == "tabs" and isinstance(v, list):
                tabs = ids.tabs.get(here or "", {})
                out[key] = [
                    {**walk(t, here), "id": tabs.get(t["id"], t["id"])}
                    if isinstance(t, dict) and isinstance(t.get("id"), str)
                    else walk(t, here)
                    for t in v
                ]
            else:
                out[key] = walk(v, here)
        return out

    return walk(value, dashboard)


# --- reading a side's state -----------------------------------------------------------------------------------


class SideState(BaseModel):
    """What public reads show of a workspace: the open dashboard and tab, every dashboard, and the compositions
    of the dashboards parity follows."""

    model_config = ConfigDict(extra="forbid")

    current: str = ""
    current_tab: str = ""
    dashboards: list[tuple[str, str]] = Field(default_factory=list)
    backends: list[tuple[str, str]] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    compositions: dict[str, dict[str, Any]] = Field(default_factory=dict)


Follow = Callable[[SideState], Iterable[str]]


async def read_state(target: Target, follow: Follow | Iterable[str] = ()) -> SideState:
    """One snapshot, then a `manage_dashboard read` of each followed dashboard the snapshot lists (`follow` may
    name them from the snapshot itself)."""
    snap = await target.call("get_workspace_snapshot", {})
    if not snap.get("ok") or not isinstance(snap.get("data"), dict):
        raise ParityError(f"{target.label}: get_workspace_snapshot failed: {snap.get('message')}")
    data = snap["data"]
    where = data.get("workspace_state") or {}
    state = SideState(
        current=str(where.get("current_dashboard_uuid") or ""),
        current_tab=str(where.get("current_tab_id") or ""),
        dashboards=[(str(d.get("dashboard_id")), str(d.get("name"))) for d in data.get("dashboards") or []],
        backends=[(str(b.get("id")), str(b.get("name"))) for b in data.get("backends") or []],
        skills=[str(s.get("slug")) for s in data.get("skills") or []],
    )
    listed = {d for d, _ in state.dashboards}
    shown = data.get("dashboard_composition")
    for dash_id in dict.fromkeys(follow(state) if callable(follow) else follow):
        if dash_id not in listed:
            continue
        if (
            isinstance(shown, dict) and shown.get("dashboard_id") == dash_id
        ):  # the open one is in the snapshot
            state.compositions[dash_id] = shown
            continue
        read = await target.call("manage_dashboard", {"operation": "read", "dashboard_id": dash_id})
        composition = (read.get("data") or {}).get("dashboard_composition") if read.get("ok") else None
        if not isinstance(composition, dict):
            raise ParityError(
                f"{target.label}: manage_dashboard read of {dash_id} gave no dashboard_composition "
                f"({read.get('message')})"
            )
        state.compositions[dash_id] = composition
    return state


@dataclass
class Poller:
    """Reads a side until two consecutive snapshots agree, at most `rounds` reads after the first."""

    rounds: int = 10
    interval_s: float = 0.5
    unstable: int = 0
    reads: int = 0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def settle(self, target: Target, follow: Follow | Iterable[str]) -> SideState:
        last = await read_state(target, follow)
        self.reads += 1
        for _ in range(self.rounds):
            if self.interval_s:
                await self.sleep(self.interval_s)
            now = await read_state(target, follow)
            self.reads += 1
            if now == last:
                return now
            last = now
        self.unstable += 1
        return last


# --- the certified replay, step by step -----------------------------------------------------------------------


@dataclass
class Made:
    """What one reference step created in the certified replay, in creation order, and where it left off."""

    dashboards: list[str]
    widgets: list[tuple[str, str]]  # (dashboard, uuid)
    tabs: dict[str, list[str]]  # dashboard -> its tab ids, in order, after the step
    current: str


def certified_run(
    world: World, task: Task, registry: dict[str, CheckFn] | None
) -> tuple[Workspace, Workspace, list[Made], GradeResult]:
    """The reference in the simulator as certified: the initial workspace (a copy), the final one, what each
    step made, and the grade."""
    from .episode import start_episode

    episode = start_episode(world, task)
    initial = Workspace.start(world, task.setup)
    made: list[Made] = []
    for tool, args in reference_calls(task):
        if episode.done:
            break
        before_dash = list(episode.workspace.dashboards)
        before_w = {w.uuid for d in episode.workspace.dashboards.values() for w in d.widgets}
        episode.act(tool, args)
        ws = episode.workspace
        made.append(
            Made(
                dashboards=[d for d in ws.dashboards if d not in before_dash],
                widgets=[
                    (d.id, w.uuid)
                    for d in ws.dashboards.values()
                    for w in d.widgets
                    if w.uuid not in before_w
                ],
                tabs={d.id: d.tab_ids() for d in ws.dashboards.values()},
                current=ws.current,
            )
        )
    if task.eval.reference_answer is not None and not episode.done:
        episode.act(FINAL_ANSWER, {"text": task.eval.reference_answer})
    episode.stop("replay_end")
    return initial, episode.workspace, made, grade(task, episode, registry)


# --- eligibility ----------------------------------------------------------------------------------------------


def scope(world: World, task: Task, initial: Workspace) -> list[str]:
    """The dashboards parity builds: the task's own, the one it opens, the one it judges and any it names in its
    reference (a baseline board it does not touch is left out: it cannot differ)."""
    baseline: set[str] = set()
    if task.setup.workspace_baseline:
        bare = Workspace.start(
            world,
            Setup(
                workspace_baseline=task.setup.workspace_baseline,
                workspace_backends=task.setup.workspace_backends,
            ),
        )
        baseline = {
            d
            for d, dash in bare.dashboards.items()
            if d in initial.dashboards and initial.dashboards[d].composition() == dash.composition()
        }
    named: set[str] = set()
    for _, args in reference_calls(task):
        for value in _values(args, "dashboard_id"):
            named.add(value)
    judged = task.eval.judged_dashboard
    keep = []
    for dash_id, dash in initial.dashboards.items():
        if dash_id not in baseline or dash_id == initial.current or dash_id in named or dash.name == judged:
            keep.append(dash_id)
    return keep


def _values(node: Any, key: str) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, str):
                yield v
            else:
                yield from _values(v, key)
    elif isinstance(node, list):
        for v in node:
            yield from _values(v, key)


def refusal(
    task: Task, target: Target, state: SideState, initial: Workspace, origins: dict[str, str]
) -> str | None:
    """Why the task cannot run against `target` (None when it can)."""
    if task.setup.initial_state.custom_backends:
        return "its setup connects a custom backend, which public calls cannot build (it needs a served widgets.json)"
    ev = task.eval
    steps = reference_calls(task)
    if (
        ev.required_widget_defs
        or ev.required_app_defs
        or any(
            t == "manage_backends"
            and isinstance(a, dict)
            and a.get("operation") in ("add", "refresh", "delete", "remove")
            for t, a in steps
        )
    ):
        return "its checks read a custom backend's widgets.json / apps.json, which no public call returns"
    needed = dict.fromkeys([*SEED_TOOLS, *(t for t, _ in steps)])
    if any(w.generated for d in initial.dashboards.values() for w in d.widgets):
        needed["add_generative_widget"] = None
    if any(not w.generated for d in initial.dashboards.values() for w in d.widgets):
        needed["create_widget"] = None
        needed["update_widget_layout"] = None
    for tool in needed:
        if tool in target.tools:
            continue
        if tool == "read_workspace_resource" and target.resources:
            continue
        if tool == "get_workspace_prompt" and target.prompts:
            continue
        return f"the server has no tool {tool}"
    for tool, args in steps:
        schema = target.tools.get(tool)
        if schema is None or not isinstance(args, dict):
            continue
        known = set(schema.get("properties") or {})
        unknown = [k for k in args if k not in known]
        if known and unknown:
            return f"the server's {tool} takes no {', '.join(unknown)}"
        if (
            tool == "read_workspace_resource"
            and tool not in target.tools
            and args.get("uri") not in target.resources
        ):
            return f"the server lists no resource {args.get('uri')}"
        if (
            tool == "get_workspace_prompt"
            and tool not in target.tools
            and args.get("name") not in target.prompts
        ):
            return f"the server lists no prompt {args.get('name')}"
        if tool == "get_skill_content" and args.get("slug") not in state.skills:
            return f"the server has no skill {args.get('slug')}"
    served = {name for _, name in state.backends}
    used = {w.origin for d in initial.dashboards.values() for w in d.widgets if not w.generated}
    used |= {v for _, a in steps for v in _values(a, "origin")}
    for origin in sorted(used):
        if origins.get(origin, origin) not in served:
            return f"the server has no backend '{origins.get(origin, origin)}' (map it with --origin-map '{origin}=NAME')"
    return None


# --- seeding --------------------------------------------------------------------------------------------------


@dataclass
class Side:
    """One side of a parity run: its target, its id map, the calls made and what they showed."""

    target: Target
    ids: IdMap
    poller: Poller
    seed_calls: int = 0
    events: list[TraceEvent] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    made_here: list[str] = field(default_factory=list)  # the side's dashboards parity made (for cleanup)
    start_dashboard: str = ""
    untracked: set[str] = field(default_factory=set)  # the side's dashboards that were there before parity
    last: SideState | None = None  # the state after the last write, settled

    async def seed_call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.seed_calls += 1
        envelope = await self.target.call(tool, args)
        if not envelope.get("ok"):
            raise SeedError(f"{tool} {json.dumps(args, default=str)[:200]}: {envelope.get('message')}")
        return envelope

    def follow(self, state: SideState) -> list[str]:
        """The side's dashboards parity knows, and any it did not have before parity began."""
        mine = list(self.ids.dashboards.values())
        return [*mine, *(d for d, _ in state.dashboards if d not in mine and d not in self.untracked)]

    async def settle(self) -> SideState:
        self.last = await self.poller.settle(self.target, self.follow)
        return self.last


class SeedError(Exception):
    """A seeding call the side refused: the task cannot be built there."""


def _tab_list(composition: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in composition.get("tabs") or [] if isinstance(t, dict)]


def _widget_uuids(composition: dict[str, Any]) -> list[str]:
    return [str(w.get("widget_uuid")) for w in composition.get("widgets") or [] if isinstance(w, dict)]


async def seed(side: Side, initial: Workspace, dashboards: list[str]) -> None:
    """Build the task's dashboards on `side` through public calls, mapping ids as they are made."""
    target, ids = side.target, side.ids
    for dash_id in dashboards:
        dash = initial.dashboards[dash_id]
        before = await read_state(target, ())
        known = {d for d, _ in before.dashboards}
        made = await side.seed_call(
            "manage_dashboard", {"operation": "create", "name": dash.name, "activate": True}
        )
        new_id = (made.get("data") or {}).get("dashboard_id")
        if not isinstance(new_id, str) or new_id in known:
            state = await side.settle()
            fresh = [d for d, _ in state.dashboards if d not in known]
            if len(fresh) != 1:
                raise SeedError(f"creating dashboard '{dash.name}' made {len(fresh)} new dashboards")
            new_id = fresh[0]
        ids.dashboards[dash_id] = new_id
        side.made_here.append(new_id)
        state = await side.settle()
        tabs = _tab_list(state.compositions[new_id])
        wanted = [t for t in dash.tabs]
        if not (len(wanted) == 1 and wanted[0].id == "" and wanted[0].name == "" and not dash.navigation_bar):
            if len(wanted) == 1 and not dash.navigation_bar and len(tabs) == 1:
                await side.seed_call(
                    "manage_navigation_bar",
                    {
                        "operation": "rename_tabs",
                        "dashboard_id": new_id,
                        "rename_map": {str(tabs[0].get("id")): wanted[0].name},
                    },
                )
            else:
                await side.seed_call(
                    "manage_navigation_bar",
                    {
                        "operation": "create",
                        "dashboard_id": new_id,
                        "tabs": [{"name": t.name} for t in wanted],
                    },
                )
            state = await side.settle()
            tabs = _tab_list(state.compositions[new_id])
        ids.tabs[dash_id] = {t.id: str(s.get("id")) for t, s in zip(dash.tabs, tabs, strict=False)}
        order = sorted(
            dash.widgets,
            key=lambda w: (dash.tab_ids().index(w.tab_id) if w.tab_id in dash.tab_ids() else 0, w.y, w.x),
        )
        active = state.current_tab
        for widget in order:
            tab = ids.tabs[dash_id].get(widget.tab_id, widget.tab_id)
            seen = set(_widget_uuids(state.compositions[new_id]))
            if widget.generated:
                args: dict[str, Any] = {
                    "widget_type": widget.type,
                    "data": widget.generated_data,
                    "name": widget.name,
                    "inner_tab": tab,
                    "dashboard_id": new_id,
                }
                if widget.description:
                    args["description"] = widget.description
                if widget.chart_params:
                    args["chart_params"] = widget.chart_params
                await side.seed_call("add_generative_widget", args)
            else:
                if tab != active:
                    await side.seed_call(
                        "navigate_workspace", {"operation": "tab", "dashboard_id": new_id, "tab_id": tab}
                    )
                    active = tab
                args = {
                    "origin": ids.origins.get(widget.origin, widget.origin),
                    "widget_id": widget.widget_id,
                    "dashboard_id": new_id,
                    "data_args": dict(widget.data_args),
                }
                if widget.ui_args:
                    args["ui_args"] = dict(widget.ui_args)
                await side.seed_call("create_widget", args)
            state = await side.settle()
            fresh = [u for u in _widget_uuids(state.compositions[new_id]) if u not in seen]
            if len(fresh) != 1:
                raise SeedError(f"placing {widget.widget_id} made {len(fresh)} new widgets")
            ids.widgets[widget.uuid] = fresh[0]
            placed = next(
                w for w in state.compositions[new_id]["widgets"] if w.get("widget_uuid") == fresh[0]
            )
            layout = placed.get("layout") or {}
            want = {"x": widget.x, "y": widget.y, "w": widget.w, "h": widget.h}
            extras = {k: v for k, v in widget.extras.items() if k in ("min_w", "min_h", "max_w", "max_h")}
            if extras or any(float(layout.get(k, -1)) != float(v) for k, v in want.items()):
                await side.seed_call(
                    "update_widget_layout",
                    {"widget_uuid": fresh[0], "dashboard_id": new_id, **want, **extras},
                )
                state = await side.settle()
    opened = initial.current
    if opened in ids.dashboards:
        dash = initial.dashboards[opened]
        open_tab = ids.tabs.get(opened, {}).get(dash.active_tab)
        args = {"operation": "dashboard", "dashboard_id": ids.dashboards[opened]}
        if open_tab is not None and dash.tab(dash.active_tab) is not None:
            args["tab_id"] = open_tab
        await side.seed_call("navigate_workspace", args)


# --- from a side's state to the grader's workspace ------------------------------------------------------------


def _num(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def dashboard_of(composition: dict[str, Any], active_tab: str = "") -> Dashboard:
    """A composition as public reads show it, as the simulator's Dashboard (the grader's input)."""
    tabs = [Tab(str(t.get("id", "")), str(t.get("name", ""))) for t in _tab_list(composition)]
    widgets = []
    for w in composition.get("widgets") or []:
        if not isinstance(w, dict):
            continue
        layout = w.get("layout") or {}
        widgets.append(
            Widget(
                uuid=str(w.get("widget_uuid")),
                widget_id=str(w.get("widget_id")),
                origin=str(w.get("origin")),
                name=str(w.get("name") or ""),
                type=str(w.get("type") or ""),
                tab_id=str(layout.get("tab_id", "")),
                x=_num(layout.get("x")),
                y=_num(layout.get("y")),
                w=_num(layout.get("w")),
                h=_num(layout.get("h")),
                data_args=dict(w.get("data_args") or {}),
                ui_args=dict(w.get("ui_args") or {}),
                generated=bool(w.get("generated")),
                generated_data=w.get("generated_data"),
                chart_params=w.get("chart_params"),
                description=w.get("description"),
                extras={
                    k: layout[k] for k in ("min_w", "min_h", "max_w", "max_h") if layout.get(k) is not None
                },
            )
        )
    return Dashboard(
        str(composition.get("dashboard_id")),
        str(composition.get("name") or ""),
        tabs,
        widgets,
        active_tab,
        bool(composition.get("navigation_bar")),
    )


def normalised(state: SideState, back: IdMap) -> dict[str, Dashboard]:
    out: dict[str, Dashboard] = {}
    for side_id, composition in state.compositions.items():
        own = back.dashboards.get(side_id)
        if own is None:
            continue
        translated = translate(composition, back, side_id, strict=True)
        tab = back.tabs.get(side_id, {}).get(state.current_tab, "") if side_id == state.current else ""
        out[own] = dashboard_of(translated, tab)
    return out


def graded_workspace(
    world: World,
    certified_initial: Workspace,
    initial: dict[str, Dashboard],
    final: dict[str, Dashboard],
    initial_current: str,
    current: str,
) -> Workspace:
    """The grader's view of a side: its dashboards in the task's ids, the task's backends."""
    ws = Workspace(world)
    ws.connections = list(certified_initial.connections)
    ws.dashboards = dict(final)
    ws.initial_dashboards = dict(initial)
    ws.initial_current = initial_current
    ws.current = current if current in ws.dashboards else f"unmapped:{current}"
    if ws.current not in ws.dashboards:
        ws.dashboards[ws.current] = Dashboard(
            ws.current, "(a dashboard parity does not follow)", [Tab("", "")], []
        )
    return ws


# --- the records ----------------------------------------------------------------------------------------------


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SideVerdict(_Record):
    passed: bool
    share: float
    failure_codes: list[str] = Field(default_factory=list)


class CheckParity(_Record):
    code: str
    label: str
    group: str
    verdict: Verdict
    simulator: dict[str, Any] | None
    server: dict[str, Any] | None


class StepParity(_Record):
    index: int
    tool: str
    verdict: Verdict
    what: str
    simulator: Any = None
    server: Any = None


class TaskParity(_Record):
    task_id: str
    level: str
    server: str
    status: Literal["agree", "structural", "data_only", "refused", "error"]
    reason: str | None = None
    certified: SideVerdict | None = None
    simulator: SideVerdict | None = None
    on_server: SideVerdict | None = None
    checks: list[CheckParity] = Field(default_factory=list)
    steps: list[StepParity] = Field(default_factory=list)
    ids: dict[str, Any] = Field(default_factory=dict)
    seed_calls: dict[str, int] = Field(default_factory=dict)
    polls: dict[str, int] = Field(default_factory=dict)
    cleanup: list[str] = Field(default_factory=list)
    duration_s: float = 0.0

    def disagreements(self) -> list[CheckParity | StepParity]:
        records: list[CheckParity | StepParity] = [*self.checks, *self.steps]
        return [c for c in records if c.verdict != "agree"]


def _verdict(result: GradeResult) -> SideVerdict:
    return SideVerdict(passed=result.passed, share=round(result.share, 4), failure_codes=result.failure_codes)


def compare_checks(sim: GradeResult, server: GradeResult) -> list[CheckParity]:
    def keyed(result: GradeResult) -> dict[tuple[str, str], CheckResult]:
        out: dict[tuple[str, str], CheckResult] = {}
        for c in result.checks:
            key = (c.code, c.label)
            n = 1
            while key in out:
                n += 1
                key = (c.code, f"{c.label} #{n}")
            out[key] = c
        return out

    a, b = keyed(sim), keyed(server)
    rows = []
    for key in dict.fromkeys([*a, *b]):
        left, right = a.get(key), b.get(key)
        same = (
            left is not None
            and right is not None
            and (left.passed, left.evidence) == (right.passed, right.evidence)
        )
        code = key[0]
        verdict: Verdict = "agree" if same else ("data_only" if code in DATA_CODES else "structural")
        rows.append(
            CheckParity(
                code=code,
                label=key[1],
                group=(left or right).group,  # type: ignore[union-attr]
                verdict=verdict,
                simulator={"passed": left.passed, "evidence": left.evidence} if left else None,
                server={"passed": right.passed, "evidence": right.evidence} if right else None,
            )
        )
    return rows


# --- one side's replay ----------------------------------------------------------------------------------------


async def replay_side(side: Side, task: Task, made: list[Made], initial: Workspace) -> SideState:
    """The reference on one side, ids translated both ways; returns the settled final state."""
    target, ids = side.target, side.ids
    current = initial.current
    for index, ((tool, args), step) in enumerate(zip(reference_calls(task), made, strict=False), start=1):
        dash_ctx = (
            args.get("dashboard_id")
            if isinstance(args, dict) and isinstance(args.get("dashboard_id"), str)
            else current
        )
        sent = translate(args, ids, dash_ctx, strict=False)
        envelope = await target.call(tool, sent)
        if not reads_only(tool, args):
            before = side.last or await read_state(target, side.follow)
            after = await side.settle()
            _map_new(side, before, after, step, index, tool)
            _map_tabs(side, after, step)
        current = step.current
        back = ids.back()
        shown = translate(
            envelope,
            back,
            ids.dashboards.get(dash_ctx, dash_ctx) if dash_ctx is not None else None,
            strict=True,
        )
        side.events.append(TraceEvent(index, tool, args, bool(envelope.get("ok")), shown))
    if task.eval.reference_answer is not None:
        done = {
            "ok": True,
            "command": FINAL_ANSWER,
            "request_id": None,
            "message": "Final answer recorded (by parity: the server has no final_answer).",
            "data": None,
            "error": None,
        }
        side.events.append(
            TraceEvent(len(side.events) + 1, FINAL_ANSWER, {"text": task.eval.reference_answer}, True, done)
        )
    return await side.settle()


def _map_new(side: Side, before: SideState, after: SideState, step: Made, index: int, tool: str) -> None:
    ids = side.ids
    old = {d for d, _ in before.dashboards}
    fresh = [d for d, _ in after.dashboards if d not in old]
    for own, theirs in zip(step.dashboards, fresh, strict=False):
        ids.dashboards[own] = theirs
        side.made_here.append(theirs)
    if len(fresh) != len(step.dashboards):
        side.findings.append(
            {
                "index": index,
                "tool": tool,
                "what": "dashboards created",
                "simulator": len(step.dashboards),
                "server": len(fresh),
            }
        )
    seen = {u for c in before.compositions.values() for u in _widget_uuids(c)}
    order = [d for d, _ in after.dashboards]
    new_widgets = [
        u
        for d in order
        if d in after.compositions
        for u in _widget_uuids(after.compositions[d])
        if u not in seen
    ]
    for (_, own), theirs in zip(step.widgets, new_widgets, strict=False):
        ids.widgets[own] = theirs
    if len(new_widgets) != len(step.widgets):
        side.findings.append(
            {
                "index": index,
                "tool": tool,
                "what": "widgets created",
                "simulator": len(step.widgets),
                "server": len(new_widgets),
            }
        )


def _map_tabs(side: Side, after: SideState, step: Made) -> None:
    for own, tab_ids in step.tabs.items():
        theirs = side.ids.dashboards.get(own)
        if theirs is None or theirs not in after.compositions:
            continue
        listed = [str(t.get("id")) for t in _tab_list(after.compositions[theirs])]
        side.ids.tabs[own] = dict(zip(tab_ids, listed, strict=False))


# --- the run --------------------------------------------------------------------------------------------------


@dataclass
class ParityOptions:
    origin_map: dict[str, str] = field(default_factory=dict)
    keep: bool = False
    poll_rounds: int = 10
    poll_interval_s: float = 0.5
    registry: dict[str, CheckFn] | None = None


async def _prepare(
    side: Side, certified_initial: Workspace, dashboards: list[str], origins: dict[str, str]
) -> tuple[SideState, dict[str, Dashboard]]:
    start = await read_state(side.target, ())
    side.start_dashboard = start.current
    side.untracked = {d for d, _ in start.dashboards}
    by_name = {name: bid for bid, name in start.backends}
    for conn in certified_initial.connections:
        served = by_name.get(origins.get(conn.name, conn.name))
        if served is not None:
            side.ids.backends[conn.id] = served
    await seed(side, certified_initial, dashboards)
    seeded = await side.settle()
    return seeded, normalised(seeded, side.ids.back())


async def _cleanup(side: Side) -> list[str]:
    done = []
    state = await read_state(side.target, side.made_here)
    for dash_id in dict.fromkeys(side.made_here):
        composition = state.compositions.get(dash_id)
        if composition is None:
            continue
        for uuid in _widget_uuids(composition):
            envelope = await side.target.call("delete_widget", {"widget_uuid": uuid, "dashboard_id": dash_id})
            if not envelope.get("ok"):
                done.append(f"{dash_id}: could not delete {uuid}: {envelope.get('message')}")
        envelope = await side.target.call(
            "manage_dashboard", {"operation": "update", "dashboard_id": dash_id, "name": FREE_NAME}
        )
        done.append(
            f"{dash_id}: emptied and renamed '{FREE_NAME}'"
            if envelope.get("ok")
            else f"{dash_id}: rename failed: {envelope.get('message')}"
        )
    if side.start_dashboard and side.start_dashboard in {d for d, _ in state.dashboards}:
        await side.target.call(
            "navigate_workspace", {"operation": "dashboard", "dashboard_id": side.start_dashboard}
        )
    return done


async def run_task(world: World, task: Task, server: Target, options: ParityOptions) -> TaskParity:
    """One task, on the simulator (in process) and on `server`."""
    started = time.perf_counter()
    record = TaskParity(task_id=task.id, level=task.difficulty, server=server.label, status="refused")
    initial, _, made, certified = certified_run(world, task, options.registry)
    record.certified = _verdict(certified)
    dashboards = scope(world, task, initial)
    origins = dict(options.origin_map)
    sim = Side(
        SimTarget(world, task),
        IdMap({o: o for o in _origins(initial)}),
        Poller(rounds=options.poll_rounds, interval_s=0),
    )
    theirs = Side(
        server,
        IdMap({o: origins.get(o, o) for o in _origins(initial)}),
        Poller(rounds=options.poll_rounds, interval_s=options.poll_interval_s),
    )
    try:
        server_start = await read_state(server, ())
        why = refusal(task, server, server_start, initial, origins)
        if why is not None:
            record.reason = why
            return record
        try:
            _, sim_seeded = await _prepare(sim, initial, dashboards, {})
        except SeedError as exc:
            record.reason = f"public calls cannot build its setup: {exc}"
            return record
        mismatch = _seed_mismatch(initial, dashboards, sim_seeded)
        if mismatch:
            record.reason = f"public calls cannot build its setup exactly: {mismatch}"
            return record
        try:
            _, server_seeded = await _prepare(theirs, initial, dashboards, origins)
        except SeedError as exc:
            record.status, record.reason = "structural", f"seeding on the server failed: {exc}"
            record.cleanup = [] if options.keep else await _cleanup(theirs)
            return record
        sides = []
        for side, seeded in ((sim, sim_seeded), (theirs, server_seeded)):
            final_state = await replay_side(side, task, made, initial)
            back = side.ids.back()
            final = normalised(final_state, back)
            current = back.dashboards.get(final_state.current, f"unmapped:{final_state.current}")
            ws = graded_workspace(world, initial, seeded, final, initial.current, current)
            sides.append(
                grade_context(
                    GradeContext(task, ws, side.events, task.eval.reference_answer), options.registry
                )
            )
        sim_grade, server_grade = sides
        record.simulator, record.on_server = _verdict(sim_grade), _verdict(server_grade)
        record.checks = compare_checks(sim_grade, server_grade)
        record.steps = _compare_steps(sim, theirs)
        record.ids = theirs.ids.to_dict()
        record.seed_calls = {"simulator": sim.seed_calls, "server": theirs.seed_calls}
        record.polls = {"reads": theirs.poller.reads, "unstable": theirs.poller.unstable}
        differing = record.disagreements()
        if sim_grade.passed != certified.passed or sim_grade.fingerprint() != certified.fingerprint():
            record.status = "refused"
            record.reason = (
                "replayed through public calls the simulator grades it differently from its certified replay "
                f"({', '.join(sim_grade.failure_codes) or 'pass'} vs {', '.join(certified.failure_codes) or 'pass'})"
            )
        elif any(d.verdict == "structural" for d in differing):
            record.status = "structural"
        else:
            record.status = "data_only" if differing else "agree"
        if not options.keep:
            record.cleanup = await _cleanup(theirs)
        return record
    except ParityError as exc:
        record.status, record.reason = "error", str(exc)
        return record
    finally:
        record.duration_s = round(time.perf_counter() - started, 3)


def _origins(ws: Workspace) -> list[str]:
    return [c.name for c in ws.connections]


def _seed_mismatch(initial: Workspace, dashboards: list[str], seeded: dict[str, Dashboard]) -> str | None:
    for dash_id in dashboards:
        want = initial.dashboards[dash_id].composition()
        got = seeded.get(dash_id)
        if got is None:
            return f"dashboard {dash_id} was not built"
        have = got.composition()
        if _unordered(want) == _unordered(have):
            continue
        for key in ("name", "navigation_bar", "tabs"):
            if want[key] != have[key]:
                return f"{dash_id} {key}: the task has {_brief(want[key])}, public calls give {_brief(have[key])}"
        for a, b in zip(_unordered(want)["widgets"], _unordered(have)["widgets"], strict=False):
            if a != b:
                diff = {k: (a.get(k), b.get(k)) for k in a if a.get(k) != b.get(k)}
                return f"widget {a.get('widget_uuid')}: " + "; ".join(
                    f"{k} {_brief(x)} vs {_brief(y)}" for k, (x, y) in diff.items()
                )
        return f"{dash_id}: widgets differ ({len(want['widgets'])} vs {len(have['widgets'])})"
    return None


def _unordered(composition: dict[str, Any]) -> dict[str, Any]:
    """A composition with its widgets in uuid order: seeding places them top first, whatever the task's order
    (the grader does not read the order)."""
    out = dict(composition)
    out["widgets"] = sorted(composition["widgets"], key=lambda w: str(w.get("widget_uuid")))
    out["tabs"] = [
        {**t, "layout": sorted(t["layout"], key=lambda w: str(w.get("widget_uuid")))}
        for t in composition["tabs"]
    ]
    return out


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _compare_steps(sim: Side, server: Side) -> list[StepParity]:
    out: list[StepParity] = []
    for a, b in zip(sim.events, server.events, strict=False):
        if a.ok != b.ok:
            out.append(
                StepParity(
                    index=a.index,
                    tool=a.tool,
                    verdict="structural",
                    what="the call succeeded on one side only",
                    simulator=_said(a),
                    server=_said(b),
                )
            )
        elif a.ok and a.tool in DATA_READS:
            da, db = (a.envelope.get("data"), b.envelope.get("data"))
            if _served(a.tool, da) != _served(b.tool, db):
                out.append(
                    StepParity(
                        index=a.index,
                        tool=a.tool,
                        verdict="data_only",
                        what="the served data differ",
                        simulator=_served(a.tool, da),
                        server=_served(b.tool, db),
                    )
                )
    for finding in server.findings:
        mine = next(
            (f for f in sim.findings if f["index"] == finding["index"] and f["what"] == finding["what"]), None
        )
        if mine is None:
            out.append(
                StepParity(
                    index=finding["index"],
                    tool=finding["tool"],
                    verdict="structural",
                    what=finding["what"],
                    simulator=finding["simulator"],
                    server=finding["server"],
                )
            )
    return out


def _said(event: TraceEvent) -> str:
    error = event.envelope.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return f"{'ok' if event.ok else 'refused'}{f' ({code})' if code else ''}: {event.envelope.get('message')}"


def _served(tool: str, data: Any) -> Any:
    """What a data read served: rows, or a document's text."""
    if isinstance(data, dict):
        if tool == "get_widget_data":
            return data.get("data")
        return data.get("text") if "text" in data else data.get("content")
    return data


# --- many tasks -----------------------------------------------------------------------------------------------


class ParitySummary(_Record):
    run_id: str
    server: str
    tasks: int
    agree: int
    data_only: int
    structural: int
    refused: int
    error: int
    records: list[str]

    @property
    def ok(self) -> bool:
        return self.structural == 0 and self.error == 0


def summarise(run_id: str, server: str, records: list[TaskParity], paths: list[Path]) -> ParitySummary:
    count = {
        s: sum(1 for r in records if r.status == s)
        for s in ("agree", "data_only", "structural", "refused", "error")
    }
    return ParitySummary(
        run_id=run_id, server=server, tasks=len(records), records=[str(p) for p in paths], **count
    )


def write_records(out_dir: Path, run_id: str, records: list[TaskParity]) -> tuple[Path, list[Path]]:
    folder = out_dir / run_id
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in records:
        path = folder / f"{r.task_id}.json"
        path.write_text(r.model_dump_json(indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return folder, paths


async def run_parity(
    world: World,
    tasks: list[Task],
    connect: Callable[[], Any],
    options: ParityOptions,
    *,
    progress: Callable[[TaskParity], None] | None = None,
) -> list[TaskParity]:
    """Every task, each on its own connection (`connect()` is an async context manager yielding a Target)."""
    out = []
    for task in tasks:
        async with connect() as target:
            record = await run_task(world, task, target, options)
        out.append(record)
        if progress is not None:
            progress(record)
    return out


__all__ = [
    "DEFAULT_OUT",
    "FREE_NAME",
    "McpTarget",
    "ParityError",
    "ParityOptions",
    "SimTarget",
    "TaskParity",
    "new_run_id",
    "run_parity",
    "run_task",
    "summarise",
    "write_records",
]
