"""Certification gates: a task is certified only when every gate holds, and each gate says why.

Gates are registered in order (schema, grounding, oracle, noop, load_bearing, leak, determinism, equivalence,
shortcuts, counterfactual, judge, prose). The first seven prove the reference replays and is not free; equivalence and
shortcuts prove the task measures what its level claims: valid variants of the reference pass (nothing
over-strict) and generic agents that do not understand the request fail (nothing under-strict); counterfactual
proves each hidden value comes from its source (varied there, the right answer changes); the judge gate admits a judged answer
only under a judge whose audit on the task is on record and current; the prose gate refuses a request a reviewer would
not sign (certify/prose.py: split phrasal verbs, bolted aliases, fragments, forward references, pointers that name no
place, doubled words and punctuation), and its detail is the author's next-round feedback. A batch records per-task failures as data and carries
on: a malformed file fails its schema gate and the other tasks are still certified.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from simulator import SetupError, WidgetDef, Workspace, World, tools_of, validate_widgets, value_allowed

from .counterfactual import Copy, copies, play, source_text
from .episode import CallTree, Episode, replay, start_episode
from .equivalence import Probe, probe, variants
from .grader import CHECKS, CheckFn, GradeResult, grade, passes
from .judge.audit import JudgeAudit, standing_in
from .judge.audit import standing as judge_standing
from .prose import Fault, faults
from .shortcuts import PROBES, ShortcutRun, Tree, run_battery
from .task import Task, TaskFileError, TaskSet, load_task, task_files_under

GATE_NAMES = (
    "schema",
    "grounding",
    "oracle",
    "noop",
    "load_bearing",
    "leak",
    "determinism",
    "equivalence",
    "shortcuts",
    "counterfactual",
    "judge",
    "prose",
)
WIDGET_TOOLS = tools_of("widget")


@dataclass(frozen=True)
class GateResult:
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "detail": self.detail}


@dataclass
class Subject:
    """One task under certification, with the work gates share (the oracle replay is run once)."""

    path: str
    world: World
    task: Task | None = None
    error: TaskFileError | None = None
    registry: dict[str, CheckFn] | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    judge_audit: JudgeAudit | None = None

    @cached_property
    def calls(self) -> CallTree:
        """Every call made on the task as it is, by the reference, the gates' variants of it and the shortcut
        agents: a call made before is not made again (`CallTree`)."""
        assert self.task is not None
        return CallTree(self.world, self.task)

    def run(
        self, steps: list[tuple[str, Any]], final_answer: str | None = None
    ) -> tuple[Episode, GradeResult]:
        """`steps` (and the final answer) replayed on the task, graded; along the calls made before."""
        assert self.task is not None
        episode = self.calls.replay(steps, final_answer)
        return episode, grade(self.task, episode, self.registry)

    @cached_property
    def steps(self) -> list[tuple[str, Any, bool]]:
        """(tool, args, required) for each reference step."""
        assert self.task is not None
        return [(s.tool, s.args, not s.optional) for s in self.task.eval.reference_steps()]

    @cached_property
    def oracle(self) -> tuple[Episode, GradeResult]:
        return self.run(
            [(t, a) for t, a, _ in self.steps], self.task.eval.reference_answer if self.task else None
        )

    @cached_property
    def noop(self) -> tuple[Episode, GradeResult]:
        return self.run([])

    @cached_property
    def probe(self) -> Probe:
        assert self.task is not None
        return probe(
            self.world, self.task, [(t, a) for t, a, _ in self.steps], self.task.eval.reference_answer
        )

    @cached_property
    def shortcut_tree(self) -> Tree:
        """The shortcut agents' calls on the task as it is (the battery's, then the probes')."""
        assert self.task is not None
        return Tree(self.world, self.task, self.registry, self.calls)

    @cached_property
    def battery(self) -> list[ShortcutRun]:
        """Every shortcut agent of the battery once on the task (the shortcuts and counterfactual gates share
        them)."""
        assert self.task is not None
        return run_battery(self.world, self.task, self.registry, self.shortcut_tree)

    @property
    def ours(self) -> bool:
        """A task we authored (it carries `meta`); the source benchmark's tasks carry none."""
        return self.task is not None and self.task.meta is not None


GateFn = Callable[[Subject], GateResult]
GATES: dict[str, GateFn] = {}


def gate(name: str) -> Callable[[GateFn], GateFn]:
    def register(fn: GateFn) -> GateFn:
        GATES[name] = fn
        return fn

    return register


