"""The workspace simulator: a deterministic stand-in for the analyst workspace and its tool surface.

Public API: `World.load(path)`, `Workspace.start(world, setup)`, `ws.call(tool, args) -> Envelope`,
`ws.snapshot()`, `ws.state_hash()`, `tool_schemas()`, `tools_of(kind)` (the tools of a kind, as
declared with each tool), `reads_only(tool, args)`, `option_values(param)`. Nothing here imports certify/ or authoring/.
"""

from pathlib import Path

from .envelope import Envelope, ErrorInfo
from .errors import SetupError, ToolError, WorldError
from .grid import GRID_COLUMNS
from .setup import DashboardSeed, InitialState, Setup
from .toolspec import TOOLS, Kind, reads_only, tool_schemas, tools_of
from .workspace import Workspace
from .world import Option, World, option_values, param_options

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
    "Kind",
    "Option",
    "Setup",
    "SetupError",
    "ToolError",
    "Workspace",
    "World",
    "WorldError",
    "option_values",
    "param_options",
    "reads_only",
    "tool_schemas",
    "tools_of",
]
