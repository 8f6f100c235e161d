"""How long our requests run next to the source benchmark's published tasks, level by level.

The source's requests are short: one clear ask, with the episode's standing rules (the cap on widgets nobody
asked for, the layouts that stay) in the harness rather than in every prompt. Ours are held to the same: per
level, the median prompt length in characters within `RATIO` of the source's (issue 22 item 5). The source's
figures are computed from its published tasks as vendored in compat/, not copied here.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

RATIO = 1.25


def prompt_lengths(taskset: Path) -> dict[str, list[int]]:
    """The prompt lengths (characters) of every task file under `taskset`, by difficulty ("level0" …)."""
    out: dict[str, list[int]] = {}
    for path in sorted(taskset.rglob("*.json")):
        try:
            task = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(task, dict) and isinstance(task.get("prompt"), str) and task.get("difficulty"):
            out.setdefault(str(task["difficulty"]), []).append(len(task["prompt"]))
    return out


@dataclass(frozen=True)
class LevelLength:
    level: str
    ours: float
    source: float
    ours_n: int
    source_n: int

    @property
    def ratio(self) -> float:
        return self.ours / self.source if self.source else 0.0

    @property
    def ok(self) -> bool:
        return self.ratio <= RATIO


def compare(ours: Path, source: Path) -> list[LevelLength]:
    """Per level present in both, the median prompt length of `ours` next to `source`'s."""
    a, b = prompt_lengths(ours), prompt_lengths(source)
    return [
        LevelLength(
            level, statistics.median(a[level]), statistics.median(b[level]), len(a[level]), len(b[level])
        )
        for level in sorted(set(a) & set(b))
    ]


def table(rows: list[LevelLength]) -> str:
    lines = [
        f"| level | ours (median chars, n) | source (median chars, n) | ratio (target ≤ {RATIO}) |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.level} | {r.ours:.0f} ({r.ours_n}) | {r.source:.0f} ({r.source_n}) | {r.ratio:.2f} "
            f"{'✓' if r.ok else '✗'} |"
        )
    return "\n".join(lines)
