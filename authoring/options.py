"""The options of one persona run: everything its output depends on, fixed when it starts.

They are the run's identity (with the destination), travel in its checkpoints so a resumed run goes on with
the options it started with, and are part of the authoring graph's context.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from certify import MIN_ATTEMPTS


class RunOptions(BaseModel):
    """Everything a persona run depends on; fixed when the run starts."""

    model_config = ConfigDict(extra="forbid")

    persona: str
    taskset: str = "workspace_tasks"
    tasksets_dir: str
    sources_root: str
    skills_dir: str
    world: str
    baseline: str | None = None
    reference_agent: str = "heuristic"
    frontier_agent: str | None = None
    agent_llm: dict[str, Any] = Field(
        default_factory=dict,
        description="LLMConfig fields of an openai:<model> reference or frontier agent (--mode, --max-tokens, ...)",
    )
    repeats: int = Field(3, ge=1)
    min_attempts: int = Field(
        MIN_ATTEMPTS, ge=1, description="valid attempts per agent a level needs to be measured by calibration"
    )
    author_rounds: int = Field(3, ge=1)
    review_rounds: int = Field(2, ge=0)
    fix_rounds: int = Field(2, ge=0)
    commit: bool = True
    inputs_sha256: str = ""
    inputs: dict[str, Any] = Field(default_factory=dict)
    run_id: str = ""

    @property
    def taskset_root(self) -> Path:
        return Path(self.tasksets_dir) / self.taskset
