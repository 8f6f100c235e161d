"""The authoring pipeline as one LangGraph graph, built by a factory from the role drivers and a checkpointer.

    load ─Send per story→ draft ⟲ (one author round per step: certified → next level and, in parallel, a
    validator for the certified level; failing gates → another round with the gates' feedback; out of rounds → a
    blocker) → gather (the barrier: once every story is done and every certified level validated)
    → after_validation ─→ revise (validator blockers go back to the author, whose change is validated again)
                                                          └→ recertify (all levels together) → fairness
    fairness ─→ revise (ladder blockers) | calibrate → fix (defects) → repair | review
    review (a person decides blockers: interrupt) ─→ repair (a "fix" decision) | finalize → commit | END (rejected)
    repair (the one path every change takes) ─Send→ validate → … → fairness → calibrate → review

Stories are authored in parallel; the levels of one story stay in order. Each draft is its own checkpointed
step, so a killed run resumes at the round it was in. A role that gives no usable reply (RoleFailure) becomes a
blocker on its story or task and the run goes on; anything unresolved after its rounds becomes a review item.
Progress is streamed as custom events (story, level, role, round) for the live display. Nothing is written to
the working tree before the commit node.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, RetryPolicy, Send, interrupt

from certify.agents import make_agent
from certify.calibrate import (
    CalibrationRecord,
    Defect,
    TrialMemo,
    all_deterministic,
    calibrate,
    compact,
    reference_agents,
)
from certify.calibrate import rehearse as rehearse_task
from certify.gates import certify_task
from certify.lock import now, task_content_hash
from certify.plot import png
from certify.task import LEVEL_NAMES, LEVELS, Task, TaskSet, TaskSetManifest, parse_task
from certify.trial import Trial
from simulator import World

from .checks import persona_warnings
from .factcheck import resolve
from .failures import RoleFailure, RoleUnavailable
from .flags import Flag, make_flag
from .roles.author import AuthorContext, AuthorDriver, AuthoringError
from .roles.fairness import FairnessDriver
from .roles.fixer import FixerDriver, FixResult
from .roles.validator import ValidatorDriver
from .sources import load_sources
from .state import (
    AuthoredTask,
    Certification,
    Cursor,
    GateOutcome,
    Lesson,
    PipelineState,
    ProgressEvent,
    Repair,
    RunOptions,
    RunResult,
)

STANDARD_DEFAULTS: dict[str, Any] = {
    "category": "story",
    "eval": {
        "layout": {"within_grid": True, "no_overlaps": True, "grid_width": 40},
        "trace_checks": {"max_invalid_tool_calls": 2, "forbid_invented_widget_ids": True},
        "workspace_checks": {"preserve_other_dashboards": True},
    },
}
LEVEL_COUNT = len(LEVELS)


def _transient(exc: BaseException) -> bool:
    """Faults worth re-running a role step for, after the SDK's own retries gave up: an endpoint that stopped
    answering is infrastructure, not the task's fault, so it is retried here and, if it persists, stops the run
    (which resumes at this step when run again) instead of becoming a review item."""
    return isinstance(
        exc,
        (
            RoleUnavailable,
            openai.APIConnectionError,
            openai.APITimeoutError,
            openai.RateLimitError,
            openai.InternalServerError,
        ),
    )


ROLE_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, retry_on=_transient)


@dataclass
class Drivers:
    author: AuthorDriver
    validator: ValidatorDriver
    fairness: FairnessDriver
    fixer: FixerDriver
    progress: Callable[[str], None] = field(default=lambda message: None)


class _Env:
    """Per-process caches of what the state only names (the world, the resolved stories)."""

    def __init__(self) -> None:
        self._worlds: dict[str, World] = {}
        self.contexts: dict[tuple[Any, ...], dict[str, AuthorContext]] = {}
        self.certs: dict[tuple[str, str, str], Certification] = {}
        self._defaults: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.trials = TrialMemo()
        self._references: dict[str, list[Any]] = {}
        self.rehearsing = threading.Lock()

    def world(self, options: RunOptions) -> World:
        if options.world not in self._worlds:
            self._worlds[options.world] = World.load(options.world)
        return self._worlds[options.world]

    def reference(self, name: str) -> list[Any]:
        """The reference's agents, built once (building one reads its skills and indexes)."""
        if name not in self._references:
            self._references[name] = reference_agents(name)
        return self._references[name]

    def defaults(self, options: RunOptions) -> dict[str, Any]:
        """`taskset_defaults`, read again only when the manifest file changes: every draft is parsed and
        certified under them, and rebuilding them per draft was a tenth of a run's CPU."""
        path = options.taskset_root / "taskset.json"
        try:
            st = path.stat()
            stamp: tuple[Any, ...] = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = ()
        key = (str(options.taskset_root), options.world, options.persona, stamp)
        if key not in self._defaults:
            self._defaults[key] = taskset_defaults(options, self.world(options))
        return self._defaults[key]


