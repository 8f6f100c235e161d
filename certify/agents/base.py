"""What acts in an episode: one interface for every agent, selected by name.

An agent opens a session per episode and is asked for one action at a time, given the envelope its previous
action produced. Agents under test see only a `TaskView`: the prompt, the tool schemas and the episode's rules
(its turn and invalid-call budgets and standing checks, as certify.episode.episode_rules states them); never the
eval block's expectations, never a hidden value, never the initial state. Reference agents (the oracle) are
`privileged` and also receive the task itself.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from simulator import tool_schemas

from ..episode import episode_rules
from ..task import Task

FINAL_ANSWER_SCHEMA: dict[str, Any] = {
    "name": "final_answer",
    "description": "Submit your final answer and end the episode. Use it once the work is done.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
}


_VIEWS: dict[int, tuple[weakref.ref[Task], TaskView]] = {}
_VIEWS_SIZE = 4096


@dataclass(frozen=True)
class TaskView:
    """Everything an agent under test is allowed to know about a task."""

    task_id: str
    prompt: str
    tools: list[dict[str, Any]]
    rules: tuple[str, ...] = ()

    @classmethod
    def of(cls, task: Task) -> TaskView:
        # A pure function of the task, asked once per episode (every shortcut agent, rung and variant of a
        # certification): remembered by the task object (tasks are never edited in place). Each view gets its
        # own list of the (shared, never mutated) schemas.
        held = _VIEWS.get(id(task))
        if held is None or held[0]() is not task:
            allowed = task.setup.allowed_tools
            view = cls(
                task.id,
                task.prompt,
                [*tool_schemas(list(allowed) if allowed else None), FINAL_ANSWER_SCHEMA],
                tuple(episode_rules(task)),
            )
            if len(_VIEWS) >= _VIEWS_SIZE:
                _VIEWS.clear()
            held = _VIEWS[id(task)] = (weakref.ref(task), view)
        view = held[1]
        return cls(view.task_id, view.prompt, list(view.tools), view.rules)

    @property
    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tools]


@dataclass
class Action:
    """One move. `parse_error` set means the agent produced something that is not an action at all: it is
    recorded as an invalid call, never sent to the workspace."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    parse_error: str | None = None
    raw: str | None = None
    lenient: bool = False


@dataclass
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    # the part of tokens_in the server served from its prefix cache, where it says so
    tokens_cached: int = 0
    requests: int = 0
    retries: int = 0
    cost: float = 0.0
    strict_parses: int = 0
    lenient_parses: int = 0
    failed_parses: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class AgentUnavailable(Exception):
    """The agent could not act for reasons that do not describe it (API down, rate limited, timed out).
    A trial that ends this way is invalid: counted apart, never as a failure."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class AgentRefused(Exception):
    """The model refused the request for a reason that is its own limit (its context window overflowed, it does
    not accept a parameter the harness needs). The trial describes the agent: it is a failure with this reason,
    never an invalid trial. `reply` is what the model did answer when the refusal follows a reply (one cut at the
    output cap): that reply was a turn, and the trial records it as one."""

    def __init__(self, reason: str, message: str, reply: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.reply = reply


@runtime_checkable
class AgentSession(Protocol):
    usage: Usage

    async def next_action(self, observation: dict[str, Any] | None) -> Action | None:
        """The next action given the previous action's envelope (None at the start); None to stop."""
        ...

    def transcript(self) -> list[dict[str, Any]]:
        """The agent-side record of the episode (model messages), for stored transcripts."""
        ...


@runtime_checkable
class Agent(Protocol):
    """`deterministic` agents act the same way every time on the same task: calibration runs them once per
    task, since repeating them would count one observation several times."""

    name: str
    privileged: bool
    deterministic: bool

    def session(self, view: TaskView, task: Task | None = None) -> AgentSession: ...


# A factory takes the agent's name and, for a model agent, its LLMConfig fields (mode, parse, base_url, ...).
AgentFactory = Callable[..., Agent]
AGENTS: dict[str, AgentFactory] = {}
# The prefixes whose factories take configuration; any other agent refuses it rather than ignoring it.
CONFIGURABLE: set[str] = set()
# Names that stand for a population of agents, e.g. `ladder` for ladder-0 … ladder-4.
FAMILIES: dict[str, tuple[str, ...]] = {}


def register_agent(prefix: str, configurable: bool = False) -> Callable[[AgentFactory], AgentFactory]:
    """Register a factory for agent names equal to `prefix` or starting with `prefix:`; a `configurable`
    factory takes the model configuration as keyword arguments."""

    def register(factory: AgentFactory) -> AgentFactory:
        AGENTS[prefix] = factory
        if configurable:
            CONFIGURABLE.add(prefix)
        return factory

    return register


def register_family(name: str, members: tuple[str, ...]) -> None:
    FAMILIES[name] = members
