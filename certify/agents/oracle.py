"""The reference agents: `oracle` replays a task's reference (optional steps included, then the reference
answer), `noop` does nothing. Both are ordinary agents behind the same interface as real ones."""

from __future__ import annotations

from typing import Any

from ..task import Task
from .base import Action, AgentSession, TaskView, Usage, register_agent


class _ListSession:
    """A session that plays a fixed list of actions."""

    def __init__(self, actions: list[Action]) -> None:
        self._actions = list(actions)
        self.usage = Usage()

    async def next_action(self, observation: dict[str, Any] | None) -> Action | None:
        return self._actions.pop(0) if self._actions else None

    def transcript(self) -> list[dict[str, Any]]:
        return []


class OracleAgent:
    name = "oracle"
    privileged = True
    deterministic = True

    def session(self, view: TaskView, task: Task | None = None) -> AgentSession:
        if task is None:
            raise ValueError("the oracle needs the task's reference")
        actions = [Action(s.tool, dict(s.args)) for s in task.eval.reference_steps()]
        if task.eval.reference_answer is not None:
            actions.append(Action("final_answer", {"text": task.eval.reference_answer}))
        return _ListSession(actions)


class NoopAgent:
    name = "noop"
    privileged = False
    deterministic = True

    def session(self, view: TaskView, task: Task | None = None) -> AgentSession:
        return _ListSession([])


@register_agent("oracle")
def _oracle(name: str) -> OracleAgent:
    return OracleAgent()


@register_agent("noop")
def _noop(name: str) -> NoopAgent:
    return NoopAgent()
