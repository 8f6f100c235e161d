"""How every harness states an episode's rules to the agent under test: ours in the first user message (after the
request; the system prompt stays the same for every task, so a provider's prefix cache keeps it and the tool
schemas across trials), `taskforge serve` in its MCP instructions and its prompt `task`. The rules themselves are
`certify.episode.episode_rules` (its turn and invalid-call budgets and standing checks, never the eval block);
this is the one rendering of them.
"""

from __future__ import annotations

RULES_HEADING = "Rules of this episode:"


def rules_text(rules: list[str] | tuple[str, ...]) -> str:
    """The heading, then one line per rule."""
    lines = "\n".join(f"- {rule}" for rule in rules) or "- (none stated)"
    return f"{RULES_HEADING}\n{lines}"


def task_text(prompt: str, rules: list[str] | tuple[str, ...]) -> str:
    """What an agent is first told of its task: the request, then the episode's rules (our harness's first user
    message, the MCP prompt `task`)."""
    return f"{prompt}\n\n{rules_text(rules)}"
