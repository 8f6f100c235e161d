"""One way to get an agent by name, and what an agent is (deterministic, privileged) read from the agent."""

from __future__ import annotations

import pytest

from certify.agents import AGENTS, configurable, resolve_agent, resolve_agents
from certify.agents.base import CONFIGURABLE
from certify.calibration import is_deterministic


class _Sampler:
    """A stand-in for any agent that samples: its name says nothing about it."""

    privileged = False
    deterministic = False

    def __init__(self, name: str, **config) -> None:
        self.name, self.config = name, config

    def session(self, view, task=None):  # pragma: no cover - never run here
        raise NotImplementedError


@pytest.fixture
def sampler(monkeypatch):
    resolve_agent("noop")  # every built-in agent registered first
    monkeypatch.setitem(AGENTS, "sampler", _Sampler)
    CONFIGURABLE.add("sampler")
    yield
    CONFIGURABLE.discard("sampler")


def test_determinism_is_read_from_the_agent_not_from_its_name(sampler):
    assert is_deterministic("oracle") and is_deterministic("ladder")
    assert not is_deterministic("sampler:any")
    assert not is_deterministic("no-such-agent")


def test_model_configuration_goes_to_agents_that_take_it_and_is_refused_by_the_others(sampler):
    agent = resolve_agent("sampler:m", {"mode": "tools"})
    assert agent.config == {"mode": "tools"} and configurable("sampler:m")
    assert not configurable("oracle")
    with pytest.raises(ValueError, match="mode only apply to openai:<model> agents, not to 'oracle'"):
        resolve_agent("oracle", {"mode": "tools"})


def test_a_family_resolves_to_its_members_and_is_no_single_agent():
    assert [a.name for a in resolve_agents("ladder")] == [f"ladder-{k}" for k in range(5)]
    assert [a.name for a in resolve_agents("noop")] == ["noop"]
    with pytest.raises(ValueError, match="is a family"):
        resolve_agent("ladder")
