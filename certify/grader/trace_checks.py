"""Checks on the trace: graded calls, tool results, the invalid-call budget and listing discipline.

Required calls match successful calls whose arguments contain the expected ones; a call is never consumed,
so one call can satisfy several identical requirements.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from simulator import tools_of

from ..episode import ByObject, TraceEvent
from .core import CheckResult, GradeContext, check
from .match import json_blob, numbers_in, subset, text_contains


def required_calls(ctx: GradeContext) -> list[tuple[str, dict[str, Any], int]]:
    """(tool, expected args, min count) for every graded call of the task."""
    out = [(s.tool, s.graded(), 1) for s in ctx.eval.graded_steps()]
    out += [(c.tool, c.args_contains, c.min_count) for c in ctx.eval.required_tool_calls]
    return out


@check("missing_tool_call")
def missing_tool_call(ctx: GradeContext) -> Iterable[CheckResult]:
    for tool, expected, minimum in required_calls(ctx):
        count = sum(1 for e in ctx.ok_calls(tool) if subset(expected, e.args))
        yield CheckResult(
            "missing_tool_call",
            count >= minimum,
            f"{tool} {json_blob(expected)}",
            f"{count} successful matching call(s), {len(ctx.ok_calls(tool))} successful {tool} call(s)",
            "trace",
        )


@check("missing_tool_result")
def missing_tool_result(ctx: GradeContext) -> Iterable[CheckResult]:
    for req in ctx.eval.required_tool_results:
        count = 0
        for e in ctx.ok_calls(req.tool):
            blob = _envelope_blob(e)
            nums = numbers_in(blob)
            if all(text_contains(blob, s, blob_numbers=nums) for s in req.data_contains):
                count += 1
        yield CheckResult(
            "missing_tool_result",
            count >= req.min_count,
            f"{req.tool} result containing {req.data_contains}",
            f"{count} matching result(s)",
            "trace",
        )


@check("missing_resource_read")
def missing_resource_read(ctx: GradeContext) -> Iterable[CheckResult]:
    for req in ctx.eval.required_resource_reads:
        count = sum(
            1
            for e in ctx.ok_calls("read_workspace_resource")
            if isinstance(e.args, dict) and e.args.get("uri") == req.uri
        )
        yield CheckResult(
            "missing_resource_read", count >= req.min_count, f"read {req.uri}", f"{count} read(s)", "trace"
        )


@check("too_many_invalid_calls")
def too_many_invalid_calls(ctx: GradeContext) -> Iterable[CheckResult]:
    limit = ctx.eval.trace_checks.max_invalid_tool_calls
    bad = [e for e in ctx.events if not e.ok]
    shown = ", ".join(f"#{e.index} {e.tool} ({e.code})" for e in bad[:5])
    yield CheckResult(
        "too_many_invalid_calls",
        len(bad) <= limit,
        f"at most {limit} invalid call(s)",
        f"{len(bad)} invalid: {shown}" if bad else "none",
        "trace",
    )


# A recorded event's envelope as text, by the event (`ByObject`): the same result would be dumped again in every
# grade along the call tree.
_BLOBS = ByObject(1024)


def _envelope_blob(event: TraceEvent) -> str:
    return str(_BLOBS.get(event, lambda e: json_blob(e.envelope)))


def _origin_arg(args: Any) -> Any:
    """The origin a schema/create call names: `origin`, or create_widget's older `backend_name` (as the source)."""
    return (args.get("origin") or args.get("backend_name")) if isinstance(args, dict) else None


def _listing_events(ctx: GradeContext) -> list[tuple[str, Any, bool, bool]]:
    cached = ctx.extras.get("listing_events")
    if cached is None:
        cached = ctx.extras["listing_events"] = list(_walk_listings(ctx))
    return cached


_SHOWING_TOOLS = frozenset(tools_of("showing"))
_ORIGIN = itemgetter("origin")
_PAIR = itemgetter("origin", "widget_id")


def _shown_widgets(data: Any) -> Iterable[tuple[str, str]]:
    """(origin, widget_id) of catalog widgets a result shows placed: a dashboard composition or one widget."""
    if not isinstance(data, dict):
        return
    compositions = [data.get("dashboard_composition"), *(data.get("dashboard_compositions") or {}).values()]
    widgets = [w for c in compositions if isinstance(c, dict) for w in c.get("widgets") or []]
    if isinstance(data.get("widget"), dict):
        widgets.append(data["widget"])
    for w in widgets:
        if isinstance(w, dict) and not w.get("generated") and isinstance(w.get("origin"), str):
            yield w["origin"], str(w.get("widget_id"))


