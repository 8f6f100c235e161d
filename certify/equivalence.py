"""Valid variants of a task's reference: other solutions a careful agent could equally give.

A certified task must pass every one of them; a variant that fails names a check that is over-strict for the
task (it grades something the prompt does not ask for, or something two valid solutions do differently).
Variants are generated from the reference by kind — a registry, one function per kind — with the help of a
probe: one instrumented replay of the reference that records, before each step, what the step addresses
(the placed widget an update names, the dashboard that is open), so a variant can, for instance, drop the
parameters a repair leaves unchanged.

Kinds: minimal-diff repairs; the other documented addressing form of a call; independent steps reordered;
harmless reads inserted within the turn budget; navigating away and back (and, for a task that names the
dashboard it judges, ending elsewhere); the final answer and the notes reworded (wording only); ids the prompt does not state chosen
differently in what the agent builds.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from simulator import TOOLS, Workspace, World, tools_of

from .episode import FINAL_ANSWER, Episode, start_episode
from .task import Task

Steps = list[tuple[str, Any]]
READ_TOOLS = frozenset(tools_of("read"))
INSTANCE_TOOLS = frozenset(tools_of("instance"))
PLACING_TOOLS = frozenset(tools_of("placing"))
_PRODUCED_KEYS = ("widget_uuid", "backend_id", "dashboard_id", "deleted_widget_uuid")


@dataclass
class StepInfo:
    """What the reference's step `index` acted on, seen just before it ran."""

    index: int
    tool: str
    args: Any
    dashboard: str
    ok: bool = False
    data: Any = None
    placed: dict[str, Any] | None = None
    instances: int = 0
    produced: set[str] = field(default_factory=set)


@dataclass
class Probe:
    """One instrumented replay of the reference."""

    task: Task
    world: World
    steps: Steps
    answer: str | None
    infos: list[StepInfo]
    episode: Episode
    start: Workspace

    @property
    def budget(self) -> int | None:
        return self.task.eval.turn_budget

    def room(self, extra: int) -> bool:
        """Whether `extra` more calls fit in the turn budget next to the reference (and its final answer)."""
        used = len(self.steps) + (1 if self.answer is not None else 0)
        return self.budget is None or self.budget <= 0 or used + extra <= self.budget

    def other_dashboard(self) -> str | None:
        return next((d for d in self.start.dashboards if d != self.start.current), None)


def probe(world: World, task: Task, steps: Steps, answer: str | None) -> Probe:
    episode = start_episode(world, task)
    infos: list[StepInfo] = []
    for index, (tool, args) in enumerate(steps):
        ws = episode.workspace
        info = StepInfo(index, tool, args, ws.current)
        if isinstance(args, dict) and tool in INSTANCE_TOOLS | {"get_widget_data"}:
            dash = ws.dashboards.get(args.get("dashboard_id") or ws.current)
            if dash is not None:
                uuid, wid = args.get("widget_uuid"), args.get("widget_id")
                hits = [
                    w
                    for w in dash.widgets
                    if (uuid and w.uuid == uuid) or (not uuid and wid and w.widget_id == wid)
                ]
                if len(hits) == 1 and (uuid or tool != "get_widget_data"):
                    info.placed = hits[0].to_dict()
                    info.instances = sum(1 for w in dash.widgets if w.widget_id == hits[0].widget_id)
        envelope = episode.act(tool, args)
        info.ok, info.data = bool(envelope.get("ok")), envelope.get("data")
        info.produced = _produced(tool, args, info.data)
        infos.append(info)
    if answer is not None:
        episode.act(FINAL_ANSWER, {"text": answer})
    return Probe(task, world, steps, answer, infos, episode, start_episode(world, task).workspace)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _produced(tool: str, args: Any, data: Any) -> set[str]:
    """Ids a step's result makes known to later steps (what they may depend on)."""
    out: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in _PRODUCED_KEYS and isinstance(inner, str):
                    out.add(inner)
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    if tool == "list_available_widgets" and isinstance(data, dict):
        out |= {str(w.get("widget_id")) for w in data.get("widgets") or [] if isinstance(w, dict)}
    elif tool == "manage_backends" and isinstance(args, dict):
        out |= {str(args.get("name") or "")} | {str(k) for k in args.get("widgets_json") or {}}
    elif tool == "manage_navigation_bar" and isinstance(data, dict):
        comp = data.get("dashboard_composition") or {}
        out |= {str(t.get("id")) for t in comp.get("tabs") or [] if isinstance(t, dict) and t.get("id")}
    if tool in ("get_workspace_snapshot", "navigate_workspace", "manage_dashboard") and isinstance(
        data, dict
    ):
        comp = data.get("dashboard_composition") or {}
        out |= {str(w.get("widget_uuid")) for w in comp.get("widgets") or [] if isinstance(w, dict)}
        out |= {str(w.get("widget_id")) for w in comp.get("widgets") or [] if isinstance(w, dict)}
    if tool not in READ_TOOLS:
        walk(data)
    out.discard("")
    return out


