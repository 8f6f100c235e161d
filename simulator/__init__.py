"""The workspace simulator: a deterministic stand-in for the analyst workspace and its tool surface.

Public API: `World.load(path)`, `Workspace.start(world, setup)`, `ws.call(tool, args) -> Envelope`,
`ws.snapshot()`, `ws.state_hash()`, `tool_schemas()`, `tools_of(kind)` (the tools of a kind, as
declared with each tool), `reads_only(tool, args)`, `option_values(param)`. Nothing here imports certify/ or authoring/.
"""

from pathlib import Path

from .envelope import Envelope, ErrorInfo
from .errors import SetupError, ToolError, WorldError
from .grid import GRID_COLUMNS, Rect, overlaps
from .params import value_allowed
from .setup import DashboardSeed, InitialState, Setup
from .slug import slugify
from .state import Dashboard, Tab, Widget
from .toolspec import TOOLS, Kind, reads_only, tool_schemas, tools_of
from .validation import validate_widgets
from .workspace import INDEX_URI, Workspace
from .world import (
    BackendFixture,
    Option,
    Prompt,
    Resource,
    Skill,
    WidgetDef,
    World,
    option_values,
    param_options,
)
from .worldcheck import Problem, check_world

DEFAULT_WORLD = Path(__file__).parent / "worlds" / "default"
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)

__all__ = [
    "DEFAULT_WORLD",
    "GRID_COLUMNS",
    "INDEX_URI",
    "TOOLS",
    "TOOL_NAMES",
    "BackendFixture",
    "Dashboard",
    "DashboardSeed",
    "Envelope",
    "ErrorInfo",
    "InitialState",
    "Kind",
    "Option",
    "Problem",
    "Prompt",
    "Rect",
    "Resource",
    "Setup",
    "SetupError",
    "Skill",
    "Tab",
    "ToolError",
    "Widget",
    "WidgetDef",
    "Workspace",
    "World",
    "WorldError",
    "check_world",
    "option_values",
    "overlaps",
    "param_options",
    "reads_only",
    "slugify",
    "tool_schemas",
    "tools_of",
    "validate_widgets",
    "value_allowed",
]