def _walk_listings(ctx: GradeContext) -> Iterable[tuple[str, Any, bool, bool]]:
    """Walk the trace, yielding each schema/create call with whether its origin, and its (origin, widget_id),
    had been listed before it (or, when the task says so, shown by any earlier result)."""
    origins: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    # what the listings so far showed, one (origins, pairs) per listing: looked up, never merged into one set
    listed: list[tuple[frozenset[str], frozenset[tuple[str, str]]]] = []
    any_result = ctx.eval.trace_checks.ids_known_from == "any_result"
    for e in ctx.events:
        args = e.args if isinstance(e.args, dict) else {}
        if any_result and e.ok and e.tool in _SHOWING_TOOLS:
            for origin, wid in _shown_widgets(e.envelope.get("data")):
                origins.add(origin)
                pairs.add((origin, wid))
        if e.ok and e.tool == "list_available_widgets":
            if isinstance(args.get("origin"), str):
                origins.add(args["origin"])
            listed.append(_listed((e.envelope.get("data") or {}).get("widgets", [])))
        elif e.ok and e.tool == "manage_backends" and args.get("operation") in ("add", "refresh"):
            data = e.envelope.get("data") or {}
            name = args.get("name") or (data.get("backend") or {}).get("name")
            if isinstance(name, str):
                origins.add(name)
                if isinstance(args.get("widgets_json"), dict):
                    pairs.update((name, str(k)) for k in args["widgets_json"])
        elif e.tool in ("get_widget_schema", "create_widget"):
            origin = _origin_arg(args)
            pair = (origin, args.get("widget_id"))
            yield (
                e.tool,
                e,
                origin in origins or any(origin in o for o, _ in listed),
                pair in pairs or any(pair in p for _, p in listed),
            )


# What a listing shows, by the ids of the entry objects it served (held, so the ids stay theirs): the simulator
# serves the same entries to every episode of a world, and a certification grades hundreds of its listings.
_LISTED: dict[tuple[int, ...], tuple[list[Any], tuple[frozenset[str], frozenset[tuple[str, str]]]]] = {}
_LISTED_SIZE = 256


# The same by the listing's list object itself: an episode's recorded envelopes are shared by every run along
# the calls made before (certify.episode.CallTree) and never changed once recorded, so one listing is graded
# many times over; the list is held (its id stays its own) and its length checked.
_BY_LIST: dict[int, tuple[list[Any], int, tuple[frozenset[str], frozenset[tuple[str, str]]]]] = {}


def _listed(widgets: list[Any]) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """(origins, (origin, widget_id) pairs) a listing's entries show."""
    mine = _BY_LIST.get(id(widgets))
    if mine is not None and mine[0] is widgets and mine[1] == len(widgets):
        return mine[2]
    ids = tuple(map(id, widgets))
    held = _LISTED.get(ids)
    if held is not None:
        shown = held[1]
    else:
        shown = frozenset(map(_ORIGIN, widgets)), frozenset(map(_PAIR, widgets))
        if len(_LISTED) >= _LISTED_SIZE:
            _LISTED.clear()
        _LISTED[ids] = (list(widgets), shown)
    if len(_BY_LIST) >= _LISTED_SIZE * 2:
        _BY_LIST.clear()
    _BY_LIST[id(widgets)] = (widgets, len(widgets), shown)
    return shown


@check("widget_list_not_called_before_use")
def list_before_use(ctx: GradeContext) -> Iterable[CheckResult]:
    allowed = ctx.task.setup.allowed_tools
    if (
        not ctx.eval.trace_checks.forbid_invented_widget_ids
        or not allowed
        or "list_available_widgets" not in allowed
    ):
        return
    for tool, e, origin_listed, _ in _listing_events(ctx):
        if not e.ok:
            continue
        yield CheckResult(
            "widget_list_not_called_before_use",
            origin_listed,
            f"#{e.index} {tool} uses an origin listed before",
            f"origin '{_origin_arg(e.args)}'",
            "trace",
        )


@check("unlisted_widget_id")
def unlisted_widget_id(ctx: GradeContext) -> Iterable[CheckResult]:
    if not ctx.eval.trace_checks.forbid_invented_widget_ids:
        return
    for tool, e, origin_listed, pair_listed in _listing_events(ctx):
        if not e.ok:
            continue
        if origin_listed:
            yield CheckResult(
                "unlisted_widget_id",
                pair_listed,
                f"#{e.index} {tool} uses a widget id that was listed",
                f"{_origin_arg(e.args)}/{e.args.get('widget_id')}",
                "trace",
            )


@check("schema_not_called_before_create")
def schema_before_create(ctx: GradeContext) -> Iterable[CheckResult]:
    if not ctx.eval.trace_checks.must_call_schema_before_create:
        return
    seen: set[tuple[Any, Any]] = set()
    for e in ctx.events:
        args = e.args if isinstance(e.args, dict) else {}
        key = (_origin_arg(args), args.get("widget_id"))
        if e.tool == "get_widget_schema" and e.ok:
            seen.add(key)
        elif e.tool == "create_widget":
            yield CheckResult(
                "schema_not_called_before_create",
                key in seen,
                f"#{e.index} create_widget preceded by get_widget_schema",
                f"{key[0]}/{key[1]}",
                "trace",
            )


@check("repeated_snapshots")
def repeated_snapshots(ctx: GradeContext) -> Iterable[CheckResult]:
    limit = ctx.eval.trace_checks.max_repeated_snapshots
    if limit is None:
        return
    longest = run = 0
    for e in ctx.events:
        run = run + 1 if e.tool == "get_workspace_snapshot" else 0
        longest = max(longest, run)
    yield CheckResult(
        "repeated_snapshots",
        longest <= limit,
        f"at most {limit} snapshots in a row",
        f"longest run {longest}",
        "trace",
    )