def depends(later: StepInfo, earlier: StepInfo) -> bool:
    return bool(earlier.produced & set(_strings(later.args)))


@dataclass(frozen=True)
class Variant:
    kind: str
    label: str
    steps: Steps
    answer: str | None


VariantFn = Callable[[Probe], Iterable[Variant]]
VARIANTS: dict[str, VariantFn] = {}


def variant(kind: str) -> Callable[[VariantFn], VariantFn]:
    def register(fn: VariantFn) -> VariantFn:
        VARIANTS[kind] = fn
        return fn

    return register


def _with(steps: Steps, index: int, args: Any) -> Steps:
    out = list(steps)
    out[index] = (out[index][0], args)
    return out


def _accepts(tool: str, arg: str) -> bool:
    spec = TOOLS.get(tool)
    return spec is not None and arg in spec.args_model.model_fields


@variant("minimal_repair")
def minimal_repairs(p: Probe) -> Iterable[Variant]:
    """A repair that sends only the parameters that change."""
    steps = list(p.steps)
    changed = []
    for info in p.infos:
        args = info.args if isinstance(info.args, dict) else {}
        if info.tool != "update_widget" or not info.placed or not isinstance(args.get("data_args"), dict):
            continue
        before = info.placed.get("data_args") or {}
        diff = {k: v for k, v in args["data_args"].items() if before.get(k) != v}
        if diff and diff != args["data_args"]:
            steps = _with(steps, info.index, {**args, "data_args": diff})
            changed.append(f"#{info.index + 1} sends only {sorted(diff)}")
    if changed:
        yield Variant("minimal_repair", "; ".join(changed), steps, p.answer)


@variant("addressing")
def addressing(p: Probe) -> Iterable[Variant]:
    """The other documented way to name what each call acts on: a placed widget by widget_id instead of its
    uuid (when it is the only instance) or by uuid instead of widget_id; catalog rows read through a placed
    instance; the dashboard given explicitly; origin given where a tool takes it optionally, or a listing
    without its origin filter. The forms rewrite different arguments, so they are tried together."""
    steps = list(p.steps)
    done: list[str] = []
    for info in p.infos:
        if not isinstance(info.args, dict) or not info.ok:
            continue
        args, forms = dict(info.args), []
        if info.tool in INSTANCE_TOOLS and info.placed:
            if args.get("widget_uuid") and info.instances == 1:
                args.pop("widget_uuid")
                args["widget_id"] = info.placed["widget_id"]
                forms.append("widget_id")
            elif not args.get("widget_uuid"):
                args.pop("widget_id", None)
                args["widget_uuid"] = info.placed["widget_uuid"]
                forms.append("widget_uuid")
            if _accepts(info.tool, "origin") and "origin" not in args:
                args["origin"] = info.placed["origin"]
                forms.append("origin")
        if info.tool == "get_widget_data" and not args.get("widget_uuid") and args.get("widget_id"):
            uuid = _placed_reading_alike(p, info)
            if uuid is not None:
                args = {"widget_uuid": uuid, "data_args": args.get("data_args") or {}}
                forms.append("widget_uuid")
        if (
            _accepts(info.tool, "dashboard_id")
            and info.tool != "navigate_workspace"
            and not args.get("dashboard_id")
            and (info.tool != "get_widget_data" or args.get("widget_uuid"))
        ):
            args["dashboard_id"] = info.dashboard
            forms.append("dashboard_id")
        if info.tool == "list_available_widgets" and args.get("origin"):
            args.pop("origin")
            forms.append("no origin filter")
        if forms:
            steps[info.index] = (info.tool, args)
            done.append(f"#{info.index + 1} {info.tool} by {'+'.join(forms)}")
    if done:
        yield Variant("addressing", "; ".join(done), steps, p.answer)