def taskset_defaults(options: RunOptions, world: World | None = None) -> dict[str, Any]:
    """The defaults the run's tasks are certified under: the taskset's, or those of the manifest the run will
    create (so a certificate issued before the manifest exists still matches after)."""
    root = options.taskset_root
    if (root / "taskset.json").is_file():
        return TaskSet.load(root).defaults()
    created = manifest(options, world or World.load(options.world))
    return TaskSet(root, TaskSetManifest.model_validate(created)).defaults()


def _backends(world: World) -> list[str]:
    return list(world.default_backends)


def _baseline(options: RunOptions, world: World) -> str:
    if options.baseline is not None:
        return options.baseline
    return next((b for b in sorted(world.baselines) if b.endswith("workspace-a")), "")


def resolve_baseline(options: RunOptions, world: World) -> str:
    """The run's baseline, checked against the world before any work (an unknown one is bad input)."""
    baseline = _baseline(options, world)
    if baseline and baseline not in world.baselines:
        raise ValueError(
            f"--baseline '{baseline}' is not a baseline of world {world.name} (known: "
            f"{', '.join(sorted(world.baselines)) or 'none'}; '' for a bare workspace)"
        )
    return baseline


def split_task_id(task_id: str) -> tuple[str, int]:
    slug, level = task_id.rsplit("_level", 1)
    return slug, int(level)


