"""Certification: the task model, the grader, the episode runner, agents under test, gates, calibration and
re-certification. Depends on simulator/ only.

This module is the package's front door: `authoring/` imports what it needs from here (`from certify import
Task, resolve_agent`), never from a submodule, and tests/test_import_graph.py holds it to that. Names are
resolved lazily (PEP 562): importing `certify` costs nothing, and a name whose module needs an optional extra
(`serve` needs `mcp`, `openenv` needs `openenv-core`) only imports it when it is asked for. A few names are
exported under a name of their own where the module's would collide with a submodule or another export
(`evaluate_tasks`, `run_rollouts`, `recertify_taskset`, `load_run_record`, `load_calibration`,
`summarise_gates`, `summarise_parity`); `mcp_server` and `openenv_env` are exported as the modules they are,
since each is the API of its optional extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# exported name -> (module, attribute); an attribute of None is the module itself
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "words": ("certify.agents.reading", "words"),
    "Agent": ("certify.agents", "Agent"),
    "configurable": ("certify.agents", "configurable"),
    "resolve_agent": ("certify.agents", "resolve_agent"),
    "resolve_agents": ("certify.agents", "resolve_agents"),
    "Usage": ("certify.agents.base", "Usage"),
    "URI": ("certify.agents.knowledge", "URI"),
    "phrase_pattern": ("certify.agents.knowledge", "phrase_pattern"),
    "policy_value": ("certify.agents.knowledge", "policy_value"),
    "units": ("certify.agents.knowledge", "units"),
    "check_agents": ("certify.agents.llm", "check_agents"),
    "parse_arguments": ("certify.agents.parsing", "parse_arguments"),
    "top_level_objects": ("certify.agents.parsing", "top_level_objects"),
    "option_mentions": ("certify.agents.reading", "option_mentions"),
    "BM25": ("certify.agents.retrieval", "BM25"),
    "terms": ("certify.agents.retrieval", "terms"),
    "CalibrationRecord": ("certify.calibration", "CalibrationRecord"),
    "Defect": ("certify.calibration", "Defect"),
    "MIN_ATTEMPTS": ("certify.calibration", "MIN_ATTEMPTS"),
    "TrialMemo": ("certify.calibration", "TrialMemo"),
    "all_deterministic": ("certify.calibration", "all_deterministic"),
    "analyse": ("certify.calibration", "analyse"),
    "calibrate": ("certify.calibration", "calibrate"),
    "compact": ("certify.calibration", "compact"),
    "load_calibration": ("certify.calibration", "load_record"),
    "load_trials": ("certify.calibration", "load_trials"),
    "probe_dead_rungs": ("certify.calibration", "probe_dead_rungs"),
    "record_files": ("certify.calibration", "record_files"),
    "regrade": ("certify.calibration", "regrade"),
    "rehearse": ("certify.calibration", "rehearse"),
    "render_matrix": ("certify.calibration", "render_matrix"),
    "repeats_for": ("certify.calibration", "repeats_for"),
    "write_record": ("certify.calibration", "write_record"),
    "plot": ("certify.calibration.plot", "plot"),
    "png": ("certify.calibration.plot", "png"),
    "reference_calls": ("certify.episode", "reference_calls"),
    "replay": ("certify.episode", "replay"),
    "DEFAULT_RUNS_DIR": ("certify.evaluate", "DEFAULT_RUNS_DIR"),
    "RunRecord": ("certify.evaluate", "RunRecord"),
    "choose_tasks": ("certify.evaluate", "choose_tasks"),
    "current": ("certify.evaluate", "current"),
    "evaluate_tasks": ("certify.evaluate", "evaluate"),
    "invalid_reasons": ("certify.evaluate", "invalid_reasons"),
    "load_run": ("certify.evaluate", "load_run"),
    "load_run_record": ("certify.evaluate", "load_record"),
    "plan_retry": ("certify.evaluate", "plan_retry"),
    "retry_invalid": ("certify.evaluate", "retry_invalid"),
    "select_tasks": ("certify.evaluate", "select_tasks"),
    "certify_file": ("certify.gates", "certify_file"),
    "certify_task": ("certify.gates", "certify_task"),
    "collect": ("certify.gates", "collect"),
    "leaked_values": ("certify.gates", "leaked_values"),
    "states_value": ("certify.gates", "states_value"),
    "summarise_gates": ("certify.gates", "summarise"),
    "grade": ("certify.grader", "grade"),
    "expected_number": ("certify.grader.match", "expected_number"),
    "numbers_in": ("certify.grader.match", "numbers_in"),
    "text_contains": ("certify.grader.match", "text_contains"),
    "HarborExportError": ("certify.harbor", "HarborExportError"),
    "export_taskset": ("certify.harbor", "export_taskset"),
    "harbor_models": ("certify.harbor", "harbor_models"),
    "run_locally": ("certify.harbor", "run_locally"),
    "validate": ("certify.harbor", "validate"),
    "JudgeSummary": ("certify.judge", "JudgeSummary"),
    "build_judge": ("certify.judge", "build_judge"),
    "judged_tasks": ("certify.judge.audit", "judged_tasks"),
    "record_audit": ("certify.judge.audit", "record_audit"),
    "run_audit": ("certify.judge.audit", "run_audit"),
    "DEFAULT_CACHE_DIR": ("certify.judge.model", "DEFAULT_CACHE_DIR"),
    "CASES": ("certify.judge.mutants", "CASES"),
    "CertificateLock": ("certify.lock", "CertificateLock"),
    "Fingerprints": ("certify.lock", "Fingerprints"),
    "LOCK_FILE": ("certify.lock", "LOCK_FILE"),
    "PersonaRecord": ("certify.lock", "PersonaRecord"),
    "Review": ("certify.lock", "Review"),
    "TaskCertificate": ("certify.lock", "TaskCertificate"),
    "fingerprints": ("certify.lock", "fingerprints"),
    "now": ("certify.lock", "now"),
    "sha256_text": ("certify.lock", "sha256_text"),
    "task_content_hash": ("certify.lock", "task_content_hash"),
    "ConnectError": ("certify.mcp_client", "ConnectError"),
    "Endpoint": ("certify.mcp_client", "Endpoint"),
    "connect": ("certify.mcp_client", "connect"),
    "parse_header": ("certify.mcp_client", "parse_header"),
    "EpisodeHost": ("certify.mcp_server", "EpisodeHost"),
    "ServeError": ("certify.mcp_server", "ServeError"),
    "BlockingClient": ("certify.model_client", "BlockingClient"),
    "Completion": ("certify.model_client", "Completion"),
    "EndpointUnusable": ("certify.model_client", "EndpointUnusable"),
    "ModelClient": ("certify.model_client", "ModelClient"),
    "ModelConfig": ("certify.model_client", "ModelConfig"),
    "ModelError": ("certify.model_client", "ModelError"),
    "ModelUnavailable": ("certify.model_client", "ModelUnavailable"),
    "resolve_endpoint": ("certify.model_client", "resolve_endpoint"),
    "McpTarget": ("certify.parity", "McpTarget"),
    "ParityOptions": ("certify.parity", "ParityOptions"),
    "new_run_id": ("certify.parity", "new_run_id"),
    "run_parity": ("certify.parity", "run_parity"),
    "summarise_parity": ("certify.parity", "summarise"),
    "write_records": ("certify.parity", "write_records"),
    "recertify_taskset": ("certify.recertify", "recertify"),
    "RewardMode": ("certify.rewards", "RewardMode"),
    "RolloutFilter": ("certify.rollouts", "RolloutFilter"),
    "RolloutFormat": ("certify.rollouts", "RolloutFormat"),
    "RolloutSourceError": ("certify.rollouts", "RolloutSourceError"),
    "resolve_source": ("certify.rollouts", "resolve_source"),
    "run_rollouts": ("certify.rollouts", "rollouts"),
    "serialise": ("certify.rollouts", "serialise"),
    "run_battery": ("certify.shortcuts", "run_battery"),
    "SmokeError": ("certify.smoke", "SmokeError"),
    "TASKSET_ID": ("certify.smoke", "TASKSET_ID"),
    "write": ("certify.smoke", "write"),
    "MODES": ("certify.surface", "MODES"),
    "SurfaceFileError": ("certify.surface", "SurfaceFileError"),
    "diff_surfaces": ("certify.surface", "diff_surfaces"),
    "load_surface": ("certify.surface", "load_surface"),
    "next_source": ("certify.surface", "next_source"),
    "observe": ("certify.surface", "observe"),
    "pin_path": ("certify.surface", "pin_path"),
    "save_surface": ("certify.surface", "save_surface"),
    "simulator_surface": ("certify.surface", "simulator_surface"),
    "Eval": ("certify.task", "Eval"),
    "HiddenValue": ("certify.task", "HiddenValue"),
    "LEVELS": ("certify.task", "LEVELS"),
    "LEVEL_NAMES": ("certify.task", "LEVEL_NAMES"),
    "Task": ("certify.task", "Task"),
    "TaskFileError": ("certify.task", "TaskFileError"),
    "TaskMeta": ("certify.task", "TaskMeta"),
    "TaskSet": ("certify.task", "TaskSet"),
    "TaskSetManifest": ("certify.task", "TaskSetManifest"),
    "parse_task": ("certify.task", "parse_task"),
    "Trial": ("certify.trial", "Trial"),
    "replay_trial": ("certify.trial", "replay_trial"),
    "run_trial": ("certify.trial", "run_trial"),
    "WORKSPACE_ID": ("certify.workspace_server", "WORKSPACE_ID"),
    "WorkspaceHost": ("certify.workspace_server", "WorkspaceHost"),
    "bare_setup": ("certify.workspace_server", "bare_setup"),
    "verb_kind": ("certify.agents.request", "verb_kind"),
    "POLICY_NOUNS": ("certify.agents.request", "POLICY_NOUNS"),
    "reads_as_policy": ("certify.agents.request", "reads_as_policy"),
    "asked_unit": ("certify.agents.knowledge", "asked_unit"),
    "mcp_server": ("certify.mcp_server", None),
    "openenv_env": ("certify.openenv_env", None),
}

__all__ = [
    "BM25",
    "CASES",
    "DEFAULT_CACHE_DIR",
    "DEFAULT_RUNS_DIR",
    "LEVELS",
    "LEVEL_NAMES",
    "LOCK_FILE",
    "MIN_ATTEMPTS",
    "MODES",
    "POLICY_NOUNS",
    "TASKSET_ID",
    "URI",
    "WORKSPACE_ID",
    "Agent",
    "BlockingClient",
    "CalibrationRecord",
    "CertificateLock",
    "Completion",
    "ConnectError",
    "Defect",
    "Endpoint",
    "EndpointUnusable",
    "EpisodeHost",
    "Eval",
    "Fingerprints",
    "HarborExportError",
    "HiddenValue",
    "JudgeSummary",
    "McpTarget",
    "ModelClient",
    "ModelConfig",
    "ModelError",
    "ModelUnavailable",
    "ParityOptions",
    "PersonaRecord",
    "Review",
    "RewardMode",
    "RolloutFilter",
    "RolloutFormat",
    "RolloutSourceError",
    "RunRecord",
    "ServeError",
    "SmokeError",
    "SurfaceFileError",
    "Task",
    "TaskCertificate",
    "TaskFileError",
    "TaskMeta",
    "TaskSet",
    "TaskSetManifest",
    "Trial",
    "TrialMemo",
    "Usage",
    "WorkspaceHost",
    "all_deterministic",
    "analyse",
    "asked_unit",
    "bare_setup",
    "build_judge",
    "calibrate",
    "certify_file",
    "certify_task",
    "check_agents",
    "choose_tasks",
    "collect",
    "compact",
    "configurable",
    "connect",
    "current",
    "diff_surfaces",
    "evaluate_tasks",
    "expected_number",
    "export_taskset",
    "fingerprints",
    "grade",
    "harbor_models",
    "invalid_reasons",
    "judged_tasks",
    "leaked_values",
    "load_calibration",
    "load_run",
    "load_run_record",
    "load_surface",
    "load_trials",
    "mcp_server",
    "new_run_id",
    "next_source",
    "now",
    "numbers_in",
    "observe",
    "openenv_env",
    "option_mentions",
    "parse_arguments",
    "parse_header",
    "parse_task",
    "phrase_pattern",
    "pin_path",
    "plan_retry",
    "plot",
    "png",
    "policy_value",
    "probe_dead_rungs",
    "reads_as_policy",
    "recertify_taskset",
    "record_audit",
    "record_files",
    "reference_calls",
    "regrade",
    "rehearse",
    "render_matrix",
    "repeats_for",
    "replay",
    "replay_trial",
    "resolve_agent",
    "resolve_agents",
    "resolve_endpoint",
    "resolve_source",
    "retry_invalid",
    "run_audit",
    "run_battery",
    "run_locally",
    "run_parity",
    "run_rollouts",
    "run_trial",
    "save_surface",
    "select_tasks",
    "serialise",
    "sha256_text",
    "simulator_surface",
    "states_value",
    "summarise_gates",
    "summarise_parity",
    "task_content_hash",
    "terms",
    "text_contains",
    "top_level_objects",
    "units",
    "validate",
    "verb_kind",
    "words",
    "write",
    "write_record",
    "write_records",
]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'certify' has no attribute '{name}'") from None
    value = (
        importlib.import_module(module) if attr is None else getattr(importlib.import_module(module), attr)
    )
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:  # what a type checker and an editor see; at run time `__getattr__` resolves the same names
    from . import mcp_server, openenv_env
    from .agents import Agent, configurable, resolve_agent, resolve_agents
    from .agents.base import Usage
    from .agents.knowledge import URI, asked_unit, phrase_pattern, policy_value, units
    from .agents.llm import check_agents
    from .agents.parsing import parse_arguments, top_level_objects
    from .agents.reading import option_mentions, words
    from .agents.request import POLICY_NOUNS, reads_as_policy, verb_kind
    from .agents.retrieval import BM25, terms
    from .calibration import (
        MIN_ATTEMPTS,
        CalibrationRecord,
        Defect,
        TrialMemo,
        all_deterministic,
        analyse,
        calibrate,
        compact,
        load_trials,
        probe_dead_rungs,
        record_files,
        regrade,
        rehearse,
        render_matrix,
        repeats_for,
        write_record,
    )
    from .calibration import load_record as load_calibration
    from .calibration.plot import plot, png
    from .episode import reference_calls, replay
    from .evaluate import (
        DEFAULT_RUNS_DIR,
        RunRecord,
        choose_tasks,
        current,
        invalid_reasons,
        load_run,
        plan_retry,
        retry_invalid,
        select_tasks,
    )
    from .evaluate import evaluate as evaluate_tasks
    from .evaluate import load_record as load_run_record
    from .gates import certify_file, certify_task, collect, leaked_values, states_value
    from .gates import summarise as summarise_gates
    from .grader import grade
    from .grader.match import expected_number, numbers_in, text_contains
    from .harbor import HarborExportError, export_taskset, harbor_models, run_locally, validate
    from .judge import JudgeSummary, build_judge
    from .judge.audit import judged_tasks, record_audit, run_audit
    from .judge.model import DEFAULT_CACHE_DIR
    from .judge.mutants import CASES
    from .lock import (
        LOCK_FILE,
        CertificateLock,
        Fingerprints,
        PersonaRecord,
        Review,
        TaskCertificate,
        fingerprints,
        now,
        sha256_text,
        task_content_hash,
    )
    from .mcp_client import ConnectError, Endpoint, connect, parse_header
    from .mcp_server import EpisodeHost, ServeError
    from .model_client import (
        BlockingClient,
        Completion,
        EndpointUnusable,
        ModelClient,
        ModelConfig,
        ModelError,
        ModelUnavailable,
        resolve_endpoint,
    )
    from .parity import McpTarget, ParityOptions, new_run_id, run_parity, write_records
    from .parity import summarise as summarise_parity
    from .recertify import recertify as recertify_taskset
    from .rewards import RewardMode
    from .rollouts import RolloutFilter, RolloutFormat, RolloutSourceError, resolve_source, serialise
    from .rollouts import rollouts as run_rollouts
    from .shortcuts import run_battery
    from .smoke import TASKSET_ID, SmokeError, write
    from .surface import (
        MODES,
        SurfaceFileError,
        diff_surfaces,
        load_surface,
        next_source,
        observe,
        pin_path,
        save_surface,
        simulator_surface,
    )
    from .task import (
        LEVEL_NAMES,
        LEVELS,
        Eval,
        HiddenValue,
        Task,
        TaskFileError,
        TaskMeta,
        TaskSet,
        TaskSetManifest,
        parse_task,
    )
    from .trial import Trial, replay_trial, run_trial
    from .workspace_server import WORKSPACE_ID, WorkspaceHost, bare_setup
