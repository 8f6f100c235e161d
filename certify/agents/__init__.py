"""Agents under test and reference agents, one interface, selected by name.

The registry (`AGENTS`, `FAMILIES`) is in `base`, and each agent module registers its agents there when it is
imported; `make_agent` and `family` import them all first. They live here, not in `base`, so that no agent
module imports the module that picks among them (an import cycle).
"""

from .base import (
    AGENTS,
    FAMILIES,
    Action,
    Agent,
    AgentRefused,
    AgentSession,
    AgentUnavailable,
    TaskView,
    Usage,
    register_agent,
)

__all__ = [
    "AGENTS",
    "FAMILIES",
    "Action",
    "Agent",
    "AgentRefused",
    "AgentSession",
    "AgentUnavailable",
    "TaskView",
    "Usage",
    "family",
    "make_agent",
    "register_agent",
]


def _register_all() -> None:
    from . import heuristic, ladder, llm, oracle  # noqa: F401  (registration)


def make_agent(name: str) -> Agent:
    """An agent by name: `oracle`, `noop`, `heuristic`, `ladder-0` … `ladder-4`, `openai:<model>`."""
    _register_all()
    prefix = name.split(":", 1)[0]
    factory = AGENTS.get(prefix)
    if factory is None:
        hint = f"; '{name}' is a family, use it where a population is expected" if name in FAMILIES else ""
        raise ValueError(
            f"unknown agent '{name}'; known: {', '.join(sorted(AGENTS))} (openai:<model> for a model){hint}"
        )
    return factory(name)


def family(name: str) -> tuple[str, ...] | None:
    """The members of a family name (`ladder`), or None when `name` is a single agent."""
    _register_all()
    return FAMILIES.get(name)
