"""The options more than one command takes, declared once: a flag with one meaning has one type and one help
text wherever it appears, and a command takes it as `world: WorldDir = None` (`--taskset` has three meanings:
a folder name under --tasksets-dir, the folder itself, a filter).

Options that travel together are a group: a frozen dataclass whose fields are the options, taken by a command
as one parameter (`model: ModelFlags = ModelFlags()`) under `@grouped`; typer sees the fields in the
parameter's place, the command gets the record. The model options (how to reach a model and how to talk to it)
are the group `ModelFlags`: adding one (issue 24: --model, --max-tokens, --concurrency for every command that
talks to a model) is a field here and its entry in `MODEL_FLAGS`, and a command joins by taking the group.

Nothing heavy is imported here: `taskforge --help` stays fast.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

TASKSET = "workspace_tasks"
TASKSETS_DIR = Path("tasksets")
CHECKPOINTS = Path(".taskforge") / "checkpoints.sqlite"

# ------------------------------------------------------------------------------------------- where things are
WorldDir = Annotated[
    Path | None,
    typer.Option(
        "--world",
        help="World directory (default: the taskset's, else the built-in default world).",
    ),
]
TasksetName = Annotated[str, typer.Option("--taskset", help="Taskset folder name.")]
TasksetOnly = Annotated[str | None, typer.Option("--taskset", help="Only this taskset.")]
TasksetsDir = Annotated[Path, typer.Option("--tasksets-dir", help="Where tasksets live.")]
_taskset_folder = typer.Option("--taskset", help="Taskset folder (holds taskset.json).", show_default=False)
TasksetFolder = Annotated[Path, _taskset_folder]
TasksetFolderOrNone = Annotated[Path | None, _taskset_folder]
Sources = Annotated[Path, typer.Option("--sources", help="Folder holding personas/ and stories/.")]
SkillsDir = Annotated[Path, typer.Option("--skills-dir", help="Role skills (lessons are appended).")]
RunsDir = Annotated[
    Path | None, typer.Option("--runs-dir", help="The folder of evaluation runs (default .taskforge/runs).")
]
Checkpoints = Annotated[
    Path, typer.Option("--checkpoints", help="The SQLite checkpoint store (paused runs).")
]
CheckpointUrl = Annotated[
    str | None, typer.Option("--checkpoint-url", help="postgresql://… checkpoint store.")
]

# ---------------------------------------------------------------------------------------------- what to do
PersonaOnly = Annotated[
    str | None,
    typer.Option("--persona", help="Only this persona's tasks (default: every task of the taskset)."),
]
FrontierAgent = Annotated[str | None, typer.Option("--frontier-agent", help="Probe for dead rungs.")]
MinAttempts = Annotated[
    int | None,
    typer.Option(
        "--min-attempts",
        min=1,
        help="Valid calibration attempts per agent a level needs to be measured (default 3).",
    ),
]
Strict = Annotated[bool, typer.Option("--strict", help="Fail on warnings too.")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, help="Episodes at once.")]


# -------------------------------------------------------------------------------------------- model options
class Mode(StrEnum):
    json = "json"
    tools = "tools"


class ParseMode(StrEnum):
    strict = "strict"
    lenient = "lenient"


BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (default: $OPENAI_BASE_URL, else "
        "api.openai.com).",
    ),
]
Model = Annotated[str | None, typer.Option("--model", help="Model for the LLM drivers.")]
ModeOption = Annotated[
    Mode | None,
    typer.Option(
        "--mode", help="openai: json (one JSON action per reply; the default) or tools (native tool calls)."
    ),
]
Parse = Annotated[
    ParseMode | None,
    typer.Option(
        "--parse",
        help="openai: strict (a reply must be exactly the JSON action) or lenient (prose or code fences around "
        "it are tolerated; the default).",
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout", min=0.001, help="openai: seconds per model request before it is retried (default 60)."
    ),
]

# LLMConfig field -> the flag that sets it (the order in which a message lists them).
MODEL_FLAGS = {
    "mode": "--mode",
    "parse": "--parse",
    "base_url": "--base-url",
    "request_timeout_s": "--timeout",
}


@dataclass(frozen=True)
class ModelFlags:
    """What a command's model options said; None is "not given", so a stored run's own settings or the
    environment apply. Field names are LLMConfig's."""

    mode: ModeOption = None
    parse: Parse = None
    base_url: BaseUrl = None
    request_timeout_s: Timeout = None

    def config(self) -> dict[str, Any]:
        """The LLMConfig fields that were given."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: v.value if isinstance(v, Enum) else v for k, v in given.items() if v is not None}


def flag_names(config_keys: Any) -> str:
    """The flags of LLMConfig fields, for a message ("--mode, --parse")."""
    return ", ".join(MODEL_FLAGS.get(k, k) for k in config_keys)


# ----------------------------------------------------------------------------------------------- groups
Command = TypeVar("Command", bound=Callable[..., Any])


def grouped(command: Command) -> Command:
    """Let `command` take groups of options: each parameter annotated with a dataclass stands for the
    dataclass's fields (their annotations are the options), in its place; the command receives the dataclass."""
    hints = get_type_hints(command, include_extras=True)
    groups: dict[str, Any] = {}
    params: list[inspect.Parameter] = []
    for param in inspect.signature(command).parameters.values():
        kind = hints.get(param.name, param.annotation)
        if not (isinstance(kind, type) and is_dataclass(kind)):
            params.append(param.replace(annotation=kind))
            continue
        groups[param.name] = kind
        own = get_type_hints(kind, include_extras=True)
        params += [
            inspect.Parameter(f.name, param.kind, default=f.default, annotation=own[f.name])
            for f in fields(kind)
        ]

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        for name, kind in groups.items():
            given[name] = kind(**{f.name: given.pop(f.name) for f in fields(kind)})
        return command(**given)

    run.__signature__ = inspect.Signature(params, return_annotation=hints.get("return"))  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run  # type: ignore[return-value]
