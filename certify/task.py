"""Task and taskset files: strict models, `task_defaults` merging, and loading with errors that name the
file and the field.

A task is one JSON file `{id, difficulty, prompt, setup, eval}` plus optional metadata. Unknown keys are
rejected everywhere: a misspelt check would otherwise be silently skipped and the task would grade less than
its author meant. Our own metadata lives under `meta` (persona, story, level, the level's hidden values for the
leak gate, where a Ground fact is planted); tasks of the source benchmark carry none and parse unchanged.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)

from simulator import DEFAULT_WORLD, Setup, World

LEVELS = ("level0", "level1", "level2", "level3", "level4")
LEVEL_NAMES = {
    "level0": "Execute",
    "level1": "Find",
    "level2": "Derive",
    "level3": "Ground",
    "level4": "Compose",
}
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RequiredTool(_Strict):
    """One step of a reference (eval.required_tools, or eval.reference_trace / eval.reference): replayed by the
    oracle; unless optional, a step the load-bearing gate drops and, where the task grades its reference, a
    required call whose arguments `graded_args` narrows."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    graded_args: list[str] | None = None
    optional: bool = False
    outcome: bool = Field(
        False,
        description="The step is work whose effect the state checks grade: replayed and "
        "load-bearing, but not a call the trace must contain (another route to the same state "
        "passes).",
    )
    note: str | None = None

    @model_validator(mode="after")
    def _one_role(self) -> RequiredTool:
        if self.optional and self.outcome:
            raise ValueError("a step is either optional discovery or outcome work, not both")
        return self

    def graded(self) -> dict[str, Any]:
        if self.graded_args is None:
            return dict(self.args)
        return {k: self.args[k] for k in self.graded_args if k in self.args}


class RequiredToolCall(_Strict):
    tool: str
    args_contains: dict[str, Any] = Field(default_factory=dict)
    min_count: int = 1


class RequiredWidget(_Strict):
    """A placed catalog widget; `name` (its catalog display name) stands in for `widget_id` when the id is the
    agent's own choice (a widget it built)."""

    origin: str
    widget_id: str | None = None
    name: str | None = None
    data_args: dict[str, Any] = Field(default_factory=dict)
    tab_id: str | None = None
    min_count: int = 1
    max_count: int | None = None

    @model_validator(mode="after")
    def _addressed(self) -> RequiredWidget:
        if self.widget_id is None and self.name is None:
            raise ValueError("give widget_id or name")
        return self


class RequiredGeneratedWidget(_Strict):
    widget_type: str
    name_contains: str | None = None
    data_contains: list[str] = Field(default_factory=list)
    must_not_contain: list[str] = Field(
        default_factory=list,
        description="Values no such widget the agent writes "
        "may contain (the distractors: other options, a decoy's value).",
    )
    tab_id: str | None = None


class RequiredLayout(_Strict):
    widget_uuid: str | None = None
    widget_id: str | None = None
    tab_id: str | None = None
    x: float | None = None
    y: float | None = None
    w: float | None = None
    h: float | None = None


