"""The ladder review: one fairness reviewer per story reads its five levels side by side, in parallel, while
the calibration these levels will get is worked out ahead when it needs no model."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from langgraph.runtime import Runtime

from certify import LEVELS, Task, png

from ...failures import RoleFailure
from ...flags import Flag, open_blockers
from ..calls import attempt, failure_flag
from ..context import RunContext
from ..state import PipelineState, Rounds
from .calibration import calibration


def fairness(state: PipelineState, runtime: Runtime[RunContext]) -> PipelineState:
    """Fairness blockers go to `revise` while their rounds last (the set is then re-certified and reviewed
    again); otherwise on to calibration."""
    run = runtime.context
    everything = [run.parse(t.raw) for t in state.get("tasks", {}).values()]
    flags: dict[str, Flag] = {}
    # Stories whose author failed: their ladder is incomplete because of that failure, which is already the
    # item for it; a fairness finding "the story has levels [], not 0-4" would only echo it (issue 24).
    failed = {
        f.story
        for f in state.get("flags", {}).values()
        if f.kind == "role_failure" and f.status == "open" and f.story
    }

    def one(slug: str) -> list[Flag]:
        levels = sorted((t for t in everything if t.meta and t.meta.story == slug), key=lambda t: t.level)
        if slug in failed and len(levels) < len(LEVELS):
            return []
        reviewed = attempt(run.drivers.fairness.review, slug, levels, everything, run.options.persona)
        return [failure_flag(run.options, reviewed, slug)] if isinstance(reviewed, RoleFailure) else reviewed

    with ThreadPoolExecutor(max_workers=len(state["stories"]) + 1) as pool:  # one reviewer per story
        reviews = [pool.submit(one, slug) for slug in state["stories"]]
        ahead = pool.submit(draw_ahead, run, everything)  # after the reviewers: they wait on a model
        for review in reviews:
            flags.update({f.id: f for f in review.result()})
        ahead.result()
    blockers = open_blockers({**state.get("flags", {}), **flags}.values(), "fairness")
    rounds = state.get("rounds", Rounds())
    targets = sorted({f.task_id for f in blockers if f.task_id})
    run.emit("fairness", "reviewed", f"ladder fairness: {len(blockers)} blocker flag(s)")
    if targets and rounds.fairness < run.options.review_rounds:
        spent = rounds.model_copy(update={"fairness": rounds.fairness + 1, "after_revise": "recertify"})
        return {"flags": flags, "revise": targets, "rounds": spent}
    return {"flags": flags, "revise": []}


def draw_ahead(run: RunContext, tasks: list[Task]) -> None:
    """While the fairness reviewers think: the calibration these tasks will get, when it needs no model
    (a deterministic reference, rehearsed already, and no frontier probe), and its staircase picture, the
    dearest part of writing the run's files. Both are pure, so `calibrate` and `commit` find them done;
    if fairness sends a level back, the picture is simply never used. A run that writes nothing (a draft) gets
    the calibration only: drawing was a tenth of `check --draft`'s CPU."""
    if run.options.frontier_agent or not run.rehearsable():
        return
    record, _ = calibration(run, tasks)
    if run.writes:
        png(record)