def _placed_reading_alike(p: Probe, info: StepInfo) -> str | None:
    """A placed instance of the widget a get_widget_data call names, whose rows, read by its uuid with the same
    data_args, are the rows the call returned (its other parameters change nothing)."""
    args = info.args
    key = (args.get("origin"), args.get("widget_id"))
    start = p.start.dashboards.get(info.dashboard)
    if not any((w.origin, w.widget_id) == key for w in (start.widgets if start else [])) and not any(
        t == "create_widget" and isinstance(a, dict) and (a.get("origin"), a.get("widget_id")) == key
        for t, a in p.steps[: info.index]
    ):
        return None
    ws = start_episode(p.world, p.task).workspace
    for earlier in p.steps[: info.index]:
        ws.call(*earlier)
    dash = ws.dashboards.get(info.dashboard)
    for w in dash.widgets if dash else []:
        if not w.generated and w.origin == args.get("origin") and w.widget_id == args.get("widget_id"):
            env = ws.call(
                "get_widget_data", {"widget_uuid": w.uuid, "data_args": args.get("data_args") or {}}
            )
            if env.ok and env.data == info.data:
                return w.uuid
    return None


@variant("reorder")
def reorder(p: Probe) -> Iterable[Variant]:
    """Independent steps in another order: reads that need nothing earlier done first, and two neighbouring
    pieces of work that do not depend on each other swapped."""
    infos = p.infos
    free = [i for i in infos if i.tool in READ_TOOLS and not any(depends(i, e) for e in infos[: i.index])]
    order = [i.index for i in free] + [i.index for i in infos if i not in free]
    if order != list(range(len(infos))):
        yield Variant(
            "reorder",
            "reads first: " + ", ".join(f"#{i.index + 1} {i.tool}" for i in free),
            [p.steps[k] for k in order],
            p.answer,
        )
    writes = [i for i in infos if i.tool not in READ_TOOLS]
    pinned = {str(v) for r in p.task.eval.required_layouts for v in (r.widget_id, r.widget_uuid) if v}
    swaps = 0
    for a, b in itertools.pairwise(writes):
        if swaps >= 2:
            break
        between = infos[a.index + 1 : b.index]
        if depends(b, a) or any(depends(b, m) or depends(m, a) for m in between):
            continue
        if (
            a.tool in PLACING_TOOLS
            and b.tool in PLACING_TOOLS
            and (pinned & (set(_strings(a.args)) | set(_strings(b.args)) | a.produced | b.produced))
        ):
            continue
        if _same_target(a, b):
            continue
        order = list(range(len(infos)))
        order[a.index], order[b.index] = b.index, a.index
        swaps += 1
        yield Variant(
            "reorder",
            f"#{a.index + 1} {a.tool} and #{b.index + 1} {b.tool} swapped",
            [p.steps[k] for k in order],
            p.answer,
        )


def _same_target(a: StepInfo, b: StepInfo) -> bool:
    ua = (a.placed or {}).get("widget_uuid") or (a.args or {}).get("widget_uuid")
    ub = (b.placed or {}).get("widget_uuid") or (b.args or {}).get("widget_uuid")
    return bool(ua and ua == ub)


