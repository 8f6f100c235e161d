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
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints, overload

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
Host = Annotated[str, typer.Option("--host", help="Address to bind (serve: with --transport http).")]
Port = Annotated[
    int, typer.Option("--port", min=0, max=65535, help="Port to bind (0 picks a free one; serve: with http).")
]


# -------------------------------------------------------------------------------------------- model options
# The values of a choice option, as an enum so that typer lists and checks them (the functional form: a choice
# is its values and nothing else).
Mode = StrEnum("Mode", ["json", "tools"])
ParseMode = StrEnum("ParseMode", ["strict", "lenient"])


BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (default: $OPENAI_BASE_URL, else "
        "api.openai.com).",
    ),
]
Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="The model (default $TASKFORGE_MODEL, else $OPENAI_MODEL); for eval and calibrate, `--agent "
        "openai --model M` is `--agent openai:M`.",
    ),
]
ModeOption = Annotated[
    Mode | None,
    typer.Option(
        "--mode",
        help="openai agents: json (one JSON action per reply; the default) or tools (native tool calls) "
        "($TASKFORGE_MODE).",
    ),
]
Parse = Annotated[
    ParseMode | None,
    typer.Option(
        "--parse",
        help="openai agents: strict (a reply must be exactly the JSON action) or lenient (prose or code "
        "fences around it are tolerated; the default) ($TASKFORGE_PARSE).",
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="Seconds per model request before it is retried (default 60 for agents, 180 for the authoring "
        "roles, 120 for a judge; $TASKFORGE_TIMEOUT).",
    ),
]
MaxTokens = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Output cap per model reply, sent on every request as max_completion_tokens (or max_tokens "
        "where a server refuses that name); default 4096 ($TASKFORGE_MAX_TOKENS). Without one a local "
        "server generates until its context is full.",
    ),
]
ModelConcurrency = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        min=1,
        help="Model requests at once: episodes (eval, calibrate) and judged cases (judge audit), default 4; "
        "role calls (author, review fix), default 32 ($TASKFORGE_CONCURRENCY). A small local server wants 1.",
    ),
]

# ModelFlags field -> the environment variable read when the flag is not given. The endpoint and key are read
# by the model client itself (OPENAI_BASE_URL, OPENAI_API_KEY), the model by the commands (TASKFORGE_MODEL).
MODEL_ENV = {
    "mode": "TASKFORGE_MODE",
    "parse": "TASKFORGE_PARSE",
    "request_timeout_s": "TASKFORGE_TIMEOUT",
    "max_tokens": "TASKFORGE_MAX_TOKENS",
    "concurrency": "TASKFORGE_CONCURRENCY",
}
# ModelFlags field -> its flag (the order in which a message lists them).
MODEL_FLAGS = {
    "model": "--model",
    "mode": "--mode",
    "parse": "--parse",
    "base_url": "--base-url",
    "request_timeout_s": "--timeout",
    "max_tokens": "--max-tokens",
    "concurrency": "--concurrency",
}
DEFAULT_CONCURRENCY = 4
# The fields that configure an openai:<model> agent (certify LLMConfig's names).
AGENT_FIELDS = ("mode", "parse", "base_url", "request_timeout_s", "max_tokens")


@dataclass(frozen=True)
class ModelFlags:
    """The model options of every command that talks to a model, declared once. None is "not given", so a
    stored run's own settings, the environment (MODEL_ENV) or the component's default apply."""

    model: Model = None
    base_url: BaseUrl = None
    mode: ModeOption = None
    parse: Parse = None
    request_timeout_s: Timeout = None
    max_tokens: MaxTokens = None
    concurrency: ModelConcurrency = None

    def given(self) -> dict[str, Any]:
        """The flags given on the command line, by field name."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: v.value if isinstance(v, Enum) else v for k, v in out.items() if v is not None}

    def resolved(self, env: Mapping[str, str] | None = None) -> ModelFlags:
        """The flags with the environment filling what was not given; a bad value names its variable."""
        env = os.environ if env is None else env
        filled: dict[str, Any] = {}
        for name, var in MODEL_ENV.items():
            raw = (env.get(var) or "").strip()
            if getattr(self, name) is not None or not raw:
                continue
            kind = {"mode": Mode, "parse": ParseMode, "request_timeout_s": float}.get(name, int)
            try:
                value = kind(raw)
            except ValueError:
                raise ValueError(f"${var}={raw!r} is not a valid {MODEL_FLAGS[name]} value") from None
            if isinstance(value, (int, float)) and value <= 0:
                raise ValueError(f"${var}={raw!r}: {MODEL_FLAGS[name]} must be positive")
            filled[name] = value
        model = self.model or (env.get("TASKFORGE_MODEL") or env.get("OPENAI_MODEL") or "").strip() or None
        return replace(self, model=model, **filled)

    def config(self) -> dict[str, Any]:
        """The given agent settings as certify LLMConfig fields (what a stored run records)."""
        return {k: v for k, v in self.given().items() if k in AGENT_FIELDS}

    def agent_config(self) -> dict[str, Any]:
        """Agent settings with the environment filled in."""
        return self.resolved().config()

    def client_config(self) -> dict[str, Any]:
        """The settings of a model client (ModelConfig field names: the authoring roles, the judge), the
        environment filled in."""
        given = self.resolved().given()
        names = {
            "base_url": "base_url",
            "request_timeout_s": "timeout_s",
            "max_tokens": "max_completion_tokens",
        }
        return {names[k]: v for k, v in given.items() if k in names}

    def workers(self) -> int:
        return self.resolved().concurrency or DEFAULT_CONCURRENCY

    @overload
    def agent(self, name: str) -> str: ...
    @overload
    def agent(self, name: None) -> None: ...
    def agent(self, name: str | None) -> str | None:
        """The agent name with --model applied: `openai` plus a model is `openai:<model>`; a model given
        beside an agent that names another is refused."""
        if name is None:
            return None
        model = self.model
        if name == "openai":
            model = model or self.resolved().model
            if not model:
                raise ValueError(
                    "--agent openai needs a model: --model M, $TASKFORGE_MODEL or openai:<model>"
                )
            return f"openai:{model}"
        if model is not None:
            if not name.startswith("openai:"):
                raise ValueError(f"--model only applies to openai agents, not '{name}'")
            if name.partition(":")[2] != model:
                raise ValueError(f"--agent {name} and --model {model} name different models")
        return name


def flag_names(config_keys: Any) -> str:
    """The flags of ModelFlags / LLMConfig fields, for a message ("--mode, --parse")."""
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