@gate("schema")
def schema_gate(s: Subject) -> GateResult:
    if s.error is not None:
        return GateResult(False, f"{s.error.file}: {s.error.field}: {s.error.message}")
    assert s.task is not None
    stem = Path(s.path).stem
    if stem != s.task.id:
        return GateResult(False, f"id '{s.task.id}' differs from the file name '{stem}.json'")
    try:
        Workspace.start(s.world, s.task.setup)
    except SetupError as exc:
        return GateResult(False, f"{s.path}: {exc}")
    unknown = [t for t in s.task.setup.allowed_tools or [] if t not in _tool_names()]
    if unknown:
        return GateResult(False, f"setup.allowed_tools: unknown tool(s) {unknown}")
    steps = [t for t, _, _ in s.steps if t not in _tool_names() and t != "final_answer"]
    if steps:
        return GateResult(False, f"eval.required_tools: unknown tool(s) {steps}")
    if not s.steps and s.task.eval.reference_answer is None:
        return GateResult(False, "eval: no reference (required_tools, reference_trace or reference_answer)")
    return GateResult(True, "parses; ids safe; backends, skills, baseline and dashboard exist")


def _tool_names() -> set[str]:
    from simulator import TOOL_NAMES

    return set(TOOL_NAMES)


def _authored_widgets(task: Task) -> dict[str, dict[str, Any]]:
    """Widgets the reference itself publishes through manage_backends, by origin name."""
    out: dict[str, dict[str, Any]] = {}
    for step in task.eval.reference_steps():
        args = step.args
        if (
            step.tool == "manage_backends"
            and args.get("operation") in ("add", "refresh")
            and isinstance(args.get("widgets_json"), dict)
            and isinstance(args.get("name"), str)
        ):
            widgets, report = validate_widgets(args["widgets_json"])
            if not report.errors:
                out[args["name"]] = widgets
    return out


@gate("grounding")
def grounding_gate(s: Subject) -> GateResult:
    assert s.task is not None
    task = s.task
    ws = start_episode(s.world, task).workspace  # the setup's serialisation remembered (episode.py)
    authored = _authored_widgets(task)
    problems: list[str] = []
    checked = 0

    def lookup(origin: Any, widget_id: Any, where: str, name: str | None = None) -> WidgetDef | None:
        if origin in authored:
            built = authored[origin]
            if widget_id is None and not any(
                str(d.get("name") or "").casefold() == str(name).casefold()
                for d in built.values()
                if isinstance(d, dict)
            ):
                problems.append(
                    f"{where}: no widget named '{name}' among the widgets '{origin}' is built with"
                )
            elif widget_id is not None and widget_id not in built:
                problems.append(f"{where}: '{widget_id}' is not among the widgets '{origin}' is built with")
            return None
        conn = ws._origin_or_none(str(origin))
        if conn is None:
            problems.append(f"{where}: origin '{origin}' is not connected")
            return None
        if widget_id is None:
            definition = next(
                (d for d in conn.catalog.widgets.values() if d.name.casefold() == str(name).casefold()), None
            )
        else:
            definition = conn.catalog.widgets.get(str(widget_id))
        if definition is None:
            problems.append(f"{where}: widget '{widget_id or name}' does not exist in '{origin}'")
        return definition

    def values(definition: WidgetDef | None, data_args: Any, where: str) -> None:
        nonlocal checked
        if definition is None or not isinstance(data_args, dict):
            return
        for key, value in data_args.items():
            if value is None:
                continue  # a value required absent claims nothing about the options
            checked += 1
            param = definition.param(key)
            if param is None:
                problems.append(f"{where}: '{key}' is not a parameter of '{definition.widget_id}'")
            elif not value_allowed(param, value):
                problems.append(
                    f"{where}: {key}={value!r} is not among the declared options of '{definition.widget_id}'"
                )

    for i, req in enumerate(task.eval.required_widgets):
        where = f"eval.required_widgets[{i}]"
        values(lookup(req.origin, req.widget_id, where, req.name), req.data_args, where)
    for i, step in enumerate(task.eval.required_tools):
        if step.optional:
            continue
        where = f"eval.required_tools[{i}] {step.tool}"
        graded = step.graded()
        if step.tool in WIDGET_TOOLS and "origin" in step.args and "widget_id" in step.args:
            definition = lookup(step.args["origin"], step.args["widget_id"], where)
            if "data_args" in graded:
                values(definition, graded["data_args"], where)
        elif step.tool == "update_widget" and "data_args" in graded:
            dash = (
                ws._dashboard(step.args.get("dashboard_id"))
                if step.args.get("dashboard_id") in ws.dashboards
                else ws.current_dashboard
            )
            placed = next(
                (
                    w
                    for w in dash.widgets
                    if w.uuid == step.args.get("widget_uuid")
                    or (not step.args.get("widget_uuid") and w.widget_id == step.args.get("widget_id"))
                ),
                None,
            )
            if placed is not None and not placed.generated:
                values(lookup(placed.origin, placed.widget_id, where), graded["data_args"], where)
    for hidden in task.meta.hidden if task.meta else []:
        if hidden.kind != "planted":
            continue
        text = source_text(s.world, hidden.source)
        if text is None:
            problems.append(
                f"meta.hidden: planted fact's source '{hidden.source}' does not exist in the world"
            )
        elif hidden.value.casefold() not in text.casefold():
            problems.append(f"meta.hidden: '{hidden.value}' does not occur in {hidden.source}")
        else:
            checked += 1
    if problems:
        return GateResult(
            False, "; ".join(problems[:4]) + (f" (+{len(problems) - 4} more)" if len(problems) > 4 else "")
        )
    return GateResult(
        True, f"graded widgets exist; {checked} graded value(s) among declared options or sources"
    )


