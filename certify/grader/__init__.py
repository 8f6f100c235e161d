"""The grader: reads the final workspace and the trace, returns every check with its issue code and evidence,
the strict verdict (all hold) and the share of checks passed. Checks are a registry keyed by issue code."""

from . import (  # noqa: F401  (registration)
    answer_checks,
    definition_checks,
    negative_checks,
    preservation_checks,
    state_checks,
    trace_checks,
)
from .core import (
    CHECKS,
    CheckFn,
    CheckResult,
    GradeContext,
    GradeResult,
    applies,
    check,
    check_when,
    grade,
    grade_context,
    passes,
)

__all__ = [
    "CHECKS",
    "CheckFn",
    "CheckResult",
    "GradeContext",
    "GradeResult",
    "applies",
    "check",
    "check_when",
    "grade",
    "grade_context",
    "passes",
]
