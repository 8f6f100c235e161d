"""A persona run's identity: every input that changes what the run writes.

Two runs with the same inputs write the same tasks, so a finished one can stand for the other; a run whose
inputs differ in anything (a story, the world, the baseline, the drivers, the reference agent, the repeats)
is a new run. The lock records the inputs of the run that produced a persona's files, so `author` can tell
what changed; the graph thread adds the destination (a run into another repository is another run).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from simulator import World

from .options import RunOptions
from .sources import load_persona, story_paths


class RunInputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: str
    world: str
    baseline: str
    taskset: str
    driver: str
    reference_agent: str
    frontier_agent: str | None = None
    repeats: int
    min_attempts: int = 3

    @property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(), sort_keys=True).encode()).hexdigest()

    def differences(self, other: dict[str, object] | None) -> list[str]:
        """Names of the inputs that differ from an earlier run's recorded inputs."""
        if not other:
            return ["no earlier inputs recorded"]
        return [k for k, v in self.model_dump().items() if other.get(k) != v]


def sources_digest(sources_root: Path, persona: str) -> str:
    root = Path(sources_root)
    digest = hashlib.sha256()
    for path in [Path(load_persona(root, persona).file), *story_paths(root, persona)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def run_inputs(options: RunOptions, world: World, baseline: str, driver: str) -> RunInputs:
    """The inputs a run of `options` depends on: the options' own identity fields as they are, the sources and
    the world by digest, and the baseline and driver the run resolved."""
    return RunInputs(
        sources=sources_digest(Path(options.sources_root), options.persona),
        world=world.fingerprint,
        baseline=baseline,
        driver=driver,
        **options.model_dump(include=_FROM_OPTIONS),
    )


_FROM_OPTIONS = {"taskset", "reference_agent", "frontier_agent", "repeats", "min_attempts"}
"""The RunInputs fields that are RunOptions fields of the same name and meaning."""


def thread_prefix(taskset: str, persona: str) -> str:
    return f"{taskset}:{persona}:"


def thread_id(inputs: RunInputs, persona: str, destination: Path, nonce: str = "") -> str:
    """One graph thread per (inputs, destination); `--force` adds a nonce so it always starts afresh."""
    key = hashlib.sha256(f"{inputs.sha256}|{Path(destination).resolve()}".encode()).hexdigest()[:12]
    return thread_prefix(inputs.taskset, persona) + key + (f":{nonce}" if nonce else "")
