"""The workspace simulator: a deterministic stand-in for the analyst workspace and its tool surface.

Public API: `World.load(path)`, `Workspace.start(world, setup)`, `ws.call(tool, args) -> Envelope`,
`ws.snapshot()`, `ws.state_hash()`, `tool_schemas()`. Nothing here imports certify/ or authoring/.
"""

from pathlib import Path

from .envelope import Envelope, ErrorInfo
from .errors import SetupError, ToolError, WorldError
from .grid import GRID_COLUMNS
from .setup import DashboardSeed, InitialState, Setup
from .toolspec import TOOLS, tool_schemas
from .workspace import Workspace
from .world import World

DEFAULT_WORLD = Path(__file__).parent / "worlds" / "default"
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)

__all__ = [
    "DEFAULT_WORLD",
    "GRID_COLUMNS",
    "TOOLS",
    "TOOL_NAMES",
    "DashboardSeed",
    "Envelope",
    "ErrorInfo",
    "InitialState",
    "Setup",
    "SetupError",
    "ToolError",
    "Workspace",
    "World",
    "WorldError",
    "tool_schemas",
]