@gate("oracle")
def oracle_gate(s: Subject) -> GateResult:
    episode, result = s.oracle
    if result.passed:
        return GateResult(True, f"reference passes ({len(result.checks)} checks, {episode.turns} calls)")
    failed = "; ".join(f"{c.code}: {c.label} ({c.evidence})" for c in result.failures[:3])
    return GateResult(False, f"reference fails: {failed}")


@gate("noop")
def noop_gate(s: Subject) -> GateResult:
    _, result = s.noop
    if result.passed:
        return GateResult(False, "doing nothing passes: the initial state already satisfies every check")
    return GateResult(True, f"doing nothing fails ({', '.join(result.failure_codes)})")


@gate("load_bearing")
def load_bearing_gate(s: Subject) -> GateResult:
    _, oracle_result = s.oracle
    if not oracle_result.passed:
        return GateResult(False, "not run: the reference does not pass")
    failing_somewhere = {(c.code, c.label) for c in s.noop[1].failures}
    survivors = []
    mutants = 0
    for index, (tool, _, required) in enumerate(s.steps):
        if not required:
            continue
        mutants += 1
        steps = [(t, a) for j, (t, a, _) in enumerate(s.steps) if j != index]
        _, result = s.run(steps, s.task.eval.reference_answer if s.task else None)
        failing_somewhere |= {(c.code, c.label) for c in result.failures}
        if result.passed:
            survivors.append(f"#{index + 1} {tool}")
    if s.task is not None and s.task.eval.reference_answer is not None:
        mutants += 1
        _, result = s.run([(t, a) for t, a, _ in s.steps])
        failing_somewhere |= {(c.code, c.label) for c in result.failures}
        if result.passed:
            survivors.append("the final answer")
    # A check that holds already before the agent acts and that no mutant breaks guards against damage the
    # reference never does; it cannot tell a solving agent from a lazy one, so it is reported as dead.
    noop_passing = {(c.code, c.label) for c in s.noop[1].checks if c.passed}
    dead = [
        f"{c.code}: {c.label}"
        for c in oracle_result.checks
        if (c.code, c.label) in noop_passing and (c.code, c.label) not in failing_somewhere
    ]
    s.notes["dead_checks"] = dead
    dead_note = f"; dead checks ({len(dead)}): {'; '.join(dead[:3])}" if dead else ""
    if survivors:
        return GateResult(False, f"still passes without {', '.join(survivors)}{dead_note}")
    if mutants == 0:
        return GateResult(False, "no required step to drop: the reference carries no graded work")
    return GateResult(True, f"each of {mutants} required step(s) is load-bearing{dead_note}")


@gate("leak")
def leak_gate(s: Subject) -> GateResult:
    assert s.task is not None
    hidden = s.task.meta.hidden if s.task.meta else []
    if not hidden:
        if s.ours and 1 <= s.task.level <= 3:
            return GateResult(
                False,
                f"a {s.task.difficulty} task we authored must name its hidden value(s) in "
                "meta.hidden (the target, the carried value or the planted fact)",
            )
        return GateResult(True, "skipped: the task carries no hidden values")
    leaked = leaked_values(s.world, s.task)
    if leaked:
        return GateResult(False, f"prompt states hidden value(s): {leaked}")
    return GateResult(True, f"{len(hidden)} hidden value(s) absent from the prompt")


