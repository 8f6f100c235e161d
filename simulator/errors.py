"""Error types of the simulator.

Two families, kept apart on purpose: `ToolError` is something the agent under test did wrong and becomes an
error envelope it can read; `WorldError` and `SetupError` are defects in files a person wrote (a world, a
task's setup) and must name the file and the field so that person can fix them.
"""

from __future__ import annotations


class ToolError(Exception):
    """A refused tool call. Its code and message are shown to the agent verbatim, so both are stable text."""

    def __init__(self, code: str, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable


class WorldError(Exception):
    """A world directory that cannot be loaded."""

    def __init__(self, file: str, field: str, message: str) -> None:
        super().__init__(f"{file}: {field}: {message}")
        self.file = file
        self.field = field
        self.message = message


class SetupError(Exception):
    """A task setup that cannot be turned into an episode (unknown backend, baseline, dashboard...)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"setup.{field}: {message}")
        self.field = field
        self.message = message
