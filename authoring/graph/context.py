"""The authoring graph's context: what every node is given besides the state, and is never checkpointed.

A run's context is its options (also kept in the state, so a resumed run gets the ones it started with), the
four role drivers with the progress callback, and the environment: per-process caches of what the state only
names (the world, the stories' authoring contexts, the defaults, the gates' verdicts on a draft, the reference's
agents and the trials it rehearsed). Nodes read it as `runtime.context` (LangGraph's `Runtime`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, Unpack

from langgraph.config import get_stream_writer

from certify import (
    Agent,
    Task,
    TrialMemo,
    all_deterministic,
    certify_task,
    configurable,
    parse_task,
    resolve_agent,
    resolve_agents,
    task_content_hash,
)
from simulator import World

from ..factcheck import resolve
from ..judged import draft_audit
from ..options import RunOptions
from ..roles.author import AuthorContext, AuthorDriver, find_order, own_deadlines, persona_finds
from ..roles.fairness import FairnessDriver
from ..roles.fixer import FixerDriver
from ..roles.validator import ValidatorDriver
from ..sources import load_sources
from ..taskset import default_baseline, taskset_defaults
from .state import Certification, GateOutcome, ProgressEvent


@dataclass
class Drivers:
    """The four roles a run calls, rule or LLM, and where its progress lines go."""

    author: AuthorDriver
    validator: ValidatorDriver
    fairness: FairnessDriver
    fixer: FixerDriver
    progress: Callable[[str], None] = field(default=lambda message: None)


class Env:
    """Per-process caches of what the state only names (the world, the resolved stories, ...)."""

    def __init__(self) -> None:
        self._worlds: dict[str, World] = {}
        self._contexts: dict[tuple[Any, ...], dict[str, AuthorContext]] = {}
        self._certs: dict[tuple[str, str, str], Certification] = {}
        self._defaults: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.trials = TrialMemo()
        self._references: dict[str, list[Agent]] = {}
        self.rehearsing = threading.Lock()

    def world(self, options: RunOptions) -> World:
        if options.world not in self._worlds:
            self._worlds[options.world] = World.load(options.world)
        return self._worlds[options.world]

    def reference(self, name: str, llm: dict[str, Any] | None = None) -> list[Agent]:
        """The reference's agents, built once (building one reads its skills and indexes); `llm` configures an
        openai:<model> reference (the author command's model options)."""
        if name not in self._references:
            self._references[name] = resolve_agents(name, llm if configurable(name) else None)
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

    def contexts(self, options: RunOptions) -> dict[str, AuthorContext]:
        """The stories' authoring contexts, resolved once per process (sources do not change during a run;
        a changed source gives a new run and thread)."""
        key = (options.sources_root, options.persona, options.world, options.baseline)
        if key not in self._contexts:
            world = self.world(options)
            persona, stories = load_sources(Path(options.sources_root), options.persona)
            backends = list(world.default_backends)
            resolved = [resolve(world, s, backends) for s in stories]
            siblings = tuple(r.story.slug for r in resolved)
            defaults = self.defaults(options)
            self._contexts[key] = {
                r.story.slug: AuthorContext(
                    world,
                    persona,
                    r,
                    default_baseline(options, world),
                    backends,
                    sorted(world.skills),
                    siblings,
                    defaults,
                    own_deadlines(resolved),
                    persona_finds(resolved),
                    find_order(options.sources_root, options.taskset_root),
                )
                for r in resolved
            }
        return self._contexts[key]

    def certify(self, options: RunOptions, raw: dict[str, Any]) -> Certification:
        """The gates on one draft. A task's certification depends on its own content, the world and the
        defaults only, so within a process the same draft is gated once (re-gating the set together after a
        change costs nothing for the levels that did not change)."""
        key = (options.world, task_content_hash(raw), task_content_hash(self.defaults(options)))
        if key in self._certs:
            return self._certs[key]
        try:
            task = self.parse(options, raw)
        except Exception as exc:  # a draft that does not even parse is gate feedback, not a crash
            return Certification(certified=False, gates={"schema": GateOutcome(ok=False, detail=str(exc))})
        world = self.world(options)
        cert = certify_task(
            world, task, f"{task.id}.json", judge_audit=draft_audit(world, task, f"{task.id}.json")
        )
        self._certs[key] = Certification(
            certified=cert.certified,
            gates={k: GateOutcome(ok=v.ok, detail=v.detail) for k, v in cert.gates.items()},
            notes={k: v for k, v in cert.notes.items() if k == "dead_checks"},
        )
        return self._certs[key]

    def parse(self, options: RunOptions, raw: dict[str, Any]) -> Task:
        return parse_task(
            raw, f"{options.taskset}/{options.persona}/{raw.get('id')}.json", self.defaults(options)
        )


class Where(TypedDict, total=False):
    """Which story's level, and which round, a progress event is about (none: the run as a whole)."""

    story: str
    level: int
    round: int


@dataclass
class RunContext:
    """The context of one invocation of the graph (LangGraph's `context_schema`)."""

    options: RunOptions
    drivers: Drivers
    env: Env = field(default_factory=Env)
    # whether this invocation goes on to write the run's files: `check --draft` stops before `finalize`, so what
    # only a commit uses (the staircase picture, drawn ahead while the reviewers think) is not drawn for it
    writes: bool = True

    @property
    def world(self) -> World:
        return self.env.world(self.options)

    def contexts(self) -> dict[str, AuthorContext]:
        return self.env.contexts(self.options)

    def parse(self, raw: dict[str, Any]) -> Task:
        return self.env.parse(self.options, raw)

    def certify(self, raw: dict[str, Any]) -> Certification:
        return self.env.certify(self.options, raw)

    def reference(self) -> list[Agent]:
        return self.env.reference(self.options.reference_agent, self.options.agent_llm)

    def frontier(self) -> Agent | None:
        """The agent that probes a level the reference never passed, when the run names one."""
        name = self.options.frontier_agent
        if not name:
            return None
        return resolve_agent(name, self.options.agent_llm if configurable(name) else None)

    def rehearsable(self) -> bool:
        """Whether the reference's trials cannot change before calibration (its agents are deterministic), so
        they may run ahead of it. A model reference never is: the agents say so themselves."""
        return all_deterministic(self.reference())

    def emit(self, role: str, status: str, message: str, **where: Unpack[Where]) -> None:
        """One progress event: streamed to a live display when the caller streams, and as a line."""
        event = ProgressEvent(role=role, status=status, message=message, **where)
        with contextlib.suppress(RuntimeError):  # outside a run (a node called directly in a test)
            get_stream_writer()(event.model_dump())
        self.drivers.progress(message)