def build_graph(drivers: Drivers, checkpointer: Any = None) -> Any:
    env = _Env()

    def contexts(options: RunOptions) -> dict[str, AuthorContext]:
        """The stories' authoring contexts, resolved once per process (sources do not change during a run;
        a changed source gives a new run and thread)."""
        key = (options.sources_root, options.persona, options.world, options.baseline)
        if key not in env.contexts:
            world = env.world(options)
            persona, stories = load_sources(Path(options.sources_root), options.persona)
            backends = _backends(world)
            resolved = [resolve(world, s, backends) for s in stories]
            siblings = tuple(r.story.slug for r in resolved)
            defaults = env.defaults(options)
            env.contexts[key] = {
                r.story.slug: AuthorContext(
                    world,
                    persona,
                    r,
                    _baseline(options, world),
                    backends,
                    sorted(world.skills),
                    siblings,
                    defaults,
                )
                for r in resolved
            }
        return env.contexts[key]

    def parse(options: RunOptions, raw: dict[str, Any]) -> Task:
        return parse_task(
            raw, f"{options.taskset}/{options.persona}/{raw.get('id')}.json", env.defaults(options)
        )

    def certify(options: RunOptions, raw: dict[str, Any]) -> Certification:
        """The gates on one draft. A task's certification depends on its own content, the world and the
        defaults only, so within a process the same draft is gated once (re-gating the set together after a
        change costs nothing for the levels that did not change)."""
        key = (options.world, task_content_hash(raw), task_content_hash(env.defaults(options)))
        if key in env.certs:
            return env.certs[key]
        try:
            task = parse(options, raw)
        except Exception as exc:  # a draft that does not even parse is gate feedback, not a crash
            return Certification(certified=False, gates={"schema": GateOutcome(ok=False, detail=str(exc))})
        cert = certify_task(env.world(options), task, f"{task.id}.json")
        env.certs[key] = Certification(
            certified=cert.certified,
            gates={k: GateOutcome(ok=v.ok, detail=v.detail) for k, v in cert.gates.items()},
            notes={k: v for k, v in cert.notes.items() if k == "dead_checks"},
        )
        return env.certs[key]

    def emit(
        role: str,
        status: str,
        message: str,
        *,
        story: str | None = None,
        level: int | None = None,
        round_: int | None = None,
    ) -> None:
        """One progress event: streamed to a live display when the caller streams, and as a line."""
        event = ProgressEvent(
            story=story, level=level, role=role, round=round_, status=status, message=message
        )
        with contextlib.suppress(RuntimeError):  # outside a run (a node called directly in a test)
            get_stream_writer()(event.model_dump())
        drivers.progress(message)

    def role_flag(
        options: RunOptions,
        failure: RoleFailure,
        *,
        story: str | None = None,
        task_id: str | None = None,
        level: int | None = None,
    ) -> Flag:
        return make_flag(
            role="gate"
            if failure.role == "author"
            else failure.role
            if failure.role in ("validator", "fairness", "fixer", "calibration")
            else "gate",
            kind="role_failure",
            persona=options.persona,
            story=story,
            task_id=task_id,
            level=level,
            check=f"{failure.role}_reply",
            severity="blocker",
            reason=f"the {failure.role} gave no usable reply: {failure.reason}",
            evidence=failure.evidence[:4000],
        )

    def defect_flag(
        options: RunOptions, authored: AuthoredTask, check: str, reason: str, evidence: str
    ) -> Flag:
        """A blocker on a task the fixer could not settle (an escalation, a repair that does not certify)."""
        return make_flag(
            role="fixer",
            kind="defect",
            persona=options.persona,
            story=authored.story,
            task_id=authored.task_id,
            level=authored.level,
            check=check,
            severity="blocker",
            reason=reason,
            evidence=evidence,
        )

    # ---------------------------------------------------------------- authoring
    def load(state: PipelineState, runtime: Runtime[RunOptions]) -> Command:
        options = runtime.context
        ctxs = contexts(options)
        emit(
            "load",
            "loaded",
            f"loaded persona {options.persona}: {len(ctxs)} stories, facts checked against "
            f"{env.world(options).name}",
        )
        for warning in persona_warnings(
            Path(options.sources_root), options.persona, [c.story for c in ctxs.values()]
        ):
            drivers.progress(f"warning: {warning}")
        flags = {}
        for slug, ctx in ctxs.items():
            for warning in ctx.story.warnings:
                f = make_flag(
                    role="validator",
                    kind="shortcut_risk",
                    persona=options.persona,
                    story=slug,
                    check="facts",
                    severity="minor",
                    reason=warning,
                )
                flags[f.id] = f
        return Command(
            update={"stories": list(ctxs), "flags": flags, "rounds": {}, "done": {}},
            goto=[Send("draft", Cursor(story=slug).model_dump()) for slug in ctxs],
        )

    def draft(payload: dict[str, Any], runtime: Runtime[RunOptions]) -> Command:
        """One author round of one story's level; the next round or level is the next step."""
        options = runtime.context
        cursor = Cursor.model_validate(payload)
        slug, level = cursor.story, cursor.level
        task_id = f"{slug}_level{level}"
        history = list(cursor.history)
        name = LEVEL_NAMES[LEVELS[level]]
        emit(
            "author",
            "drafting",
            f"{slug} level{level} ({name}): round {cursor.round + 1}",
            story=slug,
            level=level,
            round_=cursor.round + 1,
        )
        update: dict[str, Any] = {}
        try:
            raw = drivers.author.draft(contexts(options)[slug], level, cursor.feedback, history).task
        except RoleUnavailable:
            raise
        except RoleFailure as failure:
            f = role_flag(options, failure, story=slug, task_id=task_id, level=level)
            emit(
                "author",
                "failed",
                f"{slug} level{level} ({name}): the author gave no usable reply; the story waits for review",
                story=slug,
                level=level,
            )
            return Command(
                update={"flags": {f.id: f}, "history": {slug: history}, "done": {slug: "failed"}},
                goto="gather",
            )
        except AuthoringError as exc:
            raw, cert = None, Certification(certified=False)
            feedback = [f"authoring failed: {exc}"]
        else:
            cert = certify(options, raw)
            feedback = cert.failing()
        update["history"] = {slug: history}
        if raw is not None:
            update["tasks"] = {
                task_id: AuthoredTask(raw=raw, cert=cert, story=slug, level=level, rounds=cursor.round + 1)
            }
        if not cert.certified and cursor.round + 1 < options.author_rounds:
            emit(
                "gates",
                "retry",
                f"{slug} level{level} ({name}): gates failed, another round: " + "; ".join(feedback)[:300],
                story=slug,
                level=level,
                round_=cursor.round + 1,
            )
            retry = cursor.model_copy(
                update={"round": cursor.round + 1, "feedback": feedback, "history": history}
            )
            return Command(update=update, goto=Send("draft", retry.model_dump()))
        if not cert.certified:
            f = make_flag(
                role="gate",
                kind="gate_failure",
                persona=options.persona,
                story=slug,
                task_id=task_id,
                level=level,
                check="gates",
                severity="blocker",
                reason=f"level{level} did not certify in {options.author_rounds} rounds",
                evidence="; ".join(feedback) or "the author produced no task",
            )
            update["flags"] = {f.id: f}
        emit(
            "gates",
            "certified" if cert.certified else "failed",
            f"{slug} level{level} ({name}): " + ("certified" if cert.certified else "NOT certified"),
            story=slug,
            level=level,
        )
        review = (
            [Send("validate", {"task_id": task_id, "raw": raw}), Send("rehearse", {"raw": raw})]
            if cert.certified and raw is not None
            else []
        )
        if level + 1 < LEVEL_COUNT:
            nxt: Send | str = Send("draft", Cursor(story=slug, level=level + 1, history=history).model_dump())
        else:
            nxt, update = "gather", {**update, "done": {slug: "authored"}}
        return Command(update=update, goto=[nxt, *review])  # the next draft first: it is on the critical path

    def gather(state: PipelineState) -> dict[str, Any]:
        return {}

    def route_after_gather(state: PipelineState) -> Any:
        """The barrier after the parallel work: stories climbing their levels while each certified level is
        already with its validator. The last of them to finish sends the set on; the others end their branch."""
        if len(state.get("done", {})) < len(state.get("stories", [])):
            return END
        tasks, validated = state.get("tasks", {}), state.get("validated", {})
        waiting = [
            t for t, a in tasks.items() if a.cert.certified and validated.get(t) != task_content_hash(a.raw)
        ]
        return END if waiting else "after_validation"

    def dispatch_validation(state: PipelineState, task_ids: list[str]) -> list[Send] | str:
        tasks = state.get("tasks", {})
        certified = [t for t in task_ids if t in tasks and tasks[t].cert.certified]
        if not certified:
            return "after_validation"
        return [Send("validate", {"task_id": t, "raw": tasks[t].raw}) for t in certified]

    def validate(payload: dict[str, Any], runtime: Runtime[RunOptions]) -> dict[str, Any]:
        options = runtime.context
        task = parse(options, payload["raw"])
        try:
            flags = drivers.validator.review(task, env.world(options), options.persona)
        except RoleUnavailable:
            raise
        except RoleFailure as failure:
            story, level = split_task_id(payload["task_id"])
            flags = [role_flag(options, failure, story=story, task_id=payload["task_id"], level=level)]
        return {
            "flags": {f.id: f for f in flags},
            "validated": {payload["task_id"]: task_content_hash(payload["raw"])},
        }

    def rehearse(payload: dict[str, Any], runtime: Runtime[RunOptions]) -> dict[str, Any]:
        """The reference's trials on a level that just certified, when they cannot change before calibration
        (deterministic agents): it runs while the models are busy with the next level, and `calibrate` finds
        them done. One rehearsal at a time: they fill idle time and should not crowd the round's own work (the
        next drafts' requests) off the interpreter. Nothing enters the state; a resumed run simply calibrates
        what it does not find."""
        options = runtime.context
        if not options.reference_agent.startswith("openai:"):  # a model reference is never rehearsed
            with env.rehearsing:
                task = parse(options, payload["raw"])
                agents = env.reference(options.reference_agent)
                asyncio.run(rehearse_task(env.world(options), task, agents, env.trials))
        return {}

    def open_blockers(state: PipelineState, roles: tuple[str, ...]) -> list[Flag]:
        return [
            f
            for f in state.get("flags", {}).values()
            if f.role in roles and f.kind != "role_failure" and f.blocking
        ]

    def after_validation(state: PipelineState, runtime: Runtime[RunOptions]) -> dict[str, Any]:
        blockers = open_blockers(state, ("validator",))
        n = state.get("rounds", {}).get("validator", 0)
        targets = sorted({f.task_id for f in blockers if f.task_id})
        if blockers:
            emit("validator", "flagged", f"validators: {len(blockers)} blocker flag(s) on {targets}")
        if targets and n < runtime.context.review_rounds:
            return {"revise": targets, "rounds": {"validator": n + 1, "revise_from": 1}}
        emit("validator", "done", "validators: done")
        return {"revise": [], "rounds": {"validator": n}}

    def route_after_validation(state: PipelineState) -> str:
        return "revise" if state.get("revise") else "recertify"

    def revise(state: PipelineState, runtime: Runtime[RunOptions]) -> dict[str, Any]:
        """Blockers go back to the story's author session with the flags as feedback."""
        options = runtime.context
        ctxs = contexts(options)
        tasks, flags, histories = {}, {}, {}
        for task_id in state.get("revise", []):
            slug, level = split_task_id(task_id)
            raised = [f for f in state["flags"].values() if f.task_id == task_id and f.blocking]
            feedback = [
                f"{f.role} flag {f.check}: {f.reason} {f.evidence} {f.suggestion}".strip() for f in raised
            ]
            history = list(histories.get(slug, state.get("history", {}).get(slug, [])))
            emit("author", "revising", f"revising {task_id}: {len(raised)} flag(s)", story=slug, level=level)
            try:
                raw = drivers.author.draft(ctxs[slug], level, feedback, history).task
            except RoleUnavailable:
                raise
            except RoleFailure as failure:
                f = role_flag(options, failure, story=slug, task_id=task_id, level=level)
                flags[f.id] = f
                continue
            except AuthoringError:
                continue
            histories[slug] = history
            cert = certify(options, raw)
            changed = raw != state["tasks"][task_id].raw and cert.certified
            if changed:
                tasks[task_id] = AuthoredTask(raw=raw, cert=cert, story=slug, level=level)
                for f in raised:
                    flags[f.id] = f.model_copy(update={"status": "resolved"})
            emit(
                "author",
                "revised",
                f"revised {task_id}: " + ("changed" if changed else "no change"),
                story=slug,
                level=level,
            )
        return {"tasks": tasks, "flags": flags, "history": histories}

    def route_after_revise(state: PipelineState) -> Any:
        if state.get("rounds", {}).get("revise_from") == 2:
            return "recertify"
        return dispatch_validation(state, state.get("revise", []))

    def recertify(state: PipelineState, runtime: Runtime[RunOptions]) -> dict[str, Any]:
        """Every level again, together: a change at one level can break another."""
        options = runtime.context
        tasks, flags = {}, {}
        for task_id, authored in state.get("tasks", {}).items():
            cert = certify(options, authored.raw)
            tasks[task_id] = authored.model_copy(update={"cert": cert})
            if not cert.certified:
                f = make_flag(
                    role="gate",
                    kind="gate_failure",
                    persona=options.persona,
                    story=authored.story,
                    task_id=task_id,
                    level=authored.level,
                    check="recertify",
                    severity="blocker",
                    reason="fails its gates when the set is re-certified together",
                    evidence="; ".join(cert.failing()),
                )
                flags[f.id] = f
        ok = sum(1 for t in tasks.values() if t.cert.certified)
        emit("gates", "recertified", f"re-certified the set together: {ok}/{len(tasks)}")
        return {"tasks": tasks, "flags": flags}

    def fairness(state: PipelineState, runtime: Runtime[RunOptions]) -> dict[str, Any]:
        options = runtime.context
        parsed = {tid: parse(options, t.raw) for tid, t in state.get("tasks", {}).items()}
        everything = list(parsed.values())
        flags: dict[str, Flag] = {}

        def one(slug: str) -> list[Flag]:
            levels = sorted((t for t in everything if t.meta and t.meta.story == slug), key=lambda t: t.level)
            try:
                return drivers.fairness.review(slug, levels, everything, options.persona)
            except RoleUnavailable:
                raise
            except RoleFailure as failure:
                return [role_flag(options, failure, story=slug)]

        with ThreadPoolExecutor(max_workers=len(state["stories"]) + 1) as pool:  # one reviewer per story
            reviews = [pool.submit(one, slug) for slug in state["stories"]]
            ahead = pool.submit(draw_ahead, options, everything)  # after the reviewers: they wait on a model
            for review in reviews:
                flags.update({f.id: f for f in review.result()})
            ahead.result()
        merged = {**state.get("flags", {}), **flags}
        blockers = [
            f for f in merged.values() if f.role == "fairness" and f.kind != "role_failure" and f.blocking
        ]
        n = state.get("rounds", {}).get("fairness", 0)
        targets = sorted({f.task_id for f in blockers if f.task_id})
        emit("fairness", "reviewed", f"ladder fairness: {len(blockers)} blocker flag(s)")
        if targets and n < options.review_rounds:
            return {"flags": flags, "revise": targets, "rounds": {"fairness": n + 1, "revise_from": 2}}
        return {"flags": flags, "revise": [], "rounds": {"fairness": n}}

    def calibration(
        options: RunOptions, tasks: list[Task], frontier: Any = None
    ) -> tuple[CalibrationRecord, list[Trial]]:
        """The run's reference over `tasks`, reading the trials its rehearsals left in the run's memo."""
        return asyncio.run(
            calibrate(
                env.world(options),
                tasks,
                options.reference_agent,
                persona=options.persona,
                taskset=options.taskset,
                repeats=options.repeats,
                frontier=frontier,
                concurrency=8,
                min_attempts=options.min_attempts,
                memo=env.trials,
                built=env.reference(options.reference_agent),
            )
        )

    def draw_ahead(options: RunOptions, tasks: list[Task]) -> None:
        """While the fairness reviewers think: the calibration these tasks will get, when it needs no model
        (a deterministic reference, rehearsed already, and no frontier probe), and its staircase picture, the
        dearest part of writing the run's files. Both are pure, so `calibrate` and `commit` find them done;
        if fairness sends a level back, the picture is simply never used."""
        if options.frontier_agent or options.reference_agent.startswith("openai:"):
            return
        if not all_deterministic(env.reference(options.reference_agent)):
            return
        record, _ = calibration(options, tasks)
        png(record)

    def route_after_fairness(state: PipelineState) -> str:
        return "revise" if state.get("revise") else "calibrate"

    # ---------------------------------------------------------------- calibration and repairs
    def calibrate_persona(state: PipelineState, runtime: Runtime[RunOptions]) -> dict[str, Any]:
        options = runtime.context
        tasks = [parse(options, t.raw) for t in state["tasks"].values()]
        emit("calibration", "running", f"calibrating with {options.reference_agent} x{options.repeats}")
        frontier = _agent(options.frontier_agent) if options.frontier_agent else None
        record, trials = calibration(options, tasks, frontier)
        flags: dict[str, Flag] = {}
        known = state.get("flags", {})

        def add(**kw: Any) -> None:
            f = make_flag(role="calibration", persona=options.persona, **kw)
            if (
                f.id not in known or not known[f.id].decision
            ):  # a person's decision on the same finding stands
                flags[f.id] = f

        for n in record.noise:
            add(
                kind="noise",
                task_id=n.task_id,
                level=LEVELS.index(n.level),
                check="staircase",
                severity="minor",
                reason=f"scattered failures at an inverted level: {n.detail}",
            )
        for p in record.probes:
            add(
                kind="dead_rung",
                level=LEVELS.index(p.level),
                check="frontier_probe",
                severity="blocker" if p.status == "flagged" else "minor",
                reason=f"{p.level} was never passed by {record.agent}; frontier probe: {p.status}",
                evidence=f"{p.agent or 'no frontier agent'} on {p.task_id or '-'}: {p.failure_codes}",
            )
        for s in record.shortcuts:
            add(
                kind="shortcut",
                task_id=s.task_id,
                level=LEVELS.index(s.level),
                check="staircase",
                severity="minor",
                reason=s.detail,
            )
        if record.verdict == "insufficient":
            add(
                kind="insufficient",
                check="staircase",
                severity="blocker",
                reason=f"calibration measured too little: fewer than {record.min_attempts} valid attempts per agent "
                f"at {', '.join(record.insufficient) or 'every level'}",
                evidence=f"{record.trials} trials, {record.invalid} invalid",
            )
        for f in record.ladder.findings if record.ladder else []:
            add(
                kind="ladder",
                task_id=f.task_id,
                level=LEVELS.index(f.level),
                check="ladder_criterion",
                severity="blocker",
                reason=f.detail,
                evidence=" → ".join(str(e["tool"]) + ("" if e.get("ok") else " (failed)") for e in f.events),
            )
        for fid, old in known.items():
            if old.role == "calibration" and old.status == "open" and fid not in flags:
                flags[fid] = old.model_copy(update={"status": "resolved"})
        rates = ", ".join(f"{s.level[-1]}:{(s.pass_rate or 0):.0%}" for s in record.levels)
        emit(
            "calibration",
            record.verdict,
            f"calibration with {record.agent} x{record.repeats}: {rates} — "
            + {"holds": "staircase holds", "inverted": "INVERTED", "insufficient": "INSUFFICIENT"}[
                record.verdict
            ],
        )
        return {"calibration": record, "calibration_trials": [_evidence(t) for t in trials], "flags": flags}

    def route_after_calibration(state: PipelineState, runtime: Runtime[RunOptions]) -> str:
        record = state["calibration"]
        if (
            not record.holds
            and record.defects
            and state.get("rounds", {}).get("fix", 0) < runtime.context.fix_rounds
        ):
            return "fix"
        return "review"

    def fix(state: PipelineState, runtime: Runtime[RunOptions]) -> Command:
        """The fixer on each defect; a repair takes the one repair path, an escalation becomes a blocker."""
        options = runtime.context
        world = env.world(options)
        record = state["calibration"]
        trials = state.get("calibration_trials", [])
        repairs, flags = [], {}
        for defect in record.defects:
            authored = state["tasks"][defect.task_id]
            try:
                result = drivers.fixer.repair(authored.raw, defect, trials, world)
            except RoleUnavailable:
                raise
            except RoleFailure as failure:
                result = FixResult(None, escalate=f"the fixer gave no usable reply: {failure.reason}")
            if result.task is not None:
                repairs.append(_repair(defect.task_id, result, "fixer"))
                emit(
                    "fixer",
                    "repaired",
                    f"fixer proposes a repair of {defect.task_id}: {result.repaired}",
                    story=authored.story,
                    level=authored.level,
                )
                continue
            f = defect_flag(
                options,
                authored,
                "staircase",
                result.escalate or "unrepaired defect",
                "; ".join(defect.fingerprint),
            )
            flags[f.id] = f
            emit(
                "fixer",
                "escalated",
                f"fixer escalated {defect.task_id}",
                story=authored.story,
                level=authored.level,
            )
        n = state.get("rounds", {}).get("fix", 0)
        update = {"flags": flags, "rounds": {"fix": n + 1}, "repairs": repairs}
        return Command(update=update, goto="repair" if repairs else "review")

    def repair(state: PipelineState, runtime: Runtime[RunOptions]) -> Command:
        """The one repair path: a patched task is certified, then goes back through the validator, the ladder
        fairness review and calibration; the lesson is recorded; a repair that does not certify is a blocker."""
        options = runtime.context
        tasks, flags, lessons, sent = {}, {}, [], []
        for r in state.get("repairs", []):
            authored = state["tasks"][r.task_id]
            cert = certify(options, r.raw)
            if cert.certified:
                tasks[r.task_id] = authored.model_copy(update={"raw": r.raw, "cert": cert})
                sent.append(r.task_id)
                if r.lesson and r.skill:
                    lessons.append(
                        Lesson(
                            skill=r.skill,
                            story=authored.story,
                            level=authored.raw["difficulty"],
                            lesson=r.lesson,
                        )
                    )
                if r.flag and r.flag in state.get("flags", {}):
                    decision = {**(r.decision or {}), "result": r.repaired}
                    flags[r.flag] = state["flags"][r.flag].model_copy(
                        update={"status": "fixed", "decision": decision}
                    )
                emit(
                    "fixer",
                    "repaired",
                    f"repaired {r.task_id}: {r.repaired}",
                    story=authored.story,
                    level=authored.level,
                )
                continue
            f = defect_flag(
                options,
                authored,
                "repair",
                f"the repair ({r.repaired}) does not certify",
                "; ".join(cert.failing()),
            )
            flags[f.id] = f
        update = {
            "tasks": tasks,
            "flags": flags,
            "lessons": lessons,
            "repairs": [],
            "rounds": {"revise_from": 1},
        }
        if not sent:
            return Command(update=update, goto="review")
        return Command(
            update=update, goto=[Send("validate", {"task_id": t, "raw": tasks[t].raw}) for t in sent]
        )

    # ---------------------------------------------------------------- people and the commit
    def review(state: PipelineState, runtime: Runtime[RunOptions]) -> Command:
        """Wait for a person while any blocker is open; a rejected blocker ends the run uncommitted once every
        blocker of the run is decided (the others stay decidable); a "fix" decision takes the repair path."""
        options = runtime.context
        record = state["calibration"]
        flags = dict(state.get("flags", {}))
        if record.verdict == "inverted":
            f = make_flag(
                role="calibration",
                kind="staircase",
                persona=options.persona,
                check="staircase",
                severity="blocker",
                reason="the staircase is inverted after the fixer's rounds",
                evidence="; ".join(
                    f"{i.lower} {i.fail_lower:.0%} > {i.upper} {i.fail_upper:.0%}" for i in record.inversions
                ),
            )
            if f.id not in flags:
                flags[f.id] = f
        blocking = [f for f in flags.values() if f.blocking]
        if not blocking:
            rejected = [f.id for f in flags.values() if f.status == "rejected"]
            if rejected:
                result = RunResult(
                    status="rejected",
                    summary=f"{options.persona}: rejected in review "
                    f"({', '.join(rejected)}); nothing committed",
                )
                return Command(update={"flags": flags, "result": result}, goto=END)
            return Command(update={"flags": flags}, goto="finalize")
        emit("review", "waiting", f"{len(blocking)} item(s) need a person: taskforge review list")
        decisions = interrupt({"persona": options.persona, "items": [f.model_dump() for f in blocking]})
        changed, repairs = _decide(options, state, flags, decisions or {})
        flags.update(changed)
        if repairs:
            return Command(update={"flags": flags, "repairs": repairs}, goto="repair")
        return Command(update={"flags": flags}, goto="review")

    def _decide(
        options: RunOptions, state: PipelineState, flags: dict[str, Flag], decisions: dict[str, Any]
    ) -> tuple[dict[str, Flag], list[Repair]]:
        changed: dict[str, Flag] = {}
        repairs: list[Repair] = []
        for fid, decision in decisions.items():
            if fid not in flags:
                continue
            verdict = decision.get("verdict")
            stamped = {**decision, "at": decision.get("at") or now()}
            if verdict in ("approve", "reject"):
                changed[fid] = flags[fid].model_copy(
                    update={"status": "approved" if verdict == "approve" else "rejected", "decision": stamped}
                )
            elif verdict == "fix":
                flag = flags[fid]
                authored = state.get("tasks", {}).get(flag.task_id or "")
                if authored is None:
                    continue
                defect = Defect(
                    task_id=flag.task_id or "",
                    level=authored.raw["difficulty"],
                    fingerprint=[flag.reason, flag.evidence],
                    attempts=0,
                    repeats=[],
                )
                try:
                    result = drivers.fixer.repair(authored.raw, defect, [], env.world(options))
                except RoleUnavailable:
                    raise
                except RoleFailure:
                    continue
                if result.task is not None:
                    repairs.append(_repair(authored.task_id, result, "review", flag=fid, decision=stamped))
        return changed, repairs

    def finalize(state: PipelineState) -> dict[str, Any]:
        """Fix the run's time stamp in the checkpoint, so the outputs rendered from it are the same bytes
        however often the commit node runs."""
        return {"stamp": now()}

    def commit(state: PipelineState, runtime: Runtime[RunOptions]) -> dict[str, Any]:
        options = runtime.context
        result = commit_outputs(options, state, env.world(options), drivers.progress)
        emit("commit", result.status, result.summary)
        return {"result": result}

    def route_start(state: PipelineState) -> str:
        """A new run authors; a run seeded with a finished persona's tasks and a repair starts at the repair."""
        return "repair" if state.get("repairs") else "load"

    # ---------------------------------------------------------------- wiring
    graph = StateGraph(PipelineState, context_schema=RunOptions)
    graph.add_node("load", load, destinations=("draft",))
    graph.add_node(
        "draft", draft, retry_policy=ROLE_RETRY, destinations=("draft", "validate", "rehearse", "gather")
    )
    graph.add_node("gather", gather)
    graph.add_node("validate", validate, retry_policy=ROLE_RETRY)
    graph.add_node("rehearse", rehearse)
    graph.add_node("after_validation", after_validation)
    graph.add_node("revise", revise, retry_policy=ROLE_RETRY)
    graph.add_node("recertify", recertify)
    graph.add_node("fairness", fairness, retry_policy=ROLE_RETRY)
    graph.add_node("calibrate", calibrate_persona, retry_policy=ROLE_RETRY)
    graph.add_node("fix", fix, retry_policy=ROLE_RETRY, destinations=("repair", "review"))
    graph.add_node("repair", repair, destinations=("validate", "review"))
    graph.add_node("review", review, destinations=("review", "repair", "finalize", END))
    graph.add_node("finalize", finalize)
    graph.add_node("commit", commit)
    graph.add_conditional_edges(START, route_start, ["load", "repair"])
    graph.add_conditional_edges("gather", route_after_gather, ["after_validation", END])
    graph.add_edge("validate", "gather")
    graph.add_edge("rehearse", END)
    graph.add_conditional_edges("after_validation", route_after_validation, ["revise", "recertify"])
    graph.add_conditional_edges("revise", route_after_revise, ["validate", "after_validation", "recertify"])
    graph.add_edge("recertify", "fairness")
    graph.add_conditional_edges("fairness", route_after_fairness, ["revise", "calibrate"])
    graph.add_conditional_edges("calibrate", route_after_calibration, ["fix", "review"])
    graph.add_edge("finalize", "commit")
    graph.add_edge("commit", END)
    return graph.compile(checkpointer=checkpointer)


