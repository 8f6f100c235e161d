"""How a node calls a role: a role that gives no usable reply is an answer the run goes on with (it becomes a
blocker on its story or task), an endpoint that stopped answering is not (the node is retried, then the run
stops and resumes at that step when the same command is run again)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

from langgraph.types import RetryPolicy

from ..failures import RoleFailure, RoleUnavailable
from ..flags import Flag, Role, make_flag
from ..options import RunOptions
from ..taskset import split_task_id

P = ParamSpec("P")
T = TypeVar("T")


def _transient(exc: BaseException) -> bool:
    """Faults worth re-running a role step for, after the SDK's own retries gave up: an endpoint that stopped
    answering is infrastructure, not the task's fault, so it is retried here and, if it persists, stops the run
    (which resumes at this step when run again) instead of becoming a review item. The SDK is not imported for
    this: an SDK error exists only once a model driver imported it, and importing it was a sixth of the CPU of
    a `check --draft`, whose rule drivers never call a model."""
    if isinstance(exc, RoleUnavailable):
        return True
    openai = sys.modules.get("openai")
    return openai is not None and isinstance(
        exc,
        (
            openai.APIConnectionError,
            openai.APITimeoutError,
            openai.RateLimitError,
            openai.InternalServerError,
        ),
    )


ROLE_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, retry_on=_transient)


def attempt(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | RoleFailure:
    """The role's answer, or its failure to give one; an unavailable endpoint is raised (to the retry policy)."""
    try:
        return call(*args, **kwargs)
    except RoleUnavailable:
        raise
    except RoleFailure as failure:
        return failure


def failure_flag(options: RunOptions, failure: RoleFailure, story: str, task_id: str | None = None) -> Flag:
    """The blocker a role's failure becomes on its story (or one of its tasks), with its last reply as
    evidence."""
    return make_flag(
        role=cast(
            Role,
            "gate"
            if failure.role == "author"
            else failure.role
            if failure.role in ("validator", "fairness", "fixer", "calibration")
            else "gate",
        ),
        kind="role_failure",
        persona=options.persona,
        story=story,
        task_id=task_id,
        level=split_task_id(task_id)[1] if task_id else None,
        check=f"{failure.role}_reply",
        severity="blocker",
        reason=f"the {failure.role} gave no usable reply: {failure.reason}",
        evidence=failure.evidence[:4000],
    )