def leaked_values(world: World, task: Task) -> list[str]:
    """The task's hidden values its prompt states. Compared as words, ignoring case and spacing: "ytd" or
    "Mandate  performance" states the value as surely as its canonical form does. Names the prompt legitimately
    states (the dashboard, origins, graded widgets' names) are masked first."""
    prompt = _spaced(_mask_names(world, task))
    named = [
        h.value
        for h in (task.meta.hidden if task.meta else [])
        if states_value(prompt, _spaced(h.value), any_case=True)
    ]
    return named + [
        f"{ref} (the id of hidden target '{name}')"
        for name, ref in target_refs(world, task)
        if states_value(task.prompt, ref, any_case=True)
    ]


def target_refs(world: World, task: Task) -> list[tuple[str, str]]:
    """(name, id) for every identifier of a hidden target an agent could be handed instead of its name: the
    catalog widget id of the widget by that name among the task's graded and seeded widgets, and the uuid of
    every seeded instance of it. A prompt giving either ("update w_4685") says which widget to take as surely
    as the name does, although the ladder, which never reads ids from a prompt, still has to find it."""
    hidden = {h.value for h in (task.meta.hidden if task.meta else []) if h.kind == "target"}
    if not hidden:
        return []
    board = task.setup.initial_state.dashboard if task.setup.initial_state else None
    seeded = list(board.widgets) if board else []
    keys = {(r.origin, r.widget_id) for r in task.eval.required_widgets if r.widget_id is not None}
    keys |= {(w.origin, w.widget_id) for w in seeded if w.origin is not None and w.widget_id is not None}
    out: list[tuple[str, str]] = []
    for origin, widget_id in sorted(keys, key=str):
        fixture = next((f for f in world.backends.values() if f.origin == origin), None)
        definition = fixture.catalog.widgets.get(widget_id) if fixture and widget_id else None
        if definition is None or definition.name not in hidden:
            continue
        out.append((definition.name, widget_id))
        out += [
            (definition.name, w.widget_uuid) for w in seeded if w.widget_id == widget_id and w.widget_uuid
        ]
    return list(dict.fromkeys(out))


def _spaced(text: str) -> str:
    return " ".join(text.split())


def states_value(text: str, value: str, *, any_case: bool = False) -> bool:
    """Whether `text` states `value` as a word, by default with its own case: "status Open" states Open, "the
    open-items policy" does not (and, with its own case, neither does "the open dashboard")."""
    return (
        bool(value.strip())
        and _may_hold(text, value, any_case)
        and _value_pattern(value, any_case).search(text) is not None
    )


def _may_hold(text: str, value: str, any_case: bool) -> bool:
    """False only where `value` cannot match in `text`: it is not a substring (with its own case), or, both being
    ASCII, not a substring of the lowered text (ignoring case, `re` pairs ASCII letters with two non-ASCII ones,
    the Kelvin sign and the long s, so the shortcut is taken for ASCII texts only). A certification asks of
    thousands of values, most of them absent: each is spared compiling its pattern."""
    if not any_case:
        return value in text
    return not (text.isascii() and value.isascii()) or value.lower() in text.lower()


