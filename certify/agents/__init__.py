"""Agents under test and reference agents, one interface, selected by name."""

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
    family,
    make_agent,
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