@variant("reads_inserted")
def reads_inserted(p: Probe) -> Iterable[Variant]:
    """Harmless reads a careful agent might add, as many as the turn budget leaves room for: a look around
    first (snapshot, catalog, a skill, the tool-usage prompt), a schema read of a widget it can see placed —
    after the catalog listing, as the source benchmark's list-before-use rule asks of every agent (a variant
    that breaks a rule the agent is told is not a valid solution) — and a read of a placed widget after the
    first piece of work."""
    allowed = p.task.setup.allowed_tools

    def usable(tool: str) -> bool:
        return not allowed or tool in allowed

    placed = [w for w in p.start.current_dashboard.widgets if not w.generated]
    skills = sorted(p.start.skills)
    head: Steps = [("get_workspace_snapshot", {})]
    listed = usable("list_available_widgets")
    if listed:
        head.append(("list_available_widgets", {}))
    if placed and listed and usable("get_widget_schema"):
        head.append(("get_widget_schema", {"origin": placed[0].origin, "widget_id": placed[0].widget_id}))
    if skills:
        head.append(("get_skill_content", {"slug": skills[0]}))
    head.append(("get_workspace_prompt", {"name": "workspace_tool_usage"}))
    writes = [i for i in p.infos if i.tool not in READ_TOOLS]
    tail: Steps = (
        [("read_widget", {"widget_uuid": placed[-1].uuid})]
        if placed and writes and usable("read_widget")
        else []
    )
    head = [c for c in head if usable(c[0])]
    room = len(head) + len(tail)
    while room and not p.room(room):
        room -= 1
    tail = tail[: max(0, room - len(head))]
    head = head[:room]
    if not head and not tail:
        return
    steps = list(p.steps)
    if tail:
        at = writes[0].index + 1
        steps = [*steps[:at], *tail, *steps[at:]]
    label = (
        "first: "
        + ", ".join(t for t, _ in head)
        + (f"; read_widget after #{writes[0].index + 1}" if tail else "")
    )
    yield Variant("reads_inserted", label, head + steps, p.answer)


@variant("navigate")
def navigate(p: Probe) -> Iterable[Variant]:
    """Leaving the dashboard after the first piece of work and coming back; and, for a task that names the
    dashboard it judges, ending on another one."""
    allowed = p.task.setup.allowed_tools
    other = p.other_dashboard()
    if other is None or (allowed and "navigate_workspace" not in allowed):
        return
    steps, label = list(p.steps), []
    if p.room(2):
        writes = [i for i in p.infos if i.tool not in READ_TOOLS]
        at = writes[0].index + 1 if writes else 0
        home = p.infos[at].dashboard if at < len(p.infos) else p.episode.workspace.current
        steps[at:at] = [
            ("navigate_workspace", {"operation": "dashboard", "dashboard_id": other}),
            ("navigate_workspace", {"operation": "dashboard", "dashboard_id": home}),
        ]
        label.append(f"away to '{other}' and back after #{at}")
    if p.task.eval.judged_dashboard is not None and p.room(len(steps) - len(p.steps) + 1):
        steps.append(("navigate_workspace", {"operation": "dashboard", "dashboard_id": other}))
        label.append(f"ends on '{other}'")
    if label:
        yield Variant("navigate", "; ".join(label), steps, p.answer)


_DECIMAL = re.compile(r"(?<![\w.])(-?\d+\.\d+)(%?)(?![\w.])")


def _reformat_numbers(text: str) -> str:
    """Each decimal in another documented format: a fraction as a percentage and back, a figure of a thousand
    or more with thousands separators (12,500.5 for 12500.5)."""

    def swap(m: re.Match[str]) -> str:
        value = float(m.group(1))
        if m.group(2):
            return f"{value / 100:.10g}"
        if abs(value) < 1:
            return f"{value * 100:.10g}%"
        if abs(value) >= 1000:
            whole, _, frac = m.group(1).partition(".")
            return f"{int(whole):,}.{frac}"
        return m.group(0)

    return _DECIMAL.sub(swap, text)


def _respaced(text: str) -> str:
    """The same words with other spacing: doubled spaces, a line break after each sentence."""
    return re.sub(r"(?<=[.;:])  (?=\S)", "\n", text.replace(" ", "  "))


@variant("answer_reworded")
def answer_reworded(p: Probe) -> Iterable[Variant]:
    """The same values in other words: another case, other number formats (1.2% for 0.012), other framing."""
    answer = p.answer
    if not answer:
        return
    numbers = _reformat_numbers(answer)
    forms = [
        ("upper case" + (", other number format" if numbers != answer else ""), numbers.upper()),
        ("lower case, other framing", f"Here is what I found. {answer.rstrip('.')}. That is all.".lower()),
    ]
    for label, text in forms:
        yield Variant("answer_reworded", label, p.steps, text)


