"""The live progress display of `taskforge author`: one row per story (its level, the role at work, the round,
how it went) plus the run-wide stage, fed by the graph's streamed progress events."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from certify import LEVEL_NAMES, LEVELS

from .graph.state import ProgressEvent


class LiveProgress:
    def __init__(self) -> None:
        self.stories: dict[str, ProgressEvent] = {}
        self.stage: ProgressEvent | None = None

    def update(self, event: dict[str, Any] | ProgressEvent) -> None:
        e = event if isinstance(event, ProgressEvent) else ProgressEvent.model_validate(event)
        if e.story is not None:
            self.stories[e.story] = e
        else:
            self.stage = e

    def render(self) -> Table:
        table = Table(title="authoring", expand=False, show_edge=False, pad_edge=False)
        table.add_column("story", overflow="fold")
        table.add_column("level", no_wrap=True)
        table.add_column("role", no_wrap=True)
        table.add_column("round", no_wrap=True, justify="right")
        table.add_column("status", overflow="fold")
        for story, e in sorted(self.stories.items()):
            level = "-" if e.level is None else f"{e.level} {LEVEL_NAMES[LEVELS[e.level]]}"
            table.add_row(
                escape(story), level, e.role, "" if e.round is None else str(e.round), escape(e.status)
            )
        if self.stage is not None:
            table.caption = escape(f"{self.stage.role}: {self.stage.message}")
        return table
