"""Agents under test and reference agents, one interface, selected by name.

The registry (`AGENTS`, `FAMILIES`) is in `base`, and each agent module registers its agents there when it is
imported; `resolve_agent` and `family` import them all first. They live here, not in `base`, so that no agent
module imports the module that picks among them (an import cycle).
"""

from typing import Any

from .base import (
    AGENTS,
    CONFIGURABLE,
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
    "configurable",
    "family",
    "register_agent",
    "resolve_agent",
    "resolve_agents",
]


def _register_all() -> None:
    from . import heuristic, ladder, llm, oracle  # noqa: F401  (registration)


def resolve_agent(name: str, llm: dict[str, Any] | None = None) -> Agent:
    """The one way to get an agent by name: `oracle`, `noop`, `heuristic`, `ladder-0` … `ladder-4`,
    `openai:<model>`. `llm` holds LLMConfig fields (mode, parse, base_url, ...) for a model agent and is refused
    for any other agent rather than ignored. Whether the agent is deterministic or privileged is then read from
    the agent itself."""
    _register_all()
    prefix = name.split(":", 1)[0]
    if llm and not configurable(name):
        raise ValueError(f"{', '.join(sorted(llm))} only apply to openai:<model> agents, not to '{name}'")
    factory = AGENTS.get(prefix)
    if factory is None:
        hint = f"; '{name}' is a family, use it where a population is expected" if name in FAMILIES else ""
        raise ValueError(
            f"unknown agent '{name}'; known: {', '.join(sorted(AGENTS))} (openai:<model> for a model){hint}"
        )
    return factory(name, **llm) if llm else factory(name)


def configurable(name: str) -> bool:
    """Whether the agent a name stands for takes model configuration (its factory was registered so)."""
    _register_all()
    return name.split(":", 1)[0] in CONFIGURABLE


def resolve_agents(name: str, llm: dict[str, Any] | None = None) -> list[Agent]:
    """The agents a reference name stands for: the members of a family (`ladder`), else the one agent;
    `llm` configures an openai:<model> reference (the commands' model options)."""
    members = family(name)
    return [resolve_agent(m) for m in members] if members else [resolve_agent(name, llm)]


def family(name: str) -> tuple[str, ...] | None:
    """The members of a family name (`ladder`), or None when `name` is a single agent."""
    _register_all()
    return FAMILIES.get(name)
