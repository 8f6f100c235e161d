"""The tool surface: one declaration per tool (its argument model and description) from which both the
argument validation and the JSON Schema shown to agents are derived.

The schemas agents see forbid other keys, and the models do too, but a call is not refused for a top-level key
its tool does not take: the source benchmark ignored such keys, and published references rely on it. The
dispatcher drops them before validation and names them in the envelope's message, so an agent still sees its
typo (`ToolSpec.unknown_keys`). Keys the source refused stay refused by the workspace's pre-checks (layout keys
on update_widget, apps_json/widgets_json on manage_apps, tab objects with keys other than name). A few keys
the source accepted are accepted here too without being advertised in the schemas (`SkipJsonSchema`): create
_widget's `backend_name` (older name of origin) and the `config` object of create_widget/update_widget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(ToolArgs):
    pass


class TabName(ToolArgs):
    name: str = Field(description="Display name of the tab; its id is derived from it once, at creation.")


class ManageDashboardArgs(ToolArgs):
    operation: Literal["create", "read", "update"]
    name: str | None = Field(None, description="Dashboard name; required for create and update.")
    dashboard_id: str | None = Field(
        None, description="Required for update; read defaults to the current one."
    )
    activate: bool = Field(True, description="Open the created dashboard.")


class ManageNavigationBarArgs(ToolArgs):
    operation: Literal["create", "add_tabs", "remove_tabs", "rename_tabs"]
    tabs: list[TabName] | None = Field(None, description="Tabs for create, add_tabs and remove_tabs.")
    rename_map: dict[str, str] | None = Field(None, description="For rename_tabs: {tab_id: new name}.")
    dashboard_id: str | None = Field(None, description="Defaults to the current dashboard.")


class NavigateWorkspaceArgs(ToolArgs):
    operation: Literal["dashboard", "tab"]
    dashboard_id: str | None = None
    tab_id: str | None = None


class ListAvailableWidgetsArgs(ToolArgs):
    origin: str | None = Field(None, description="Only widgets of this backend (its display name).")
    backend_id: str | None = Field(None, description="Only widgets of this connected backend id.")


class WidgetRefArgs(ToolArgs):
    origin: str = Field(description="Backend display name, e.g. as listed by list_available_widgets.")
    widget_id: str


class GetParamsOptionsArgs(WidgetRefArgs):
    param_name: str
    data_args: dict[str, Any] | None = None


class GetWidgetDataArgs(ToolArgs):
    origin: str | None = Field(
        None, description="Backend display name; next to widget_uuid it narrows the match."
    )
    widget_id: str | None = Field(
        None, description="Catalog widget id; next to widget_uuid it is not needed."
    )
    widget_uuid: str | None = Field(None, description="Read the data of a placed widget instead.")
    dashboard_id: str | None = None
    data_args: dict[str, Any] | None = None


class WidgetConfig(BaseModel):
    """The source's older envelope for a widget's arguments; other keys in it were ignored there too."""

    model_config = ConfigDict(extra="ignore")

    data_args: dict[str, Any] | None = None
    ui_args: dict[str, Any] | None = None


class _ConfigFallback(ToolArgs):
    """data_args / ui_args, each taken from `config` only when the top-level key is absent (as the source did)."""

    data_args: dict[str, Any] | None = Field(None, description="Parameter values, keyed by paramName.")
    ui_args: dict[str, Any] | None = None
    config: SkipJsonSchema[WidgetConfig | None] = None

    @model_validator(mode="after")
    def _from_config(self) -> _ConfigFallback:
        if self.config is not None:
            if self.data_args is None:
                self.data_args = self.config.data_args
            if self.ui_args is None:
                self.ui_args = self.config.ui_args
        return self


class CreateWidgetArgs(_ConfigFallback):
    origin: str = Field(description="Backend display name.")
    widget_id: str
    dashboard_id: str | None = Field(None, description="Defaults to the current dashboard.")
    backend_name: SkipJsonSchema[str | None] = None

    @model_validator(mode="before")
    @classmethod
    def _origin_alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("origin") and data.get("backend_name") is not None:
            return {**data, "origin": data["backend_name"]}
        return data


class WidgetInstanceArgs(ToolArgs):
    widget_uuid: str | None = Field(None, description="The placed widget's uuid.")
    widget_id: str | None = Field(None, description="Allowed when exactly one instance is on the dashboard.")
    origin: str | None = Field(
        None, description="Narrows the match: the placed widget's backend display name."
    )
    dashboard_id: str | None = None


class UpdateWidgetArgs(WidgetInstanceArgs, _ConfigFallback):
    pass


class UpdateWidgetLayoutArgs(WidgetInstanceArgs):
    x: float
    y: float
    w: float
    h: float
    tab_id: str | None = Field(None, description="Move the widget to this existing tab.")
    min_w: float | None = None
    min_h: float | None = None
    max_w: float | None = None
    max_h: float | None = None


class ChartParams(BaseModel):
    model_config = ConfigDict(extra="allow")

    chartType: str
    xKey: str
    yKey: str | list[str]


class AddGenerativeWidgetArgs(ToolArgs):
    widget_type: Literal["note", "table", "chart", "html"]
    data: str | list[dict[str, Any]] = Field(
        description="Text for note/html; a list of row objects for table/chart."
    )
    chart_params: ChartParams | None = Field(None, description="Charts: {chartType, xKey, yKey}.")
    name: str | None = None
    description: str | None = None
    inner_tab: str | None = Field(
        None, description="An existing tab of the dashboard; defaults to the active one."
    )
    dashboard_id: str | None = None


class ManageBackendsArgs(ToolArgs):
    operation: Literal["list", "add", "refresh", "delete"]
    name: str | None = None
    url: str | None = None
    backend_id: str | None = None
    widgets_json: Any = Field(None, description="widgets.json content: an object keyed by widget id.")
    apps_json: Any = Field(None, description="apps.json content: an array of apps.")


class ManageAppsArgs(ToolArgs):
    operation: Literal["list", "read", "instantiate"]
    backend_id: str | None = None
    app_name: str | None = None
    template_id: str | None = None
    dashboard_name: str | None = None
    activate: bool = True


class GetSkillContentArgs(ToolArgs):
    slug: str
    reason: str | None = None


class ReadWorkspaceResourceArgs(ToolArgs):
    uri: str


class GetWorkspacePromptArgs(ToolArgs):
    name: Literal["workspace_tool_usage", "workspace_session_context"]


class TaskRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    description: str | None = None
    assigned_holder_url: str | None = None
    assigned_agent_id: str | None = None


class AssignTasksArgs(ToolArgs):
    task_requests: list[TaskRequest] = Field(default_factory=list)


# What a tool is, as the modules that need a class of tools ask it (`tools_of(kind)`), declared once with the tool:
#   read      leaves the workspace as it was; every other tool writes (see `read_operations` for mixed ones)
#   write     changes the workspace or the interface state (which dashboard and tab are open)
#   placing   puts a new widget on a dashboard
#   instance  acts on a placed widget, named by its uuid (or by a widget id with one instance)
#   widget    takes a catalog widget by (origin, widget_id)
#   showing   its result shows placed widgets (a dashboard composition, or one widget)
#   data      its result is served data (rows, documents), which differs between the simulator and the product
#   document  reads one served document (a skill, a resource, a prompt)
#   knowledge the product serves what it reads as MCP resources and prompts, not as a tool
Kind = Literal["read", "write", "placing", "instance", "widget", "showing", "data", "document", "knowledge"]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    args_model: type[ToolArgs]
    description: str
    method: Callable[..., Any]
    kinds: frozenset[Kind] = frozenset()
    # For a writing tool whose kind depends on its `operation`: the operations that only read.
    read_operations: tuple[str, ...] = ()

    def json_schema(self) -> dict[str, Any]:
        """The tool's schema as agents see it; built once per tool (callers must not mutate it)."""
        return _schema_of(self.name, self.args_model, self.description)

    def unknown_keys(self, args: dict[str, Any]) -> list[str]:
        """Top-level keys of `args` this tool does not take, in the order given."""
        fields = _field_names(self.args_model)
        return [k for k in args if k not in fields]