def _repair(
    task_id: str,
    result: FixResult,
    source: str,
    flag: str | None = None,
    decision: dict[str, Any] | None = None,
) -> Repair:
    if result.task is None:
        raise ValueError("a repair needs the patched task")
    return Repair(
        task_id=task_id,
        raw=result.task,
        repaired=result.repaired or "repaired",
        source=source,  # type: ignore[arg-type]
        flag=flag,
        decision=decision,
        lesson=result.lesson,
        skill=result.skill,
        patch=list(getattr(result, "patch", None) or []),
    )


def _agent(name: str) -> Any:
    if name.startswith("openai:"):
        from certify.evaluate import build_agent

        return build_agent(name)
    return make_agent(name)


def _evidence(trial: Trial) -> Trial:
    """A calibration trial as the run keeps it: compact, as its record file keeps it (each failed call keeps its
    error, which is what a reviewer and the fixer read), and a failing trial keeps its model transcript. The
    state is checkpointed at every later step; whole envelopes of every episode made each checkpoint megabytes."""
    small = compact(trial)
    return small if trial.passed else small.model_copy(update={"transcript": trial.transcript})


def manifest(options: RunOptions, world: World) -> dict[str, Any]:
    """The taskset.json a run creates when the destination has none."""
    out: dict[str, Any] = {
        "taskset_id": options.taskset,
        "description": "Persona stories authored by taskforge: 4 stories x 5 levels per persona "
        "(Execute, Find, Derive, Ground, Compose), closed-world.",
        "workspace_baseline": _baseline(options, world),
        "task_defaults": STANDARD_DEFAULTS,
    }
    world_ref = _world_ref(options)
    if world_ref:
        out["world"] = world_ref
    return out


