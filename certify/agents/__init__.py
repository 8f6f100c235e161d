"""Agents under test and reference agents, one interface, selected by name."""

from .base import (
    AGENTS,
    Action,
    Agent,
    AgentSession,
    AgentUnavailable,
    TaskView,
    Usage,
    make_agent,
    register_agent,
)

__all__ = ["AGENTS", "Action", "Agent", "AgentSession", "AgentUnavailable", "TaskView", "Usage", "make_agent",
           "register_agent"]
