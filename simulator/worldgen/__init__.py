"""Generator of Taskforge's default world (simulator/worlds/default) from the compact spec.yaml.

`python -m simulator.worldgen` regenerates the committed files; `--check` reports drift.
"""

from ._common import SPEC_PATH, SpecError, load_spec
from ._world import DEFAULT_OUT, build_world, check_planted_unique, diff_world, knowledge_text, write_world

__all__ = [
    "DEFAULT_OUT",
    "SPEC_PATH",
    "SpecError",
    "build_world",
    "check_planted_unique",
    "diff_world",
    "knowledge_text",
    "load_spec",
    "write_world",
]
