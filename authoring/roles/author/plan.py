"""The reference of a level, planned against the simulator.

The plan performs every step it writes in a real episode of the level's setup and reads back what the steps
return: the rows a read note must record, the id a new backend receives. A step that fails there is an authoring
error, not a task that cannot certify. Each step is graded one of three ways: optional discovery an agent may
skip, outcome work whose effect the state checks grade (any route to the same state passes), or a call graded on
some of its arguments (reading the governing source, the method Ground is about).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from certify import numbers_in, text_contains
from simulator import INDEX_URI, Prompt, Resource, Skill, Workspace, slugify, value_allowed

from ...factcheck import STEP, ResolvedTarget
from ...factcheck import value_text as said_as_text
from .analysis import plan_analysis
from .context import AuthoringError
from .evalblock import EvalBlock
from .level import Level
from .seeding import Board, Seeded, SeededNote

SLACK_TURNS = 3
# A lived-in board (Ground, Compose) is read before it is worked on — the twin, the furniture and the prior note
# told apart from the target — so its budget has two turns more of slack: without a side repair, Ground's own
# calls can number fewer than Derive's (which reads its policy's document), and the budget must still grow.
LIVED_SLACK_TURNS = SLACK_TURNS + 2
MAX_DISTRACTORS = 24


def _figure(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


WIDGETS_SPEC = "openbb://workspace/specs/widgets-json"


@dataclass(frozen=True)
class RecordField:
    """A column a read note must carry, with the value the first served row holds."""

    key: str
    value: str


@dataclass(frozen=True)
class Built:
    """What Compose builds: a backend serving `table`, its app `app` with tab `tab`, the table placed on the
    board (on the grounded value of `keyed` when the Ground fact sets a parameter)."""

    backend: str
    table: str
    app: str
    tab: str
    backend_id: str
    keyed: str | None
    tab_like: bool


@dataclass(frozen=True)
class Planned:
    """The reference of a level and what its request must mention."""

    eval: dict[str, Any]
    note_name: str
    built: Built | None
    fields: tuple[RecordField, ...]


def plan(level: Level, board: Board, setup: dict[str, Any]) -> Planned:
    return _Planner(level, board, setup).run()


class _Planner:
    def __init__(self, level: Level, board: Board, setup: dict[str, Any]) -> None:
        self.level = level
        self.s = level.story
        self.board = board
        self.tab_id = self.s.tab_id
        self.ws = Workspace.start(level.ctx.world, setup)
        self.eval = EvalBlock()
        self.tab_title: str | None = None
        self.fields: tuple[RecordField, ...] = ()

    def run(self) -> Planned:
        level, s, board = self.level, self.s, self.board
        snapshot = self.step("get_workspace_snapshot", {}, optional=True)
        if level.lived:
            self._read_source()
        built = self._build() if level.number == 4 else None
        for origin in dict.fromkeys(t.origin for t in s.targets):
            self.step("list_available_widgets", {"origin": origin}, optional=True)
        if level.number == 1:
            self._candidates(snapshot)
        for t in {(t.origin, t.widget_id): t for t in s.targets}.values():
            self.step("get_widget_schema", {"origin": t.origin, "widget_id": t.widget_id}, optional=True)
        if level.number == 2:
            doc = s.policy_doc
            if doc is not None and doc.kind == "resource":
                # Derive resolves the phrase where the world defines it: the index, then the defining resource.
                if INDEX_URI in level.ctx.world.resources:
                    self.step("read_workspace_resource", {"uri": INDEX_URI}, optional=True)
                self.step("read_workspace_resource", {"uri": doc.ref}, optional=True)
            self._options_of(s.targets[s.carried_target], s.carried_key)
        if level.lived:
            # what an agent checks before Ground's work: the options of the parameter its fact sets, and the
            # schema of the second view it repairs
            if level.grounded_key is not None:
                self._options_of(level.target_setting(level.grounded_key), level.grounded_key)
            furniture = board.furniture
            if furniture is not None and furniture.fix is not None:
                self.step(
                    "get_widget_schema",
                    {"origin": furniture.seed.origin, "widget_id": furniture.seed.widget_id},
                    optional=True,
                )
        rows = self._main_actions()
        self._compare()
        if level.lived:
            self._retitle()
        note_name = self._notes(rows)
        if built is not None:
            self.step(
                "manage_apps",
                {
                    "operation": "instantiate",
                    "backend_id": built.backend_id,
                    "app_name": built.app,
                    "dashboard_name": built.app,
                    "activate": False,
                },
                outcome=True,
            )
        plan_analysis(self)
        self.eval.set("judged_dashboard", level.dash)
        self.eval.set("max_unrequested_widgets", 0)
        self.eval.set("trace_checks", {"ids_known_from": "any_result"})
        # Find's further look-alikes each cost a careful reader one schema read: the budget grows with them
        # (without it, a reader that runs out before it meets the decoy is left with the target alone)
        slack = (LIVED_SLACK_TURNS if level.lived else SLACK_TURNS) + len(self.board.lookalikes)
        if level.lived and Level(level.ctx, 2).compare is not None:
            # Derive adds a second view on the rival rule's value: one call Ground does not make, and Ground's
            # budget must still not fall below Derive's
            slack += 1
        self.eval.set("max_turns", self.eval.count("required_tools") + slack)
        return Planned(self.eval.wire(), note_name, built, self.fields)

    def step(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        optional: bool = False,
        outcome: bool = False,
        graded: list[str] | None = None,
    ) -> dict[str, Any]:
        """Add a reference step and perform it in the planning episode (its envelope is returned).

        `optional` marks discovery an agent may skip; `outcome` marks work whose effect the state checks grade
        (any route to the same state passes); otherwise the call itself is graded on `graded` (a method the
        level is about, such as reading the governing skill)."""
        envelope = self.ws.call(tool, args).to_dict()
        if not envelope["ok"]:
            raise AuthoringError(
                f"{self.level.slug} level{self.level.number}: planned {tool} fails: {envelope['message']}"
            )
        how: dict[str, Any] = {}
        if optional:
            how["optional"] = True
        elif outcome:
            how["outcome"] = True
        elif graded is not None:
            how["graded_args"] = graded
        self.eval.add("required_tools", tool=tool, args=args, **how)
        return envelope

    def _candidates(self, snapshot: dict[str, Any]) -> None:
        """Find is by content: an agent reads the schema of each widget the description may mean (the app's
        widgets; a repair's, those placed on the board) to see what it serves. Optional steps, so the turn
        budget leaves room for them."""
        t0 = self.level.first
        fixture = self.level.fixture(t0.origin)
        app = t0.widget.definition.get("category")
        if fixture is None or not app:
            return
        named = {t.widget_id for t in self.s.targets if (t.origin, t.widget_id) != (t0.origin, t0.widget_id)}
        # the request names where the target comes from as the story does: its app ("<origin>'s <app>"), else
        # the origin alone, whose every widget the description may then mean (a category that is no app of the
        # origin narrows nothing: Widget Examples' "forms")
        pool = [
            wid
            for wid, d in fixture.catalog.widgets.items()
            if (not t0.app or d.definition.get("category") == app)
            and wid not in named
            and wid != t0.widget_id
        ]
        if self.s.kind == "repair":
            comp = (snapshot.get("data") or {}).get("dashboard_composition") or {}
            placed = {str(w.get("widget_id")) for w in comp.get("widgets") or []}
            pool = [wid for wid in pool if wid in placed]
        for wid in pool:
            self.step("get_widget_schema", {"origin": t0.origin, "widget_id": wid}, optional=True)

    def _options_of(self, t: ResolvedTarget, key: str) -> None:
        """An agent checks the options of the parameter it is about to set (a step it may skip)."""
        self.step(
            "get_params_options",
            {"origin": t.origin, "widget_id": t.widget_id, "param_name": key},
            optional=True,
        )

    def _rows(self, origin: str, widget_id: str, data_args: dict[str, Any]) -> list[Any]:
        """The rows the episode serves for a cut (read outside the reference)."""
        envelope = self.ws.call(
            "get_widget_data", {"origin": origin, "widget_id": widget_id, "data_args": data_args}
        ).to_dict()
        return (envelope.get("data") or {}).get("data") or []

    # -- knowledge ----------------------------------------------------------------------------------------
    def _read_source(self) -> None:
        """Ground reads its source — the method the level is about, graded as a call — and, when the fact sits in
        a document the source refers to, that document too. A resource is found through the index first (a step
        an agent that knows the URI may skip)."""
        gov = self.s.governance
        if (gov.kind == "resource" or gov.hop is not None) and INDEX_URI in self.level.ctx.world.resources:
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
    def _main_actions(self) -> list[list[Any]]:
        """Each target repaired, read or added, graded by the widget it leaves; then what must stay as seeded."""
        rows: list[list[Any]] = []
        board, kind = self.board, self.s.kind
        for i, t in enumerate(self.s.targets):
            right = dict(t.params)
            if kind == "repair":
                stale = board.stale[i]
                # An instance seeded right needs no repair: its update is a step the agent may skip.
                seeded_right = stale.data_args == right
                self.step(
                    "update_widget",
                    {"widget_uuid": stale.uuid, "data_args": right},
                    outcome=not seeded_right,
                    optional=seeded_right,
                )
                self._placed(t.origin, t.widget_id, dict(t.params))
            elif kind == "read":
                envelope = self.step(
                    "get_widget_data",
                    {"origin": t.origin, "widget_id": t.widget_id, "data_args": right},
                    optional=True,
                )
                rows.append(list(envelope["data"]["data"]))
                # Opening the view read on the board (once, on the cut read) is a fair way to read it.
                self._placed(t.origin, t.widget_id, dict(t.params), min_count=0)
                self._derived_default(i, "get_widget_data", t)
            else:
                args: dict[str, Any] = {"origin": t.origin, "widget_id": t.widget_id}
                created: dict[str, Any] = {**args, "tab_id": self.tab_id, "max_count": 1}
                if t.params:
                    args["data_args"] = right
                    created["data_args"] = dict(t.params)
                self.step("create_widget", args, outcome=True)
                self.eval.add("required_widgets", **created)
                self._derived_default(i, "create_widget", t)
        for decoy in [*([board.decoy] if board.decoy else []), *board.lookalikes]:
            # The decoy (and Find's further look-alikes) stays exactly as seeded: its parameters as placed, and
            # a stated one it was placed without still absent (None matches only a missing value).
            placed = next(w for w in self.ws.current_dashboard.widgets if w.uuid == decoy.uuid)
            declared = {
                str(p.get("paramName"))
                for p in self.level.widget_def(decoy.origin, decoy.widget_id).option_params
            }
            said = self.level.said(self.level.first, level=1)
            pinned = {k: None for k in said if k in declared} | dict(placed.data_args)
            self._placed(decoy.origin, decoy.widget_id, pinned)
        furniture = board.furniture
        if furniture is not None and furniture.fix is not None:
            self.step(
                "update_widget",
                {"widget_uuid": furniture.seed.uuid, "data_args": dict(furniture.fix.right)},
                outcome=True,
            )
        if self.level.lived:
            if board.twin is not None:
                self._placed(board.twin.origin, board.twin.widget_id, board.twin.data_args)
            if furniture is not None:
                self._placed(furniture.seed.origin, furniture.seed.widget_id, furniture.params)
        return rows

    def _compare(self) -> None:
        """At Derive, the second view the request asks for: the carried target again, on the value the rival rule
        of the same document sets (its other values as the target's). Graded by the widget it leaves, like any
        addition."""
        compare = self.level.compare
        if compare is None:
            return
        s = self.s
        t = s.targets[s.carried_target]
        args = {**t.params, s.carried_key: compare[1]}
        self.step(
            "create_widget", {"origin": t.origin, "widget_id": t.widget_id, "data_args": args}, outcome=True
        )
        self.eval.add(
            "required_widgets",
            origin=t.origin,
            widget_id=t.widget_id,
            data_args=dict(args),
            tab_id=self.tab_id,
            max_count=1,
        )

    def _derived_default(self, i: int, tool: str, t: ResolvedTarget) -> None:
        """At Derive, a policy that carries the parameter's default leaves the same state whether or not the
        agent resolved it (the widget falls back to its default), and so does a read of rows that do not depend
        on the carried parameter: the level is then about the method, so the call that adds or reads the target
        must state the carried value the policy gives."""
        s = self.s
        if self.level.number != 2 or i != s.carried_target:
            return
        param = t.widget.param(s.carried_key) or {}
        if str(param.get("value")) != str(s.carried_value) and not (
            tool == "get_widget_data" and self._rows_ignore(t, s.carried_key)
        ):
            return
        self.eval.add(
            "required_tool_calls",
            tool=tool,
            args_contains={"widget_id": t.widget_id, "data_args": {s.carried_key: s.carried_value}},
        )

    def _rows_ignore(self, t: ResolvedTarget, key: str) -> bool:
        """Whether the target serves the same rows whatever option of `key` it is cut to: a read's note then
        says the same whether or not the agent resolved the policy, so the read call itself must state the
        carried value (as for a default)."""
        base = json.dumps(self._rows(t.origin, t.widget_id, dict(t.params)), default=str)
        others = [v for v in t.widget.options(key) if str(v) != str(t.params.get(key))]
        return bool(others) and all(
            json.dumps(self._rows(t.origin, t.widget_id, {**t.params, key: v}), default=str) == base
            for v in others
        )

    def _placed(
        self, origin: str, widget_id: str, data_args: dict[str, Any], min_count: int | None = None
    ) -> None:
        """A widget that must end on the tab once (`min_count=0`: at most once), on `data_args`."""
        at_least = {} if min_count is None else {"min_count": min_count}
        self.eval.add(
            "required_widgets",
            origin=origin,
            widget_id=widget_id,
            data_args=data_args,
            tab_id=self.tab_id,
            **at_least,
            max_count=1,
        )

    # -- notes --------------------------------------------------------------------------------------------
    def _record_fields(self, rows: list[list[Any]]) -> tuple[RecordField, ...]:
        """What a read note must carry: the first served row's columns, minus the parameters."""
        t = self.level.first
        served = rows[0] if rows else []
        if not served or not isinstance(served[0], dict):
            raise AuthoringError(
                f"{self.level.slug}: '{t.name}' serves no rows for {t.params}; nothing to record"
            )
        row = served[0]
        wanted = self.s.facts.record or [k for k in row if k not in t.params][:5]
        if self.s.standing_in is not None and any(k not in row for k in wanted):
            # Execute's stand-in (`factcheck.working`) serves other columns: its note records its own
            wanted = [k for k in row if k not in t.params][: len(wanted)]
        missing = [k for k in wanted if k not in row]
        if missing:
            raise AuthoringError(
                f"{self.s.story.file}: facts.record: the served row has no column {missing[0]!r}"
            )
        return tuple(RecordField(k, said_as_text(row[k])) for k in wanted)

    def _note(self, name: str, body: str, contains: list[str]) -> None:
        """A note the level writes: the step that adds it, and the note it must leave (nothing false in it)."""
        self.step("add_generative_widget", {"widget_type": "note", "name": name, "data": body}, outcome=True)
        self.eval.add(
            "required_generated_widgets",
            widget_type="note",
            name_contains=name,
            data_contains=contains,
            must_not_contain=self._distractors(body),
            tab_id=self.tab_id,
        )

    def _notes(self, rows: list[list[Any]]) -> str:
        """The notes the level must leave (the seeded ones kept, the one it writes) and, on a lived-in board, the
        tab and every seed that is not repaired left where it was. Returns the name of the note it writes."""
        board, level = self.board, self.level
        for seeded, facts in (
            (board.prior_note, None),
            (board.policy_note, board.policy_note.text.splitlines() if board.policy_note else None),
            (board.pointer_note, board.pointer_note.text.splitlines() if board.pointer_note else None),
        ):
            if seeded is not None:
                self.eval.add(
                    "required_generated_widgets",
                    widget_type="note",
                    name_contains=seeded.name,
                    data_contains=facts if facts is not None else [seeded.text],
                    tab_id=self.tab_id,
                )
        gov = self.s.governance
        acts = gov.sets is not None
        note_name = ""
        if self.s.kind == "read":
            self.fields = self._record_fields(rows)
            note_name = self.s.facts.note or f"{level.dash} Note"
            body = " | ".join(f"{f.key}: {f.value}" for f in self.fields)
            contains = [f.value for f in self.fields]
            if level.lived and not acts:
                body += f". Per the {gov.name}: {gov.phrase}."
                contains.append(gov.phrase)
            self._note(note_name, body, contains)
        elif level.lived and not acts:
            note_name = f"{level.dash} Governance Note"
            self._note(note_name, f"Per the {gov.name}: {gov.phrase}.", [gov.phrase])
        if level.lived:
            self.eval.set("required_tabs", [self.tab_id])
            self.eval.set("required_tab_names", [self.tab_title or self.s.tab_name])
            stale = {w.uuid for w in board.stale}
            kept: list[Seeded | SeededNote] = [
                *(w for w in board.widgets if w.uuid not in stale),
                *board.notes,
            ]
            for seed in kept:
                self.eval.add(
                    "required_layouts", widget_uuid=seed.uuid, tab_id=self.tab_id, **seed.slot.wire()
                )
        return note_name

    def _distractors(self, body: str) -> list[str]:
        """What a note must not say: the figures other cuts of the target serve (another option of one of its
        parameters) and, at Ground, the other facts planted in the governing source — the values an agent
        that writes every candidate would write. Values the right note also says are never listed."""
        out: list[str] = []
        # Whatever a faithful note could say is never a distractor: the note itself, every row the cut read
        # serves (a note may record them all) and the prompt.
        fair = " ".join([body, self._served_text(), self.s.find_hint or ""])
        nums = numbers_in(fair)

        def keep(value: Any) -> None:
            text = said_as_text(value).strip()
            if len(text) >= 3 and text not in out and not text_contains(fair, text, blob_numbers=nums):
                out.append(text)

        if self.level.lived:
            for phrase in self._other_facts():
                keep(phrase)
        if self.s.kind == "read":
            t = self.level.first
            # the look-alikes first: another widget of the app that takes every stated value serves rows of its
            # own, and a note that records both widgets' rows ("read everything that fits") must fail
            # (never a figure the target serves on another cut: a counterfactual reader of that cut writes it)
            cuts = [{**t.params, key: value} for key in t.params for value in t.widget.options(key)]
            target_said = " ".join(
                json.dumps(self._rows(t.origin, t.widget_id, c), default=str) for c in cuts
            )
            target_nums = numbers_in(target_said)
            for wid, d in self._look_alikes():
                for row in self._rows(t.origin, wid, dict(t.params))[:1]:
                    if isinstance(row, dict):
                        own = [
                            v
                            for k, v in row.items()
                            if k not in t.params
                            and d.param(k) is None
                            and not text_contains(target_said, said_as_text(v), blob_numbers=target_nums)
                        ]
                        # its figures and references first: a name it shows (a desk, a trader) may be what
                        # another cut of the target serves too; a look-alike that serves no figure (a log of
                        # text entries) is told apart by its text, or a reader that notes both widgets passes
                        figures = [v for v in own if _figure(v) or re.search(r"\d", str(v))]
                        for v in figures or [v for v in own if re.search(r"[A-Za-z]{3}", str(v))]:
                            keep(v)
            for key in t.params:
                for value in t.widget.options(key):
                    if str(value) == str(t.params[key]):
                        continue
                    for row in self._rows(t.origin, t.widget_id, {**t.params, key: value})[:1]:
                        for f in self.fields:
                            if isinstance(row, dict) and f.key in row:
                                keep(row[f.key])
        return out[:MAX_DISTRACTORS]

    def _look_alikes(self) -> list[tuple[str, Any]]:
        """The other widgets of the read target's app that accept every value the request states."""
        t = self.level.first
        fixture = self.level.fixture(t.origin)
        if fixture is None:
            return []
        app = t.widget.definition.get("category")
        return [
            (wid, d)
            for wid, d in fixture.catalog.widgets.items()
            if wid != t.widget_id
            and d.definition.get("category") == app
            and all((p := d.param(k)) is not None and value_allowed(p, v) for k, v in t.params.items())
        ]

    def _served_text(self) -> str:
        """Every row the read's target serves on the cut read, as text."""
        if self.s.kind != "read":
            return ""
        t = self.level.first
        return json.dumps(self._rows(t.origin, t.widget_id, dict(t.params)), default=str)

    def _other_facts(self) -> list[str]:
        """What the governing source says besides the fact the level asks for: its other planted facts, or,
        when it plants none, its other workflow steps (a skill) or sentences (a resource)."""
        gov = self.s.governance
        world = self.level.ctx.world
        sources: dict[str, Mapping[str, Skill | Resource | Prompt]] = {
            "skill": world.skills,
            "resource": world.resources,
            "prompt": world.prompts,
        }
        source = sources.get(gov.kind, {}).get(gov.ref)
        if source is None:
            return []
        planted = [p.phrase for p in source.planted if p.phrase != gov.phrase]
        if planted:
            return planted
        text = source.content if isinstance(source, Skill) else source.text
        parts = [m[1] for m in STEP.findall(text)] or re.split(r"(?<=[.!?])\s+", text.strip())
        return [
            p.strip().rstrip(".")
            for p in parts
            if gov.phrase.casefold() not in p.casefold() and len(p.split()) >= 3
        ][:6]

    # -- the build ----------------------------------------------------------------------------------------
    def _build(self) -> Built:
        """Compose builds a backend and app and uses what it built: the table is keyed on the parameter the
        Ground fact set and placed on the dashboard with the value found, or (a fact that titles the tab) the
        app's tab takes the board's new title."""
        b = self.s.facts.build
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
            "description": f"Authored {b.table.lower()} for {self.level.dash}.",
            "endpoint": f"/{slugify(b.table)}",
            "type": "table",
            "gridData": {"w": 40, "h": 10},
        }
        keyed = self.level.grounded_key
        placed: dict[str, Any] = {}
        if keyed is not None:
            target = self.level.target_setting(keyed)
            declared = target.widget.param(keyed) or {}
            widget["params"] = [
                {
                    k: declared[k]
                    for k in ("paramName", "type", "value", "label", "description", "options")
                    if k in declared
                }
            ]
            placed = {keyed: target.params[keyed]}
        apps = [
            {
                "name": app,
                "description": f"Authored app for the {self.level.dash} work.",
                "tabs": {
                    tab_id: {
                        "id": tab_id,
                        "name": tab_name,
                        "layout": [{"i": table_id, "x": 0, "y": 0, "w": 40, "h": 10}],
                    }
                },
            }
        ]
        if WIDGETS_SPEC in self.level.ctx.world.resources:
            self.step("read_workspace_resource", {"uri": WIDGETS_SPEC}, optional=True)
        envelope = self.step(
            "manage_backends",
            {
                "operation": "add",
                "name": b.backend,
                "url": f"http://127.0.0.1:{port}",
                "widgets_json": {table_id: widget},
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
        self.eval.add(
            "required_widget_defs",
            backend_name=b.backend,
            name=b.table,
            expect={"type": "table"},
            **({"params_include": [{"paramName": keyed}]} if keyed is not None else {}),
        )
        self.eval.add(
            "required_app_defs",
            backend_name=b.backend,
            name_contains=app,
            tab_names_include=[tab_name],
            layout_refs_valid=True,
            no_overlaps=True,
            widgets_on_tab=[{"tab_name": tab_name, "widget_name": b.table}],
        )
        self.eval.add("required_tool_results", tool="manage_apps", data_contains=[app, tab_name, b.backend])
        # the built table goes first among the widgets the level must leave
        built = {"origin": b.backend, "name": b.table, "max_count": 1} | (
            {"data_args": placed} if placed else {}
        )
        self.eval.add("required_widgets", **built, tab_id=self.tab_id)
        return Built(b.backend, b.table, app, tab_name, backend_id, keyed, tab_like)
