"""The end of a run: `finalize` fixes its time stamp, `commit` writes and commits its files."""

from __future__ import annotations

from langgraph.runtime import Runtime

from certify import now

from ...outputs import commit_outputs
from ..context import RunContext
from ..state import PipelineState, RunResult


def finalize(state: PipelineState) -> PipelineState:
    """Fix the run's time stamp in the checkpoint, so the outputs rendered from it are the same bytes
    however often the commit node runs."""
    return {"stamp": now()}


def commit(state: PipelineState, runtime: Runtime[RunContext]) -> PipelineState:
    """Render the run's files, check the paths they touch, write them and commit exactly those."""
    run = runtime.context
    done = commit_outputs(run.options, state, run.world, run.drivers.progress)
    result = RunResult(status=done.status, commit=done.commit, summary=done.summary, paths=done.paths)
    run.emit("commit", result.status, result.summary)
    return {"result": result}
