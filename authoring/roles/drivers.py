"""The four role drivers, chosen as a set: the rule drivers (offline, deterministic) or the LLM drivers over one
shared model endpoint."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .author import LLMAuthor, RuleAuthor
from .fairness import LLMFairness, RuleFairness
from .fixer import LLMFixer, RuleFixer
from .llm import SKILLS, Endpoint, LLMConfig
from .validator import LLMValidator, RuleValidator

if TYPE_CHECKING:
    import httpx2
    import openai

    from ..graph import Drivers


def rule_drivers(progress: Callable[[str], None]) -> Drivers:
    from ..graph import Drivers

    return Drivers(RuleAuthor(), RuleValidator(), RuleFairness(), RuleFixer(), progress)


def llm_drivers(
    config: LLMConfig,
    progress: Callable[[str], None],
    *,
    client: openai.AsyncOpenAI | None = None,
    http_client: httpx2.AsyncClient | None = None,
    preflight: bool = False,
) -> Drivers:
    """The four LLM drivers over one shared endpoint; `client`/`http_client` are injectable for tests.
    With `preflight`, the endpoint is checked first (EndpointError when it cannot be used at all)."""
    from ..graph import Drivers

    missing = [s for s in SKILLS if not (Path(config.skills_dir) / f"{s}.md").is_file()]
    if missing:
        raise ValueError(
            f"the LLM drivers read their instructions from {config.skills_dir}, which has no "
            f"{', '.join(m + '.md' for m in missing)}: point skills_dir (--skills-dir) at the skills "
            "folder"
        )
    endpoint = Endpoint(config, client=client, http_client=http_client, progress=progress)
    if preflight:
        try:
            endpoint.check()
        except BaseException:
            endpoint.close()
            raise
    return Drivers(
        LLMAuthor(endpoint), LLMValidator(endpoint), LLMFairness(endpoint), LLMFixer(endpoint), progress
    )
