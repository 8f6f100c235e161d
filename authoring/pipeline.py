"""The authoring pipeline as one LangGraph graph, built by a factory from the role drivers and a checkpointer.

load → author (each story climbs Execute → Compose, each level certified before the next, gate failures fed
back to the same author session for a bounded number of rounds) → validators on every certified level in
parallel (Send), blockers routed back to the story's author → all levels re-certified together → ladder
fairness → calibration of the persona → fixer on defect fingerprints (then re-certify and re-calibrate) →
review (anything still blocking interrupts the graph for a person) → commit.

State is plain JSON data so the checkpointer (SQLite by default) can persist it after every node: a killed run
resumes where it stopped, and nothing is written to the working tree before the commit node.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt
from pydantic import BaseModel, ConfigDict, Field

from certify.agents import make_agent
from certify.calibrate import CalibrationRecord, analyse, probe_dead_rungs
from certify.gates import certify_task
from certify.lock import (
    now,
)
from certify.task import LEVEL_NAMES, LEVELS, Task, TaskSet, TaskSetManifest, parse_task
from certify.trial import Trial, run_trial
from simulator import World

from .factcheck import resolve
from .flags import Flag, make_flag
from .roles.author import AuthorContext, AuthorDriver, AuthoringError
from .roles.fairness import FairnessDriver
from .roles.fixer import FixerDriver
from .roles.validator import ValidatorDriver
from .sources import load_sources

STANDARD_DEFAULTS: dict[str, Any] = {
    "category": "story",
    "eval": {
        "layout": {"within_grid": True, "no_overlaps": True, "grid_width": 40},
        "trace_checks": {"max_invalid_tool_calls": 2, "forbid_invented_widget_ids": True},
        "workspace_checks": {"preserve_other_dashboards": True},
    },
}


class RunOptions(BaseModel):
    """Everything a persona run depends on; part of the graph state, so plain data only."""

    model_config = ConfigDict(extra="forbid")

    persona: str
    taskset: str = "workspace_tasks"
    tasksets_dir: str
    sources_root: str
    skills_dir: str
    world: str
    baseline: str | None = None
    reference_agent: str = "heuristic"
    frontier_agent: str | None = None
    repeats: int = Field(3, ge=1)
    author_rounds: int = Field(3, ge=1)
    review_rounds: int = Field(2, ge=0)
    fix_rounds: int = Field(2, ge=0)
    commit: bool = True
    inputs_sha256: str = ""
    inputs: dict[str, Any] = Field(default_factory=dict)
    run_id: str = ""

    @property
    def taskset_root(self) -> Path:
        return Path(self.tasksets_dir) / self.taskset


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {**a, **b}


class PipelineState(TypedDict, total=False):
    options: dict[str, Any]
    stories: list[str]
    cursor: list[int]
    tasks: Annotated[dict[str, Any], _merge]
    certs: Annotated[dict[str, Any], _merge]
    history: Annotated[dict[str, Any], _merge]
    flags: Annotated[dict[str, Any], _merge]
    rounds: Annotated[dict[str, int], _merge]
    revise: list[str]
    calibration: dict[str, Any]
    calibration_trials: list[dict[str, Any]]
    lessons: Annotated[list[dict[str, Any]], operator.add]
    stamp: str
    result: dict[str, Any]


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

    def world(self, options: RunOptions) -> World:
        if options.world not in self._worlds:
            self._worlds[options.world] = World.load(options.world)
        return self._worlds[options.world]


def taskset_defaults(options: RunOptions) -> dict[str, Any]:
    """The defaults the run's tasks are certified under: the taskset's, or those of the manifest the run will
    create (so a certificate issued before the manifest exists still matches after)."""
    root = options.taskset_root
    if (root / "taskset.json").is_file():
        return TaskSet.load(root).defaults()
    created = manifest(options, World.load(options.world))
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
        raise ValueError(f"--baseline '{baseline}' is not a baseline of world {world.name} (known: "
                         f"{', '.join(sorted(world.baselines)) or 'none'}; '' for a bare workspace)")
    return baseline


def build_graph(drivers: Drivers, checkpointer: Any = None) -> Any:
    env = _Env()

    def opts(state: PipelineState) -> RunOptions:
        return RunOptions.model_validate(state["options"])

    def contexts(options: RunOptions) -> dict[str, AuthorContext]:
        """The stories' authoring contexts, resolved once per process (sources do not change during a run;
        a changed source gives a new run and thread)."""
        key = (options.sources_root, options.persona, options.world, options.baseline)
        if key not in env.contexts:
            env.contexts[key] = _contexts(options)
        return env.contexts[key]

    def _contexts(options: RunOptions) -> dict[str, AuthorContext]:
        world = env.world(options)
        persona, stories = load_sources(Path(options.sources_root), options.persona)
        backends = _backends(world)
        resolved = [resolve(world, s, backends) for s in stories]
        siblings = tuple(r.story.slug for r in resolved)
        defaults = taskset_defaults(options)
        return {r.story.slug: AuthorContext(world, persona, r, _baseline(options, world), backends,
                                            sorted(world.skills), siblings, defaults) for r in resolved}

    def parse(options: RunOptions, raw: dict[str, Any], defaults: dict[str, Any]) -> Task:
        return parse_task(raw, f"{options.taskset}/{options.persona}/{raw.get('id')}.json", defaults)

    def certify(options: RunOptions, raw: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
        task = parse(options, raw, defaults)
        cert = certify_task(env.world(options), task, f"{task.id}.json")
        return {"certified": cert.certified, "gates": {k: v.to_dict() for k, v in cert.gates.items()},
                "notes": {k: v for k, v in cert.notes.items() if k == "dead_checks"}}

    def failing(cert: dict[str, Any]) -> list[str]:
        return [f"gate {name}: {g['detail']}" for name, g in cert["gates"].items() if not g["ok"]]

    # ---------------------------------------------------------------- nodes
    def load(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        ctxs = contexts(options)
        drivers.progress(f"loaded persona {options.persona}: {len(ctxs)} stories, facts checked against "
                         f"{env.world(options).name}")
        flags = {}
        for slug, ctx in ctxs.items():
            for warning in ctx.story.warnings:
                f = make_flag(role="validator", kind="shortcut_risk", persona=options.persona, story=slug,
                              check="facts", severity="minor", reason=warning)
                flags[f.id] = f.model_dump()
        return {"stories": list(ctxs), "cursor": [0, 0], "flags": flags, "rounds": {}}

    def author(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        story_index, level = state["cursor"]
        slug = state["stories"][story_index]
        ctx = contexts(options)[slug]
        defaults = taskset_defaults(options)
        history = list(state.get("history", {}).get(slug, []))
        feedback: list[str] = []
        raw: dict[str, Any] = {}
        cert: dict[str, Any] = {}
        flags: dict[str, Any] = {}
        for _round in range(options.author_rounds):
            try:
                raw = drivers.author.draft(ctx, level, feedback, history).task
            except AuthoringError as exc:
                feedback = [f"authoring failed: {exc}"]
                continue
            try:
                cert = certify(options, raw, defaults)
            except Exception as exc:  # a draft that does not even parse is gate feedback, not a crash
                cert = {"certified": False, "gates": {"schema": {"ok": False, "detail": str(exc)}}, "notes": {}}
            if cert["certified"]:
                break
            feedback = failing(cert)
        task_id = f"{slug}_level{level}"
        if not cert.get("certified"):
            reason = "; ".join(feedback) or "the author produced no task"
            f = make_flag(role="gate", kind="gate_failure", persona=options.persona, story=slug, task_id=task_id,
                          level=level, check="gates", severity="blocker",
                          reason=f"level{level} did not certify in {options.author_rounds} rounds", evidence=reason)
            flags[f.id] = f.model_dump()
        drivers.progress(f"{slug} level{level} ({LEVEL_NAMES[LEVELS[level]]}): "
                         + ("certified" if cert.get("certified") else "NOT certified"))
        next_cursor = [story_index, level + 1] if level < 4 else [story_index + 1, 0]
        out: dict[str, Any] = {"cursor": next_cursor, "history": {slug: history}, "flags": flags}
        if raw:
            out["tasks"] = {task_id: raw}
            out["certs"] = {task_id: cert}
        return out

    def route_after_author(state: PipelineState) -> Any:
        if state["cursor"][0] < len(state["stories"]):
            return "author"
        return dispatch_validation(state, list(state.get("tasks", {})))

    def dispatch_validation(state: PipelineState, task_ids: list[str]) -> list[Send]:
        certified = [t for t in task_ids if state["certs"].get(t, {}).get("certified")]
        if not certified:
            return [Send("after_validation", state)]
        return [Send("validate", {"options": state["options"], "task_id": t, "task": state["tasks"][t]})
                for t in certified]

    def validate(payload: dict[str, Any]) -> dict[str, Any]:
        options = RunOptions.model_validate(payload["options"])
        task = parse(options, payload["task"], taskset_defaults(options))
        flags = drivers.validator.review(task, env.world(options), options.persona)
        return {"flags": {f.id: f.model_dump() for f in flags}}

    def open_blockers(state: PipelineState, roles: tuple[str, ...]) -> list[Flag]:
        return [Flag.model_validate(f) for f in state.get("flags", {}).values()
                if f["role"] in roles and f["severity"] == "blocker" and f["status"] == "open"]

    def after_validation(state: PipelineState) -> dict[str, Any]:
        blockers = open_blockers(state, ("validator",))
        n = state.get("rounds", {}).get("validator", 0)
        targets = sorted({f.task_id for f in blockers if f.task_id})
        if blockers:
            drivers.progress(f"validators: {len(blockers)} blocker flag(s) on {targets}")
        if targets and n < opts(state).review_rounds:
            return {"revise": targets, "rounds": {"validator": n + 1, "revise_from": 1}}
        drivers.progress("validators: done")
        return {"revise": [], "rounds": {"validator": n}}

    def route_after_validation(state: PipelineState) -> str:
        return "revise" if state.get("revise") else "recertify"

    def revise(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        ctxs = contexts(options)
        defaults = taskset_defaults(options)
        tasks, certs, flags, histories = {}, {}, {}, {}
        for task_id in state.get("revise", []):
            slug, level = task_id.rsplit("_level", 1)[0], int(task_id.rsplit("_level", 1)[1])
            raised = [Flag.model_validate(f) for f in state["flags"].values()
                      if f["task_id"] == task_id and f["status"] == "open" and f["severity"] == "blocker"]
            feedback = [f"{f.role} flag {f.check}: {f.reason} {f.evidence} {f.suggestion}".strip() for f in raised]
            history = list(state.get("history", {}).get(slug, histories.get(slug, [])))
            try:
                raw = drivers.author.draft(ctxs[slug], level, feedback, history).task
            except AuthoringError:
                continue
            cert = certify(options, raw, defaults)
            histories[slug] = history
            if raw != state["tasks"].get(task_id) and cert["certified"]:
                tasks[task_id], certs[task_id] = raw, cert
                for f in raised:
                    flags[f.id] = {**f.model_dump(), "status": "resolved"}
            drivers.progress(f"revised {task_id}: " + ("changed" if task_id in tasks else "no change"))
        return {"tasks": tasks, "certs": certs, "flags": flags, "history": histories}

    def route_after_revise(state: PipelineState) -> Any:
        if state.get("rounds", {}).get("revise_from") == 2:
            return "recertify"
        return dispatch_validation(state, state.get("revise", []))

    def recertify(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        defaults = taskset_defaults(options)
        certs, flags = {}, {}
        for task_id, raw in state.get("tasks", {}).items():
            cert = certify(options, raw, defaults)
            certs[task_id] = cert
            if not cert["certified"]:
                f = make_flag(role="gate", kind="gate_failure", persona=options.persona, story=raw["meta"]["story"]
                              if raw.get("meta") else None, task_id=task_id, level=LEVELS.index(raw["difficulty"]),
                              check="recertify", severity="blocker", reason="fails its gates when the set is "
                              "re-certified together", evidence="; ".join(failing(cert)))
                flags[f.id] = f.model_dump()
        ok = sum(1 for c in certs.values() if c["certified"])
        drivers.progress(f"re-certified the set together: {ok}/{len(certs)}")
        return {"certs": certs, "flags": flags}

    def fairness(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        defaults = taskset_defaults(options)
        parsed = {tid: parse(options, raw, defaults) for tid, raw in state.get("tasks", {}).items()}
        everything = list(parsed.values())
        flags: dict[str, Any] = {}
        for slug in state["stories"]:
            levels = [t for t in everything if t.meta and t.meta.story == slug]
            for f in drivers.fairness.review(slug, sorted(levels, key=lambda t: t.level), everything, options.persona):
                flags[f.id] = f.model_dump()
        merged = {**state.get("flags", {}), **flags}
        blockers = [Flag.model_validate(f) for f in merged.values()
                    if f["role"] == "fairness" and f["severity"] == "blocker" and f["status"] == "open"]
        n = state.get("rounds", {}).get("fairness", 0)
        targets = sorted({f.task_id for f in blockers if f.task_id})
        drivers.progress(f"ladder fairness: {len(blockers)} blocker flag(s)")
        if targets and n < options.review_rounds:
            return {"flags": flags, "revise": targets, "rounds": {"fairness": n + 1, "revise_from": 2}}
        return {"flags": flags, "revise": [], "rounds": {"fairness": n}}

    def route_after_fairness(state: PipelineState) -> str:
        return "revise" if state.get("revise") else "calibrate"

    def calibrate(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        world = env.world(options)
        defaults = taskset_defaults(options)
        tasks = [parse(options, raw, defaults) for raw in state["tasks"].values()]
        agent = make_agent(options.reference_agent) if not options.reference_agent.startswith("openai:") else \
            _llm_agent(options.reference_agent)

        async def run_all() -> list[Trial]:
            semaphore = asyncio.Semaphore(8)

            async def one(task: Task, repeat: int) -> Trial:
                async with semaphore:
                    return await run_trial(world, task, agent, repeat)

            return list(await asyncio.gather(*(one(t, r) for r in range(options.repeats) for t in tasks)))

        trials = asyncio.run(run_all())
        record = analyse(trials, persona=options.persona, taskset=options.taskset, agent=agent.name,
                         repeats=options.repeats)
        if options.frontier_agent and record.probes:
            frontier = _llm_agent(options.frontier_agent) if options.frontier_agent.startswith("openai:") else \
                make_agent(options.frontier_agent)
            asyncio.run(probe_dead_rungs(world, record, tasks, trials, frontier))
        flags: dict[str, Any] = {}

        def add(**kw: Any) -> None:
            f = make_flag(role="calibration", persona=options.persona, **kw)
            flags[f.id] = f.model_dump()

        for n in record.noise:
            add(kind="noise", task_id=n.task_id, level=LEVELS.index(n.level), check="staircase", severity="minor",
                reason=f"scattered failures at an inverted level: {n.detail}")
        for p in record.probes:
            add(kind="dead_rung", level=LEVELS.index(p.level), check="frontier_probe",
                severity="blocker" if p.status == "flagged" else "minor",
                reason=f"{p.level} was never passed by {record.agent}; frontier probe: {p.status}",
                evidence=f"{p.agent or 'no frontier agent'} on {p.task_id or '-'}: {p.failure_codes}")
        for s in record.shortcuts:
            add(kind="shortcut", task_id=s.task_id, level=LEVELS.index(s.level), check="staircase", severity="minor",
                reason=s.detail)
        rates = ", ".join(f"{s.level[-1]}:{(s.pass_rate or 0):.0%}" for s in record.levels)
        drivers.progress(f"calibration with {agent.name} x{options.repeats}: {rates} — "
                         + ("staircase holds" if record.holds else "INVERTED"))
        return {"calibration": record.model_dump(), "calibration_trials": [t.model_dump() for t in trials],
                "flags": flags}

    def route_after_calibration(state: PipelineState) -> str:
        record = CalibrationRecord.model_validate(state["calibration"])
        if not record.holds and record.defects and state.get("rounds", {}).get("fix", 0) < opts(state).fix_rounds:
            return "fix"
        return "review"

    def fix(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        world = env.world(options)
        defaults = taskset_defaults(options)
        record = CalibrationRecord.model_validate(state["calibration"])
        trials = [Trial.model_validate(t) for t in state.get("calibration_trials", [])]
        tasks, certs, flags, lessons = {}, {}, {}, []
        for defect in record.defects:
            raw = state["tasks"][defect.task_id]
            result = drivers.fixer.repair(raw, defect, trials, world)
            story = raw.get("meta", {}).get("story")
            if result.task is not None:
                cert = certify(options, result.task, defaults)
                if cert["certified"]:
                    tasks[defect.task_id], certs[defect.task_id] = result.task, cert
                    if result.lesson and result.skill:
                        lessons.append({"skill": result.skill, "story": story, "level": raw["difficulty"],
                                        "lesson": result.lesson})
                    drivers.progress(f"fixer repaired {defect.task_id}: {result.repaired}")
                    continue
                result.escalate = f"the repair ({result.repaired}) does not certify: {failing(cert)}"
            f = make_flag(role="fixer", kind="defect", persona=options.persona, story=story, task_id=defect.task_id,
                          level=LEVELS.index(defect.level), check="staircase", severity="blocker",
                          reason=result.escalate or "unrepaired defect", evidence="; ".join(defect.fingerprint))
            flags[f.id] = f.model_dump()
            drivers.progress(f"fixer escalated {defect.task_id}")
        n = state.get("rounds", {}).get("fix", 0)
        return {"tasks": tasks, "certs": certs, "flags": flags, "lessons": lessons, "rounds": {"fix": n + 1}}

    def review(state: PipelineState) -> Any:
        """Wait for a person while any blocker is open; a rejected blocker ends the run uncommitted once every
        blocker of the run is decided (the others stay decidable)."""
        options = opts(state)
        record = CalibrationRecord.model_validate(state["calibration"])
        flags = dict(state.get("flags", {}))
        if not record.holds:
            f = make_flag(role="calibration", kind="staircase", persona=options.persona, check="staircase",
                          severity="blocker", reason="the staircase is inverted after the fixer's rounds",
                          evidence="; ".join(f"{i.lower} {i.fail_lower:.0%} > {i.upper} {i.fail_upper:.0%}"
                                             for i in record.inversions))
            if f.id not in flags:
                flags[f.id] = f.model_dump()
        blocking = [f for f in flags.values() if f["severity"] == "blocker" and f["status"] == "open"]
        if not blocking:
            if any(f["status"] == "rejected" for f in flags.values()):
                rejected = [f["id"] for f in flags.values() if f["status"] == "rejected"]
                return Command(update={"flags": flags, "result": {
                    "status": "rejected", "summary": f"{options.persona}: rejected in review ({', '.join(rejected)});"
                    " nothing committed"}}, goto=END)
            return Command(update={"flags": flags}, goto="finalize")
        drivers.progress(f"{len(blocking)} item(s) need a person: taskforge review list")
        decisions = interrupt({"persona": options.persona, "items": blocking})
        updates, tasks, certs, lessons = _apply_decisions(options, state, flags, decisions or {})
        for fid, change in updates.items():
            flags[fid] = change
        return Command(update={"flags": flags, "tasks": tasks, "certs": certs, "lessons": lessons}, goto="review")

    def _apply_decisions(options: RunOptions, state: PipelineState, flags: dict[str, Any],
                         decisions: dict[str, Any]) -> tuple[dict, dict, dict, list]:
        updates: dict[str, Any] = {}
        tasks, certs, lessons = {}, {}, []
        defaults = taskset_defaults(options)
        for fid, decision in decisions.items():
            if fid not in flags:
                continue
            verdict = decision.get("verdict")
            stamped = {**decision, "at": decision.get("at") or now()}
            if verdict == "approve":
                updates[fid] = {**flags[fid], "status": "approved", "decision": stamped}
            elif verdict == "reject":
                updates[fid] = {**flags[fid], "status": "rejected", "decision": stamped}
            elif verdict == "fix":
                flag = Flag.model_validate(flags[fid])
                raw = state["tasks"].get(flag.task_id or "")
                fixed = None
                if raw is not None:
                    from certify.calibrate import Defect

                    defect = Defect(task_id=flag.task_id or "", level=raw["difficulty"],
                                    fingerprint=[flag.reason, flag.evidence], attempts=0, repeats=[])
                    result = drivers.fixer.repair(raw, defect, [], env.world(options))
                    if result.task is not None:
                        cert = certify(options, result.task, defaults)
                        if cert["certified"]:
                            fixed = result
                            tasks[flag.task_id], certs[flag.task_id] = result.task, cert
                            if result.lesson and result.skill:
                                lessons.append({"skill": result.skill, "story": flag.story, "level": raw["difficulty"],
                                                "lesson": result.lesson})
                if fixed:
                    updates[fid] = {**flags[fid], "status": "fixed",
                                    "decision": {**stamped, "result": fixed.repaired or "repaired"}}
        return updates, tasks, certs, lessons

    def finalize(state: PipelineState) -> dict[str, Any]:
        """Fix the run's time stamp in the checkpoint, so the outputs rendered from it are the same bytes
        however often the commit node runs."""
        return {"stamp": now()}

    def commit(state: PipelineState) -> dict[str, Any]:
        options = opts(state)
        result = commit_outputs(options, dict(state), env.world(options), drivers.progress)
        drivers.progress(result["summary"])
        return {"result": result}

    # ---------------------------------------------------------------- wiring
    graph = StateGraph(PipelineState)
    graph.add_node("load", load)
    graph.add_node("author", author)
    graph.add_node("validate", validate)
    graph.add_node("after_validation", after_validation)
    graph.add_node("revise", revise)
    graph.add_node("recertify", recertify)
    graph.add_node("fairness", fairness)
    graph.add_node("calibrate", calibrate)
    graph.add_node("fix", fix)
    graph.add_node("review", review)
    graph.add_node("finalize", finalize)
    graph.add_node("commit", commit)
    graph.add_edge(START, "load")
    graph.add_edge("load", "author")
    graph.add_conditional_edges("author", route_after_author, ["author", "validate", "after_validation"])
    graph.add_edge("validate", "after_validation")
    graph.add_conditional_edges("after_validation", route_after_validation, ["revise", "recertify"])
    graph.add_conditional_edges("revise", route_after_revise, ["validate", "after_validation", "recertify"])
    graph.add_edge("recertify", "fairness")
    graph.add_conditional_edges("fairness", route_after_fairness, ["revise", "calibrate"])
    graph.add_conditional_edges("calibrate", route_after_calibration, ["fix", "review"])
    graph.add_edge("fix", "calibrate")
    graph.add_edge("finalize", "commit")
    graph.add_edge("commit", END)
    return graph.compile(checkpointer=checkpointer)


def _llm_agent(name: str) -> Any:
    from certify.evaluate import build_agent

    return build_agent(name)


def manifest(options: RunOptions, world: World) -> dict[str, Any]:
    """The taskset.json a run creates when the destination has none."""
    out: dict[str, Any] = {"taskset_id": options.taskset,
                           "description": "Persona stories authored by taskforge: 4 stories x 5 levels per persona "
                                          "(Execute, Find, Derive, Ground, Compose), closed-world.",
                           "workspace_baseline": _baseline(options, world), "task_defaults": STANDARD_DEFAULTS}
    world_ref = _world_ref(options)
    if world_ref:
        out["world"] = world_ref
    return out


def commit_outputs(options: RunOptions, state: dict[str, Any], world: World,
                   progress: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Render the finished run's files, write them and (unless --no-commit) commit them."""
    from .outputs import base_readers, publish, render_outputs

    read, listdir = base_readers(options.taskset_root, options.commit)
    outputs = render_outputs(options, state, world, taskset_defaults(options), manifest(options, world),
                             read=read, listdir=listdir)
    done = publish(outputs, root=options.taskset_root, persona=options.persona, commit=options.commit,
                   progress=progress)
    return {"status": done.status, "commit": done.commit, "summary": done.summary, "paths": done.paths}


def _world_ref(options: RunOptions) -> str | None:
    from simulator import DEFAULT_WORLD

    if Path(options.world).resolve() == DEFAULT_WORLD.resolve():
        return None
    return str(Path(options.world).resolve())
