"""Opt-in: one story authored by a real model through the LLM author, every level certified by the gates.

Skipped unless TASKFORGE_LIVE_MODEL names a model and OPENAI_BASE_URL or OPENAI_API_KEY an endpoint, e.g.
    TASKFORGE_LIVE_MODEL=gpt-4.1 OPENAI_API_KEY=… pytest tests/authoring/test_live_model.py
    TASKFORGE_LIVE_MODEL=qwen2.5:14b OPENAI_BASE_URL=http://localhost:11434/v1 pytest tests/authoring/test_live_model.py
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from authoring.failures import RoleFailure
from authoring.options import RunOptions
from authoring.roles.drivers import llm_drivers
from authoring.roles.llm import DEFAULT_SKILLS_DIR, LLMConfig
from authoring.taskset import STANDARD_DEFAULTS
from certify.gates import certify_task
from certify.task import parse_task
from tests.authoring.role_player import contexts

pytestmark = pytest.mark.skipif(
    not os.environ.get("TASKFORGE_LIVE_MODEL")
    or not (os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY")),
    reason="opt-in: set TASKFORGE_LIVE_MODEL and OPENAI_BASE_URL or OPENAI_API_KEY",
)


def test_a_real_model_authors_one_story(sources, repo, mini_world_path, tmp_path):
    options = RunOptions(
        persona="desk_head",
        tasksets_dir=str(repo / "tasksets"),
        sources_root=str(sources),
        skills_dir=str(repo / "skills"),
        world=str(mini_world_path),
        baseline="lived",
    )
    config = LLMConfig.from_env(
        model=os.environ["TASKFORGE_LIVE_MODEL"],
        cache_dir=tmp_path / "cache",
        skills_dir=Path(shutil.copytree(DEFAULT_SKILLS_DIR, tmp_path / "skills")),
    )
    progress: list[str] = []
    drivers = llm_drivers(config, progress.append, preflight=True)
    ctx = contexts(options)["morning_positions"]
    history: list[dict] = []
    try:
        for level in range(5):
            feedback: list[str] = []
            for _round in range(3):
                try:
                    raw = drivers.author.draft(ctx, level, feedback, history).task
                except RoleFailure as failure:
                    pytest.fail(f"level{level}: {failure} (evidence: {failure.evidence[:500]})")
                task = parse_task(raw, f"{raw.get('id')}.json", ctx.defaults or STANDARD_DEFAULTS)
                cert = certify_task(ctx.world, task, f"{task.id}.json")
                if cert.certified:
                    break
                feedback = [f"gate {name}: {g.detail}" for name, g in cert.gates.items() if not g.ok]
            assert cert.certified, f"level{level} did not certify in 3 rounds: {feedback}"
    finally:
        drivers.author.endpoint.close()
    usage = drivers.author.endpoint.usage
    print(
        f"{config.model}: {usage.requests} requests, {usage.tokens_in}+{usage.tokens_out} tokens, "
        f"${usage.cost:.4f}"
    )