def commit_outputs(
    options: RunOptions, state: PipelineState, world: World, progress: Callable[[str], None] = lambda m: None
) -> RunResult:
    """Render the finished run's files, write them and (unless --no-commit) commit them."""
    from .outputs import base_readers, publish, render_outputs

    read, listdir = base_readers(options.taskset_root, options.commit)
    outputs = render_outputs(
        options,
        state,
        world,
        taskset_defaults(options, world),
        manifest(options, world),
        read=read,
        listdir=listdir,
    )
    done = publish(
        outputs, root=options.taskset_root, persona=options.persona, commit=options.commit, progress=progress
    )
    return RunResult(status=done.status, commit=done.commit, summary=done.summary, paths=done.paths)  # type: ignore[arg-type]


def _world_ref(options: RunOptions) -> str | None:
    from simulator import DEFAULT_WORLD

    if Path(options.world).resolve() == DEFAULT_WORLD.resolve():
        return None
    return str(Path(options.world).resolve())


def node_names(graph: Any) -> list[str]:
    """The graph's nodes as built (skills/orchestrator.md is checked against them)."""
    return [n for n in graph.get_graph().nodes if not n.startswith("__")]


__all__ = [
    "STANDARD_DEFAULTS",
    "Drivers",
    "PipelineState",
    "RunOptions",
    "build_graph",
    "commit_outputs",
    "manifest",
    "node_names",
    "resolve_baseline",
    "taskset_defaults",
]