@variant("note_reworded")
def note_reworded(p: Probe) -> Iterable[Variant]:
    """The notes the reference writes, in other wording only: other case, other spacing, other number formats.
    Nothing is added — a note that also recorded what was read would say more, not the same in other words, and
    would hide a case- or format-sensitive note check behind the raw rows."""
    steps, done = list(p.steps), []
    for info in p.infos:
        args = info.args if isinstance(info.args, dict) else {}
        if (
            info.tool == "add_generative_widget"
            and args.get("widget_type") == "note"
            and isinstance(args.get("data"), str)
        ):
            text = _respaced(_reformat_numbers(args["data"]).upper())
            steps[info.index] = (info.tool, {**args, "data": text})
            done.append(f"#{info.index + 1}")
    if done:
        label = f"notes {', '.join(done)} upper case, other spacing, other number format"
        yield Variant("note_reworded", label, steps, p.answer)


@variant("other_ids")
def other_ids(p: Probe) -> Iterable[Variant]:
    """What the agent builds under ids of its own choosing where the prompt states none: widget ids, app tab
    ids and template ids in a published backend, the backend's url, a created dashboard's id."""
    prompt = p.task.prompt

    def stated(value: str) -> bool:
        """The prompt gives this exact id (a display name it gives, "Review Tracker", is not the id)."""
        return bool(re.search(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", prompt))

    renames: dict[str, str] = {}
    steps = copy.deepcopy(p.steps)
    for index, (tool, args) in enumerate(steps):
        if not isinstance(args, dict):
            continue
        if tool == "manage_backends" and args.get("operation") in ("add", "refresh"):
            widgets = args.get("widgets_json")
            if isinstance(widgets, dict):
                for wid in list(widgets):
                    if not stated(wid):
                        renames[wid] = f"{wid}_alt"
            for app in args.get("apps_json") or []:
                if not isinstance(app, dict):
                    continue
                for tab_id in list(app.get("tabs") or {}):
                    if tab_id and not stated(tab_id):
                        renames[tab_id] = f"{tab_id}_alt"
                if isinstance(app.get("template_id"), str) and not stated(app["template_id"]):
                    renames[app["template_id"]] = f"{app['template_id']}-alt"
            url = args.get("url")
            if isinstance(url, str) and not stated(url):
                steps[index] = (tool, {**args, "url": _other_url(url)})
        elif (
            tool == "manage_dashboard"
            and args.get("operation") == "create"
            and args.get("dashboard_id")
            and not stated(str(args["dashboard_id"]))
        ):
            renames[str(args["dashboard_id"])] = f"{args['dashboard_id']}_alt"
    if not renames:
        return
    steps = [(tool, _rename(args, renames)) for tool, args in steps]
    yield Variant(
        "other_ids",
        "own ids: " + ", ".join(f"{a}→{b}" for a, b in list(renames.items())[:4]),
        steps,
        p.answer,
    )


def _other_url(url: str) -> str:
    m = re.search(r":(\d+)(/|$)", url)
    if m:
        return url[: m.start(1)] + str(int(m.group(1)) + 1) + url[m.end(1) :]
    return url.rstrip("/") + "/alt"


_ID_KEYS = frozenset({"widget_id", "i", "id", "tab_id", "template_id", "dashboard_id", "widgetIds"})


def _rename(value: Any, renames: dict[str, str], key: str | None = None) -> Any:
    """Ids renamed where they are used as ids: dict keys of widgets_json and app tabs, and values under id keys."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            new_key = renames.get(k, k) if key in ("widgets_json", "tabs") else k
            out[new_key] = _rename(v, renames, k)
        return out
    if isinstance(value, list):
        return [_rename(v, renames, key) for v in value]
    if isinstance(value, str) and key in _ID_KEYS:
        return renames.get(value, value)
    return value


def variants(p: Probe) -> list[Variant]:
    return [v for fn in VARIANTS.values() for v in fn(p)]