@lru_cache(maxsize=4096)
def _value_pattern(value: str, any_case: bool) -> re.Pattern[str]:
    # Compiled once per value: a certification asks of thousands of values, past `re`'s own cache.
    return re.compile(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", re.I if any_case else 0)


def _mask_names(world: World, task: Task) -> str:
    """The prompt with the names it legitimately states blanked out (the dashboard, origins, apps and the
    display names of graded widgets), so that a hidden value that merely occurs inside a name ("Open" in
    "Open Alert Metrics") is not taken for a leak, while the value said as a value still is."""
    names: set[str] = set()
    if task.setup.default_selected_dashboard:
        names.add(task.setup.default_selected_dashboard)
    hidden_targets = {h.value for h in (task.meta.hidden if task.meta else []) if h.kind == "target"}
    for req in task.eval.required_widgets:
        names.add(req.origin)
        fixture = next((f for f in world.backends.values() if f.origin == req.origin), None)
        definition = fixture.catalog.widgets.get(req.widget_id) if fixture and req.widget_id else None
        if definition is not None and definition.name not in hidden_targets:
            names.add(definition.name)
            if definition.definition.get("category"):
                names.add(str(definition.definition["category"]))
    text = task.prompt
    for name in sorted(names, key=len, reverse=True):
        text = _blank(text, name)
    return text


def _blank(text: str, name: str) -> str:
    """`re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)`: every occurrence of `name`, in any case,
    replaced by a space, left to right. Both ASCII (where ignoring case is lowering both, `_may_hold`), found
    by `str.find` on the lowered text instead of a pattern compiled per name."""
    if not (name and text.isascii() and name.isascii()):
        return re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    low, needle = text.lower(), name.lower()
    parts, start = [], 0
    while (at := low.find(needle, start)) >= 0:
        parts.append(text[start:at])
        start = at + len(needle)
    if not parts:
        return text
    return " ".join(parts) + " " + text[start:]


@gate("determinism")
def determinism_gate(s: Subject) -> GateResult:
    first, first_result = s.oracle
    # a replay of its own on a fresh episode, never along the calls made before (`Subject.run`): that would be
    # the first replay again
    assert s.task is not None
    second = replay(s.world, s.task, [(t, a) for t, a, _ in s.steps], s.task.eval.reference_answer)
    second_result = grade(s.task, second, s.registry)
    if first.workspace.state_hash() != second.workspace.state_hash():
        return GateResult(False, "two replays of the reference end in different states")
    if (
        first_result.fingerprint() != second_result.fingerprint()
        or first_result.passed != second_result.passed
    ):
        return GateResult(False, "two replays of the reference grade differently")
    return GateResult(True, f"two replays end in the same state ({first.workspace.state_hash()[:12]})")


@gate("equivalence")
def equivalence_gate(s: Subject) -> GateResult:
    _, oracle_result = s.oracle
    if not oracle_result.passed:
        return GateResult(False, "not run: the reference does not pass")
    tried = variants(s.probe)
    failures = []
    for v in tried:
        _, result = s.run(v.steps, v.answer)
        if not result.passed:
            checks = "; ".join(f"{c.code}: {c.label} ({c.evidence})" for c in result.failures[:2])
            failures.append(f"{v.kind} [{v.label}] fails {checks}")
    if failures:
        return GateResult(
            False,
            f"{len(failures)} of {len(tried)} valid variant(s) fail, over-strict: "
            + " | ".join(failures[:3]),
        )
    kinds = sorted({v.kind for v in tried})
    return GateResult(
        True,
        f"{len(tried)} valid variant(s) pass ({', '.join(kinds)})"
        if tried
        else "no variant applies to this reference",
    )


@gate("shortcuts")
def shortcuts_gate(s: Subject) -> GateResult:
    assert s.task is not None
    if s.task.level == 0:
        return GateResult(True, "not applicable: level 0 states everything it grades")
    passing, failing = [], []
    for run in s.battery:
        if run.passed:
            passing.append(f"{run.name} ({run.episode.turns} calls)")
        else:
            why = ", ".join(run.result.failure_codes[:3]) + (
                " after the turn budget ran out" if run.episode.ended_by == "max_turns" else ""
            )
            failing.append(f"{run.name}: {why}")
    if passing:
        return GateResult(False, f"shortcut(s) pass without understanding the request: {', '.join(passing)}")
    return GateResult(True, f"{len(failing)} shortcut(s) fail — " + "; ".join(failing))


@gate("counterfactual")
def counterfactual_gate(s: Subject) -> GateResult:
    """Each hidden value must come from its source: in a copy of the world where the source says something
    else (certify/counterfactual.py), the level's reference agent reaches the other state, the original
    reference no longer passes, and every shortcut agent fails at least one of the two copies."""
    assert s.task is not None
    if s.task.level == 0:
        return GateResult(True, "not applicable: level 0 hides nothing (it states everything it grades)")
    if s.task.eval.counterfactual != "required":
        # Opt-in per taskset: the shipped taskset requires it; tasksets whose stories predate policy documents
        # (values no document of their world states) would be rejected by it, rightly, and say so when asked.
        return GateResult(True, "not applicable: the taskset does not ask for it (eval.counterfactual: off)")
    if not (s.task.meta and s.task.meta.hidden):
        return GateResult(True, "not applicable: the task names no hidden value (meta.hidden) to vary")
    if not s.oracle[1].passed:
        return GateResult(False, "not run: the reference does not pass")
    passed_here = {run.name for run in s.battery if run.passed}
    # the probes go on from the battery's calls (same task, same world)
    passed_here |= {name for name in PROBES if s.shortcut_tree.run(name).passed}
    problems: list[str] = []
    held: list[str] = []
    reference = [(t, a) for t, a, _ in s.steps]
    rung = f"ladder-{s.task.level}"
    # The reader of the source is the level's rung. Where it cannot solve even the original task (a story whose
    # source the ladder does not read: `check` reports it, calibration measures it), reading is not checked here
    # and the copy's own reference stands in; the verdict says so. Asked only when the rung misses a copy: a
    # rung that passes the copy needs no other evidence that it reads.
    reads_memo: list[bool] = []
    task = s.task

    def reads() -> bool:
        if not reads_memo:
            reads_memo.append(passes(task, play(s.world, task, rung), s.registry))
        return reads_memo[0]

    checked_by_reference = False
    for cf in copies(s.world, s.task):
        if not isinstance(cf, Copy):
            problems.append(f"{cf.kind} '{cf.value}': no counterfactual — {cf.why}")
            continue
        what = f"{cf.kind} '{cf.value}' → '{cf.other}' ({cf.where})"
        episode = play(cf.world, cf.task, rung)
        reached = grade(cf.task, episode, s.registry)
        if not reached.passed and reads():
            if passes(s.task, episode, s.registry):
                problems.append(
                    f"{what}: {rung} reaches the original state in the copy — the value is recoverable "
                    "without the source (the prompt, a name or a position decides it)"
                )
            else:
                codes = ", ".join(f"{c.code}: {c.label}" for c in reached.failures[:2])
                problems.append(
                    f"{what}: {rung}, reading the source, does not reach the other state ({codes})"
                )
            continue
        if not reached.passed:
            checked_by_reference = True
            cf_steps = [(st.tool, st.args) for st in cf.task.eval.reference_steps()]
            episode = replay(cf.world, cf.task, cf_steps, cf.task.eval.reference_answer)
            reached = grade(cf.task, episode, s.registry)
            if not reached.passed:
                codes = ", ".join(f"{c.code}: {c.label}" for c in reached.failures[:2])
                problems.append(f"{what}: the copy's own reference does not reach the other state ({codes})")
                continue
        if passes(cf.task, replay(cf.world, cf.task, reference), s.registry):
            problems.append(f"{what}: the original reference still passes — the source is not load-bearing")
            continue
        # one tree per copy: its ids are the original's, its content is not
        in_copy = Tree(cf.world, cf.task, s.registry)
        both = [name for name in sorted(passed_here) if in_copy.run(name).passed]
        if both:
            problems.append(f"{what}: {', '.join(both)} pass(es) both copies")
            continue
        held.append(what)
    if problems:
        return GateResult(
            False, "; ".join(problems[:3]) + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")
        )
    reader = (
        f"{rung} does not solve the original, so reading is not checked: the copy's own reference passes it"
        if checked_by_reference
        else f"{rung} reaches the other state"
    )
    return GateResult(
        True,
        f"{len(held)} counterfactual(s) hold — {reader}, the original reference fails it, no shortcut passes "
        "both: " + "; ".join(held),
    )


@gate("judge")
def judge_gate(s: Subject) -> GateResult:
    """A judged answer is graded by a judge only once that judge has passed its audit on the task as it is now
    (certify/judge/audit.py): the taskset's judge, under the current template."""
    assert s.task is not None
    if s.task.eval.judged is None:
        return GateResult(True, "not applicable: the task asks for no judged answer")
    if s.judge_audit is not None:
        hint = "the audit run with this certification"
        return GateResult(*standing_in(s.judge_audit, s.task, s.world, s.oracle[0], hint))
    return GateResult(*judge_standing(s.path, s.task, s.world, s.oracle[0]))


@gate("prose")
def prose_gate(s: Subject) -> GateResult:
    """The request reads as a reviewer would sign it. It applies to every task, ours and the source benchmark's
    alike: the source's hand-written prompts have no fault (tests/certify/test_prose.py keeps it so), and a fault
    there would be one too."""
    assert s.task is not None
    found = prompt_faults(s.world, s.task)
    if not found:
        return GateResult(True, "the request has no prose fault")
    return GateResult(False, f"{len(found)} prose fault(s) in the request: " + "; ".join(map(str, found[:4])))


_NOUNS: dict[int, tuple[World, frozenset[str]]] = {}


def prompt_faults(world: World, task: Task) -> list[Fault]:
    """The prose faults of the task's request. The world's parameter labels ("status", "risk rating") are nouns
    a request may refer back to; the open dashboard is always a referent (the episode starts on it)."""
    held = _NOUNS.get(id(world))
    if held is None or held[0] is not world:
        labels = {
            str(p.get("label") or p.get("paramName") or "").strip().casefold()
            for fixture in world.backends.values()
            for w in fixture.catalog.widgets.values()
            for p in w.option_params
        }
        held = _NOUNS[id(world)] = (world, frozenset(x for x in labels if x and len(x) > 2))
    return faults(task.prompt, nouns=held[1], known=["board"])


@dataclass
class Certification:
    id: str
    path: str
    gates: dict[str, GateResult]
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        return all(g.ok for g in self.gates.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "certified": self.certified,
            "gates": {k: v.to_dict() for k, v in self.gates.items()},
        }


def certify_subject(s: Subject) -> Certification:
    results: dict[str, GateResult] = {}
    schema = GATES["schema"](s)
    results["schema"] = schema
    for name, fn in GATES.items():
        if name == "schema":
            continue
        results[name] = fn(s) if schema.ok else GateResult(False, "not run: schema gate failed")
    task_id = s.task.id if s.task is not None else Path(s.path).stem
    return Certification(task_id, s.path, results, s.notes)


_MEMO: OrderedDict[tuple[Any, ...], Certification] = OrderedDict()
MEMO_SIZE = 512


def forget() -> None:
    """Drop remembered certifications (for a process that swaps code under them, like a test's monkeypatch)."""
    _MEMO.clear()


def certify_task(
    world: World,
    task: Task,
    path: str = "",
    registry: dict[str, CheckFn] | None = None,
    judge_audit: JudgeAudit | None = None,
) -> Certification:
    """Every gate on one task. Certification is a pure function of the task, the world and the code that runs
    (the registered gates and checks), so the same question asked twice in a process — an author checking its
    own draft, then the pipeline gating it — is answered once. `judge_audit`: the judge's audit to hold a judged
    task against instead of the one on record in its taskset (an author gating a draft audits it first)."""
    where = path or f"{task.id}.json"
    code = tuple((n, id(f)) for n, f in GATES.items()) + tuple(
        (c, id(f)) for c, f in (registry or CHECKS).items()
    )
    audited = None if judge_audit is None else judge_audit.model_dump_json(exclude={"created_at"})
    key = (world.fingerprint, task.model_dump_json(), where, code, audited)
    if key in _MEMO:
        _MEMO.move_to_end(key)
        return _MEMO[key]
    result = certify_subject(Subject(where, world, task, registry=registry, judge_audit=judge_audit))
    _MEMO[key] = result
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return result


def certify_file(
    world: World, path: Path, taskset: TaskSet | None = None, registry: dict[str, CheckFn] | None = None
) -> Certification:
    try:
        task = load_task(path, taskset)
        return certify_subject(Subject(str(path), world, task, registry=registry))
    except TaskFileError as exc:
        return certify_subject(Subject(str(path), world, error=exc, registry=registry))


def collect(paths: list[Path]) -> list[tuple[Path, TaskSet | None]]:
    """Task files named by `paths` (files, or taskset folders searched recursively), each with its taskset."""
    out: list[tuple[Path, TaskSet | None]] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            taskset = TaskSet.find(path)
            files = task_files_under(path)
        else:
            taskset = TaskSet.find(path)
            files = [path]
        for f in files:
            if f.resolve() not in seen:
                seen.add(f.resolve())
                out.append((f, taskset))
    return out


def summarise(results: list[Certification]) -> dict[str, Any]:
    by_gate = {
        name: sum(1 for r in results if r.gates.get(name, GateResult(False, "")).ok) for name in GATE_NAMES
    }
    return {"total": len(results), "certified": sum(r.certified for r in results), "by_gate": by_gate}


__all__ = [
    "CHECKS",
    "GATES",
    "GATE_NAMES",
    "Certification",
    "GateResult",
    "Subject",
    "certify_file",
    "certify_subject",
    "certify_task",
    "collect",
    "leaked_values",
    "prompt_faults",
    "states_value",
    "summarise",
]