@cache
def _field_names(args_model: type[ToolArgs]) -> frozenset[str]:
    # asked on every call the simulator answers; a model's fields are fixed once its class is built (reading
    # `model_fields` off the class goes through pydantic's descriptor each time)
    return frozenset(args_model.model_fields)


@cache
def _schema_of(name: str, args_model: type[ToolArgs], description: str) -> dict[str, Any]:
    schema = args_model.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return {"name": name, "description": description, "parameters": schema}


TOOLS: dict[str, ToolSpec] = {}


def tool(
    args_model: type[ToolArgs], *kinds: Kind, read_operations: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a Workspace method as a tool of the given kinds; its docstring's first paragraph is the tool
    description. A tool is "read" or "write", exactly one (a mixed tool is "write" with `read_operations`)."""
    if ("read" in kinds) == ("write" in kinds):
        raise ValueError(f"a tool is either 'read' or 'write', not {kinds!r}")
    if read_operations and "write" not in kinds:
        raise ValueError("read_operations are for a 'write' tool whose kind depends on its operation")

    def register(method: Callable[..., Any]) -> Callable[..., Any]:
        doc = (method.__doc__ or "").strip().split("\n\n")[0]
        description = " ".join(line.strip() for line in doc.splitlines())
        TOOLS[method.__name__] = ToolSpec(
            method.__name__, args_model, description, method, frozenset(kinds), read_operations
        )
        return method

    return register


def tools_of(kind: Kind) -> tuple[str, ...]:
    """The names of the tools of one kind, in declaration order: the one answer to "which tools are reads" (or
    placing, or ...) so no module keeps its own list."""
    return tuple(name for name, spec in TOOLS.items() if kind in spec.kinds)


def reads_only(name: str, args: Any) -> bool:
    """Whether a call leaves the workspace as it was: a read, or a read operation of a mixed tool. False for a
    name that is not a tool."""
    spec = TOOLS.get(name)
    if spec is None:
        return False
    if "read" in spec.kinds:
        return True
    operation = args.get("operation") if isinstance(args, dict) else None
    return operation in spec.read_operations


_TYPE_WORDS = {
    "string_type": "must be a string",
    "dict_type": "must be an object",
    "list_type": "must be an array",
    "bool_type": "must be a boolean",
    "bool_parsing": "must be a boolean",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def describe_validation_error(tool_name: str, exc: ValidationError) -> str:
    """A stable, agent-readable account of what is wrong with the arguments."""
    parts: list[str] = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        kind = err["type"]
        if kind == "missing":
            parts.append(f"missing required argument '{loc}'")
        elif kind == "extra_forbidden":
            parts.append(f"unknown argument '{loc}'")
        elif kind == "literal_error":
            expected = str(err.get("ctx", {}).get("expected", "")).replace("'", "").replace(" or ", ", ")
            parts.append(f"argument '{loc}' must be one of {expected}")
        elif kind in _TYPE_WORDS:
            parts.append(f"argument '{loc}' {_TYPE_WORDS[kind]}")
        else:
            parts.append(f"argument '{loc}': {err['msg']}")
    return f"{tool_name}: " + "; ".join(dict.fromkeys(parts)) + "."


def ignored_note(keys: list[str]) -> str:
    """How an envelope names the argument keys it ignored (stable text)."""
    return f"Ignored unknown argument(s): {', '.join(repr(k) for k in keys)}."


def tool_schemas(names: list[str] | None = None) -> list[dict[str, Any]]:
    """JSON Schema of each tool (all, or the given ones in the given order)."""
    chosen = names if names is not None else list(TOOLS)
    return [TOOLS[n].json_schema() for n in chosen if n in TOOLS]