class RequiredWidgetDef(_Strict):
    """A widget a published backend serves, by id or, when the id is the agent's own choice, by display name."""

    backend_name: str
    widget_id: str | None = None
    name: str | None = None
    expect: dict[str, Any] = Field(default_factory=dict)
    params_include: list[dict[str, Any]] = Field(default_factory=list)
    columns_include: list[dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _addressed(self) -> RequiredWidgetDef:
        if self.widget_id is None and self.name is None:
            raise ValueError("give widget_id or name")
        return self


class WidgetOnTab(_Strict):
    """An app tab showing a widget; names stand in for ids the agent chooses itself."""

    tab_id: str | None = None
    tab_name: str | None = None
    widget_id: str | None = None
    widget_name: str | None = None

    @model_validator(mode="after")
    def _addressed(self) -> WidgetOnTab:
        if (self.tab_id is None and self.tab_name is None) or (
            self.widget_id is None and self.widget_name is None
        ):
            raise ValueError("give tab_id or tab_name, and widget_id or widget_name")
        return self


class GroupSpec(BaseModel):
    model_config = ConfigDict(extra="allow")

    widgetIds_include: list[str] = Field(default_factory=list)


class RequiredAppDef(_Strict):
    backend_name: str
    template_id: str | None = None
    name_contains: str | None = None
    expect: dict[str, Any] = Field(default_factory=dict)
    tabs_include: list[str] = Field(default_factory=list)
    tab_names_include: list[str] = Field(default_factory=list)
    tab_count: int | None = None
    prompts_min_count: int | None = None
    layout_refs_valid: bool = False
    no_overlaps: bool = False
    widgets_on_tab: list[WidgetOnTab] = Field(default_factory=list)
    groups_include: list[GroupSpec] = Field(default_factory=list)


class RequiredToolResult(_Strict):
    tool: str
    data_contains: list[str] = Field(default_factory=list)
    min_count: int = 1


class RequiredResourceRead(_Strict):
    uri: str
    min_count: int = 1


class LayoutRules(_Strict):
    within_grid: bool = True
    no_overlaps: bool = False
    grid_width: int = 40


class TraceRules(_Strict):
    max_invalid_tool_calls: int = 0
    forbid_invented_widget_ids: bool = True
    ids_known_from: Literal["listing", "any_result"] = Field(
        "listing",
        description="What makes a widget id known rather than invented: a catalog listing (the source "
        "benchmark's rule), or any earlier result that shows it (a snapshot's placed widget, read_widget).",
    )
    must_call_schema_before_create: bool = False
    max_repeated_snapshots: int | None = None


class WorkspaceRules(_Strict):
    preserve_other_dashboards: bool = False
    preserve_custom_backend_ids: bool = False
    unique_custom_backend_names: bool = False
    require_no_backend_warnings: bool = False
    max_dashboard_delta: int | None = None
    max_custom_backend_delta: int | None = None


class AppStructure(_Strict):
    layout_refs_valid: bool = True
    no_overlaps: bool = True


class KeyPoint(_Strict):
    """One point a judged answer must make. `point` is what the model judge reads; `figures` (values the answer
    must state, a percentage equal to its fraction) and `terms` (words or phrases it must use; a list inside the
    list is a choice: any one of them) are what the deterministic rubric judge checks, so a point that carries
    neither cannot tell an analysis from a list of numbers and the judge audit says so."""

    point: str = Field(min_length=1)
    figures: list[str] = Field(default_factory=list)
    terms: list[str | list[str]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _bare_text(cls, data: Any) -> Any:
        return {"point": data} if isinstance(data, str) else data


class JudgeEvaluation(_Strict):
    """An answer graded by a judge, anchored to the task's `eval.reference_answer` (the exemplar). The source
    benchmark's tasks declare it as `judge_evaluation: true`; ours also name the key points the answer must make,
    the governing skill whose instructions it follows and the skill's required elements. Deterministic checks gate
    first (no final answer, no pass); the judge's verdict is one more check (`answer_judgment`)."""

    key_points: list[KeyPoint] = Field(default_factory=list)
    skill: str | None = Field(
        None, description="Slug of the platform skill whose instructions the answer follows."
    )
    required_elements: list[str] = Field(
        default_factory=list,
        description="Phrases the skill requires in every such answer (an owner, a review date, a verdict).",
    )


class Limits(_Strict):
    max_turns: int | None = None


class Eval(_Strict):
    required_tools: list[RequiredTool] = Field(default_factory=list)
    required_tool_calls: list[RequiredToolCall] = Field(default_factory=list)
    reference_trace: list[RequiredTool] | None = None
    reference: list[RequiredTool] | None = Field(None, description="Older name of reference_trace.")
    calls_match_reference: bool = False
    reference_answer: str | None = None
    required_widgets: list[RequiredWidget] = Field(default_factory=list)
    required_generated_widgets: list[RequiredGeneratedWidget] = Field(default_factory=list)
    required_tabs: list[str] = Field(default_factory=list)
    required_tab_names: list[str] = Field(default_factory=list)
    required_dashboard_name_contains: str | None = None
    required_layouts: list[RequiredLayout] = Field(default_factory=list)
    names_graded: Literal["contains", "exact"] = Field(
        "contains",
        description="How titles and names the agent writes are graded (tab titles, the dashboard's name, note "
        "and app names): 'contains', the source benchmark's rule (a name containing the phrase passes, so a "
        "title stuffed with every candidate does too), or 'exact': equal up to case, spacing and punctuation, "
        "or one of accepted_names.",
    )
    accepted_names: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Under names_graded 'exact', other titles accepted for a required one (its phrase as key).",
    )
    counterfactual: Literal["required", "off"] = Field(
        "off",
        description="Whether certification varies each hidden value's source (the counterfactual gate): "
        "'required' — every hidden value must come from a source that, saying something else, changes the right "
        "answer; 'off' — the gate reports the task as not asking for it. A taskset sets it in its defaults.",
    )
    required_widget_defs: list[RequiredWidgetDef] = Field(default_factory=list)
    required_app_defs: list[RequiredAppDef] = Field(default_factory=list)
    required_tool_results: list[RequiredToolResult] = Field(default_factory=list)
    required_resource_reads: list[RequiredResourceRead] = Field(default_factory=list)
    required_values_in_answer: list[str] = Field(default_factory=list)
    answer_must_not_contain: list[str] = Field(default_factory=list)
    judged_dashboard: str | None = Field(
        None,
        description="Name of the dashboard the state checks judge; unset, "
        "the one active when the episode ends (the source benchmark's rule).",
    )
    max_unrequested_widgets: int | None = Field(
        None, description="Cap on widgets of the judged dashboard that no requirement accounts for."
    )
    judge_evaluation: StrictBool | JudgeEvaluation | None = Field(
        None,
        description="The answer is judged: true (the source's form) or the key points, skill and required "
        "elements; needs reference_answer, the exemplar.",
    )
    layout: LayoutRules = Field(default_factory=LayoutRules)
    trace_checks: TraceRules = Field(default_factory=TraceRules)
    workspace_checks: WorkspaceRules = Field(default_factory=WorkspaceRules)
    app_structure: AppStructure = Field(default_factory=AppStructure)
    max_turns: int | None = None
    limits: Limits | None = None

    @field_validator("judge_evaluation", mode="before")
    @classmethod
    def _judge_form(cls, value: Any) -> Any:
        """An object is the key points' form: its own errors are reported by key, not as a failed union."""
        if isinstance(value, dict):
            try:
                return JudgeEvaluation.model_validate(value)
            except ValidationError as exc:
                loc, msg = _first_error(exc)
                raise ValueError(f"{loc}: {msg}") from None
        return value

    @model_validator(mode="after")
    def _judged_needs_exemplar(self) -> Eval:
        if self.judged is not None and not (self.reference_answer or "").strip():
            raise ValueError(
                "judge_evaluation needs reference_answer: the exemplar answer the judge is anchored to"
            )
        return self

    @property
    def judged(self) -> JudgeEvaluation | None:
        """What the judge grades, when the answer is judged (`judge_evaluation: true` grades against the exemplar
        alone); None when it is not."""
        spec = self.judge_evaluation
        if spec is None or spec is False:
            return None
        return JudgeEvaluation() if spec is True else spec

    @property
    def turn_budget(self) -> int | None:
        if self.max_turns is not None:
            return self.max_turns
        return self.limits.max_turns if self.limits else None

    def reference_steps(self) -> list[RequiredTool]:
        """What the oracle replays: every required_tools step (optional ones included), else the trace."""
        return list(self.required_tools or self.reference_trace or self.reference or [])

    def graded_steps(self) -> list[RequiredTool]:
        """The reference steps that are required calls: non-optional required_tools, or, when the task grades
        its reference trace (calls_match_reference), the trace's non-optional tool calls. Outcome work is graded
        by the state it leaves, never as a call."""
        if self.required_tools:
            return [s for s in self.required_tools if not s.optional and not s.outcome]
        if self.calls_match_reference:
            return [
                s
                for s in self.reference_steps()
                if not s.optional and not s.outcome and s.tool != "final_answer"
            ]
        return []


class HiddenValue(_Strict):
    """A value the level withholds from its prompt (leak gate); `source` names where a Ground fact lives."""

    kind: Literal["target", "carried", "planted"]
    value: str
    source: str | None = None
    # a target that stands between twin instances of its own widget (`value` names them all): the values its
    # instance is seeded on, which tell it from the twins — what the level hides is that instance
    instance: dict[str, Any] | None = None


class StandIn(_Strict):
    """At Execute, the widget the level works on in place of the story's first target (`origin`/`widget_id`
    stands in for `for_widget_id`): naming the target there would state what Find hides."""

    origin: str
    widget_id: str
    name: str
    for_widget_id: str
    for_name: str


class TaskMeta(_Strict):
    persona: str | None = None
    story: str | None = None
    level: int | None = None
    level_name: str | None = None
    hidden: list[HiddenValue] = Field(default_factory=list)
    authored_by: str | None = None
    stands_in: StandIn | None = None
    # a level other than Find that works on the target Find hides because nothing stands in for it there (no
    # other widget takes the values the level hides on it, or none the level's rung solves): why, in words; the
    # fairness review reports such a level as minor instead of blocking it
    on_target: str | None = None


class Task(_Strict):
    id: str
    difficulty: Literal["level0", "level1", "level2", "level3", "level4"]
    prompt: str
    setup: Setup = Field(default_factory=Setup)
    eval: Eval = Field(default_factory=Eval)
    category: str | None = None
    family: str | None = None
    persona: str | None = None
    story: str | None = None
    level_name: str | None = None
    meta: TaskMeta | None = None

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not SAFE_ID.match(value):
            raise ValueError(
                "id must be letters, digits, '_', '-' or '.', start with a letter or digit, and "
                "contain no path separator"
            )
        return value

    @field_validator("prompt")
    @classmethod
    def _prompt_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("prompt must not be empty")
        return value

    @property
    def level(self) -> int:
        return LEVELS.index(self.difficulty)


class TaskSetManifest(_Strict):
    taskset_id: str
    description: str = ""
    visibility: str | None = None
    content_sha256: str | None = None
    workspace_baseline: str | None = None
    workspace_backends: list[str] | None = None
    workspace_skills: list[str] | None = None
    world: str | None = None
    judge: str | None = Field(
        None,
        description="The judge of this taskset's judged answers: `rubric` (the embedded deterministic default) "
        "or `openai:<model>`; certify requires its audit on record.",
    )
    task_defaults: dict[str, Any] = Field(default_factory=dict)


class TaskFileError(Exception):
    """A task or taskset file that cannot be used, with the file and the field that is wrong."""

    def __init__(self, file: str, field: str, message: str) -> None:
        super().__init__(f"{file}: {field}: {message}")
        self.file = file
        self.field = field
        self.message = message


# The judge audit's record (certify/judge/audit.py) lives beside the manifest; it is not a task.
JUDGE_AUDIT_FILE = "judge-audit.json"
NOT_TASKS = frozenset({"taskset.json", "certificates.json", JUDGE_AUDIT_FILE})
# Folders of a taskset that hold records about tasks, not tasks (calibration records and transcripts).
RECORD_FOLDERS = frozenset({"calibration", "reviews"})


def task_files_under(folder: Path) -> list[Path]:
    """The task files under `folder`: JSON files that are not manifests, locks or records."""
    return sorted(
        p
        for p in folder.rglob("*.json")
        if p.name not in NOT_TASKS
        and not p.name.startswith(".")
        and not RECORD_FOLDERS & set(p.relative_to(folder).parts[:-1])
    )


def deep_merge(defaults: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` wins key by key; nested objects merge recursively; lists are replaced whole. The result
    shares nothing with either input (a task's `Any` fields keep references to what they were built from)."""
    out = _copy_json(defaults)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = _copy_json(value)
    return out


def _copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data; several times cheaper than `copy.deepcopy`, which every draft paid
    on every parse. Anything else falls back to `copy.deepcopy`."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return copy.deepcopy(value)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(root)"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "missing":
        msg = "required key is missing"
    return loc, msg


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(str(path), "(file)", f"cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TaskFileError(str(path), "(file)", "not UTF-8 text") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(
            str(path), f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise TaskFileError(str(path), "(root)", "JSON nested too deeply") from exc


class TaskSet:
    """A taskset folder: its manifest and the task files under it."""

    def __init__(self, root: Path, manifest: TaskSetManifest) -> None:
        self.root = root
        self.manifest = manifest

    @classmethod
    def load(cls, root: Path) -> TaskSet:
        path = root / "taskset.json"
        raw = read_json(path)
        if not isinstance(raw, dict):
            raise TaskFileError(str(path), "(root)", "must be a JSON object")
        try:
            manifest = TaskSetManifest.model_validate(raw)
        except ValidationError as exc:
            loc, msg = _first_error(exc)
            raise TaskFileError(str(path), loc, msg) from exc
        return cls(root, manifest)

    @classmethod
    def find(cls, start: Path) -> TaskSet | None:
        """The taskset a file or folder belongs to: the nearest taskset.json at or above it."""
        here = start if start.is_dir() else start.parent
        for folder in [here, *here.parents]:
            if (folder / "taskset.json").is_file():
                return cls.load(folder)
        return None

    def task_files(self) -> list[Path]:
        return task_files_under(self.root)

    def world(self, override: Path | None = None) -> World:
        """The world this taskset's tasks run in: the override, else the one its manifest names, else the
        built-in default."""
        return World.load(override or self.manifest.world or DEFAULT_WORLD)

    def defaults(self) -> dict[str, Any]:
        """task_defaults plus the manifest's setup axes (a task's own value wins on each axis)."""
        out = copy.deepcopy(self.manifest.task_defaults)
        setup = (
            out.setdefault("setup", {})
            if any(
                v is not None
                for v in (
                    self.manifest.workspace_baseline,
                    self.manifest.workspace_backends,
                    self.manifest.workspace_skills,
                )
            )
            else None
        )
        if setup is not None:
            for key in ("workspace_baseline", "workspace_backends", "workspace_skills"):
                value = getattr(self.manifest, key)
                if value is not None:
                    setup.setdefault(key, value)
        return out


def parse_task(raw: Any, file: str, defaults: dict[str, Any] | None = None) -> Task:
    if not isinstance(raw, dict):
        raise TaskFileError(file, "(root)", "a task must be a JSON object")
    try:
        merged = deep_merge(defaults, raw) if defaults else raw
        return Task.model_validate(merged)
    except ValidationError as exc:
        loc, msg = _first_error(exc)
        raise TaskFileError(file, loc, msg) from exc
    except RecursionError as exc:
        raise TaskFileError(file, "(root)", "nested too deeply") from exc


def load_task(path: Path, taskset: TaskSet | None = None) -> Task:
    """Load one task file, merging its taskset's defaults (found upward when not given)."""
    if taskset is None:
        taskset = TaskSet.find(path)
    return parse_task(read_json(path), str(path), taskset.defaults() if taskset else None)
