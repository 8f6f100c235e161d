"""The author's nodes: `load` (the persona's stories, fanned out), `draft` (one round of one story's level) and
`revise` (levels a reviewer sent back, with the flags as feedback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from certify import LEVEL_NAMES, LEVELS

from ...checks import first_drafts, persona_warnings, place_warnings, voice_warnings
from ...failures import RoleFailure
from ...flags import make_flag
from ...roles.author import AuthoringError
from ...storyfix import gate_cause
from ...taskset import split_task_id, task_id
from ..calls import attempt, failure_flag
from ..context import RunContext
from ..state import AuthoredTask, Certification, Cursor, PipelineState, Rehearsal, Rounds, Validation


def load(state: PipelineState, runtime: Runtime[RunContext]) -> Command[Literal["draft"]]:
    """The persona and its stories, checked against the world (a facts error stops the run); one `draft` per
    story. The stories' fact warnings become minor flags."""
    run = runtime.context
    options = run.options
    ctxs = run.contexts()
    run.emit(
        "load",
        "loaded",
        f"loaded persona {options.persona}: {len(ctxs)} stories, facts checked against {run.world.name}",
    )
    resolved = [c.story for c in ctxs.values()]
    voiced = []
    if ctxs:
        # the same first drafts check reads, so author says what check says (voice and catalog places)
        persona = next(iter(ctxs.values())).persona
        drafts = first_drafts(run.world, persona, resolved)
        voiced = voice_warnings(run.world, persona, resolved, drafts)
        voiced += place_warnings(run.world, resolved, drafts, list(run.world.default_backends))
    for warning in [*persona_warnings(Path(options.sources_root), options.persona, resolved), *voiced]:
        run.drivers.progress(f"warning: {warning}")
    flags = {}
    for slug, ctx in ctxs.items():
        for story_warning in ctx.story.warnings:
            f = make_flag(
                role="validator",
                kind="shortcut_risk",
                persona=options.persona,
                story=slug,
                check="facts",
                severity="minor",
                reason=story_warning,
            )
            flags[f.id] = f
    return Command(
        update={"stories": list(ctxs), "flags": flags, "rounds": Rounds(), "done": {}},
        goto=[Send("draft", Cursor(story=slug)) for slug in ctxs],
    )


def draft(
    cursor: Cursor, runtime: Runtime[RunContext]
) -> Command[Literal["draft", "validate", "rehearse", "gather"]]:
    """One author round of one story's level; the next round or level is the next step. A certified level goes
    to its validator (and the reference's rehearsal) at once, next to the story's next level."""
    run = runtime.context
    options = run.options
    slug, level = cursor.story, cursor.level
    tid = task_id(slug, level)
    history = list(cursor.history)
    name = LEVEL_NAMES[LEVELS[level]]
    run.emit(
        "author",
        "drafting",
        f"{slug} level{level} ({name}): round {cursor.round + 1}",
        story=slug,
        level=level,
        round=cursor.round + 1,
    )
    update: PipelineState = {}
    try:
        drafted = attempt(run.drivers.author.draft, run.contexts()[slug], level, cursor.feedback, history)
    except AuthoringError as exc:
        raw, cert = None, Certification(certified=False)
        feedback = [f"authoring failed: {exc}"]
    else:
        if isinstance(drafted, RoleFailure):
            f = failure_flag(options, drafted, slug, tid)
            run.emit(
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
        raw = drafted.task
        cert = run.certify(raw)
        feedback = cert.failing()
    update["history"] = {slug: history}
    if raw is not None:
        update["tasks"] = {
            tid: AuthoredTask(raw=raw, cert=cert, story=slug, level=level, rounds=cursor.round + 1)
        }
    if not cert.certified and cursor.round + 1 < options.author_rounds:
        run.emit(
            "gates",
            "retry",
            f"{slug} level{level} ({name}): gates failed, another round: " + "; ".join(feedback)[:300],
            story=slug,
            level=level,
            round=cursor.round + 1,
        )
        retry = cursor.model_copy(
            update={"round": cursor.round + 1, "feedback": feedback, "history": history}
        )
        return Command(update=update, goto=Send("draft", retry))
    if not cert.certified:
        f = make_flag(
            role="gate",
            kind="gate_failure",
            persona=options.persona,
            story=slug,
            task_id=tid,
            level=level,
            check="gates",
            severity="blocker",
            # the cause, in the writer's terms, not only the count: the last round's gates and their finding
            reason=f"level{level} ({name}) did not certify in {options.author_rounds} rounds: "
            + (
                gate_cause(level, {n: g.detail for n, g in cert.gates.items() if not g.ok})
                if cert.gates
                else "; ".join(feedback) or "the author produced no task"
            ),
            evidence="; ".join(feedback) or "the author produced no task",
        )
        update["flags"] = {f.id: f}
    run.emit(
        "gates",
        "certified" if cert.certified else "failed",
        f"{slug} level{level} ({name}): " + ("certified" if cert.certified else "NOT certified"),
        story=slug,
        level=level,
    )
    review = (
        [Send("validate", Validation(task_id=tid, raw=raw)), Send("rehearse", Rehearsal(raw=raw))]
        if cert.certified and raw is not None
        else []
    )
    if level + 1 < len(LEVELS):
        nxt: Send | Literal["gather"] = Send("draft", Cursor(story=slug, level=level + 1, history=history))
    else:
        nxt, update = "gather", {**update, "done": {slug: "authored"}}
    return Command(update=update, goto=[nxt, *review])  # the next draft first: it is on the critical path


def revise(state: PipelineState, runtime: Runtime[RunContext]) -> PipelineState:
    """Blockers go back to the story's author session with the flags as feedback; a changed draft that
    certifies resolves them."""
    run = runtime.context
    ctxs = run.contexts()
    tasks, flags = {}, {}
    histories: dict[str, list[dict[str, Any]]] = {}
    for tid in state.get("revise", []):
        slug, level = split_task_id(tid)
        raised = [f for f in state["flags"].values() if f.task_id == tid and f.blocking]
        feedback = [
            f"{f.role} flag {f.check}: {f.reason} {f.evidence} {f.suggestion}".strip() for f in raised
        ]
        history = list(histories.get(slug, state.get("history", {}).get(slug, [])))
        run.emit("author", "revising", f"revising {tid}: {len(raised)} flag(s)", story=slug, level=level)
        try:
            drafted = attempt(run.drivers.author.draft, ctxs[slug], level, feedback, history)
        except AuthoringError:
            continue
        if isinstance(drafted, RoleFailure):
            f = failure_flag(run.options, drafted, slug, tid)
            flags[f.id] = f
            continue
        raw = drafted.task
        histories[slug] = history
        cert = run.certify(raw)
        changed = raw != state["tasks"][tid].raw and cert.certified
        if changed:
            tasks[tid] = AuthoredTask(raw=raw, cert=cert, story=slug, level=level)
            for f in raised:
                flags[f.id] = f.model_copy(update={"status": "resolved"})
        run.emit(
            "author",
            "revised",
            f"revised {tid}: " + ("changed" if changed else "no change"),
            story=slug,
            level=level,
        )
    return {"tasks": tasks, "flags": flags, "history": histories}
