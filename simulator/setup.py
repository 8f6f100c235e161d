"""The episode setup a task declares: which world pieces to connect and what state to seed on top.

These models are the file edge for `setup` blocks and for initial-state files of a world, so unknown keys are
rejected: a typo in a seeded widget would otherwise silently seed the wrong workspace.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LayoutSeed(_Strict):
    x: float | None = None
    y: float | None = None
    w: float | None = None
    h: float | None = None
    min_w: float | None = None
    min_h: float | None = None
    max_w: float | None = None
    max_h: float | None = None


class TabSeed(_Strict):
    id: str | None = None
    name: str | None = None


class WidgetSeed(_Strict):
    origin: str | None = None
    widget_id: str
    widget_uuid: str | None = None
    tab_id: str | None = None
    data_args: dict[str, Any] | None = None
    ui_args: dict[str, Any] | None = None
    layout: LayoutSeed | None = None


class GeneratedWidgetSeed(_Strict):
    widget_type: str = "note"
    widget_uuid: str | None = None
    name: str | None = None
    data: Any = None
    description: str | None = None
    chart_params: dict[str, Any] | None = None
    tab_id: str | None = None
    layout: LayoutSeed | None = None


class DashboardSeed(_Strict):
    name: str
    dashboard_id: str | None = None
    activate: bool | None = None
    navigation_bar: bool | None = None
    tabs: list[TabSeed] | None = None
    widgets: list[WidgetSeed] = Field(default_factory=list)
    generated_widgets: list[GeneratedWidgetSeed] = Field(default_factory=list)


class CustomBackendSeed(_Strict):
    name: str = "Custom Backend"
    url: str = "http://127.0.0.1:7779"
    backend_id: str | None = None
    widgets_json: Any = None
    apps_json: Any = None
    warnings: list[str] = Field(default_factory=list)


class InitialState(_Strict):
    dashboard: DashboardSeed | None = None
    dashboards: list[DashboardSeed] | None = None
    custom_backends: list[CustomBackendSeed] = Field(default_factory=list)
    active_dashboard: str | None = Field(
        None, description="Older spelling of setup.default_selected_dashboard."
    )

    def seeded_dashboards(self) -> list[DashboardSeed]:
        if self.dashboards:
            return list(self.dashboards)
        return [self.dashboard] if self.dashboard is not None else []


class Setup(_Strict):
    """What an episode starts from. `None` on an axis means "not declared here" (a taskset may supply it)."""

    workspace_baseline: str | None = None
    workspace_backends: list[str] | None = None
    workspace_skills: list[str] | None = None
    default_selected_dashboard: str | None = None
    allowed_tools: list[str] | None = None
    initial_state: InitialState = Field(default_factory=InitialState)

    @model_validator(mode="after")
    def _selected_is_named(self) -> Setup:
        if self.default_selected_dashboard is not None and not self.default_selected_dashboard.strip():
            raise ValueError("default_selected_dashboard must be a non-empty dashboard name")
        older = self.initial_state.active_dashboard
        if older is not None:
            if self.default_selected_dashboard is not None:
                raise ValueError(
                    "give default_selected_dashboard or initial_state.active_dashboard, not both"
                )
            self.default_selected_dashboard = older
        return self
