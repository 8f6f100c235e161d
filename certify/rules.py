"""How every harness states an episode's rules to the agent under test: ours in its system prompt, `taskforge
serve` in its MCP instructions and its prompt `task`. The rules themselves are `certify.episode.episode_rules`
(its turn and invalid-call budgets and standing checks, never the eval block); this is the one rendering of them.
"""

from __future__ import annotations

RULES_HEADING = "Rules of this episode:"


def rules_text(rules: list[str] | tuple[str, ...]) -> str:
    """The heading, then one line per rule."""
    lines = "\n".join(f"- {rule}" for rule in rules) or "- (none stated)"
    return f"{RULES_HEADING}\n{lines}"
