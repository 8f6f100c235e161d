"""How a role says it could not do its job, so the run can turn it into a review item instead of a crash.

A role driver (rule or LLM) raises `RoleFailure` when it gives no usable reply within its budget (a model that
never submits, replies that never validate, an exhausted call or token budget). The graph records it as a
blocker flag on the story or level, with the last reply as evidence, and goes on with the other stories. An
unreachable endpoint or a refused key is not a role failure: it is a configuration error found before any work.
"""

from __future__ import annotations


class RoleFailure(Exception):
    """A role gave no usable reply; `evidence` is the last reply (or what was wrong with it)."""

    def __init__(self, role: str, reason: str, evidence: str = "") -> None:
        self.role = role
        self.reason = reason
        self.evidence = evidence
        super().__init__(f"{role}: {reason}")


class RoleUnavailable(RoleFailure):
    """The role's model endpoint kept failing (rate limits, server errors, timeouts) after the client's retries:
    no fault of the role's replies, so a retry later may succeed."""


class EndpointError(Exception):
    """The model endpoint cannot be used at all (unreachable, refused key, unknown model): exit 2 before work."""
