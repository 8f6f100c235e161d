"""The certificate lock of a taskset (`<taskset>/certificates.json`).

Per task: the content hash of the file it certifies, the fingerprints of everything certification depended on
(the grader's and the simulator's code, the world files, the taskset defaults), the gate results, and the
reviewers' verdicts; per persona: the sources hash and the calibration summary. A fingerprint that no longer
matches marks the certificate stale; `taskforge recertify` re-checks exactly those.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from simulator import World

from .task import TaskFileError

LOCK_FILE = "certificates.json"
_PACKAGES = Path(__file__).resolve().parents[1]
# Everything a verdict can depend on besides the registered checks themselves: the whole grader package (its
# private helpers included), the gates and what they run (the equivalence variants, the shortcut agents, the
# episode rules, the task model), the judge (its template, the rubric, the audit the judge gate reads), the trial
# record and the calibration analysis; and the simulator's code.
GRADER_SOURCES = (
    "certify/grader/*.py",
    "certify/judge/*.py",
    "certify/gates.py",
    "certify/equivalence.py",
    "certify/shortcuts/*.py",
    "certify/agents/base.py",
    "certify/task.py",
    "certify/episode.py",
    "certify/trial.py",
    "certify/calibration/records.py",
    "certify/calibration/analysis.py",
    "certify/calibration/run.py",
    "certify/calibration/files.py",
    "certify/calibration/stats.py",
)
# The check families: a module of checks counts only for the tasks that use one of its checks (a check runs for a
# task only when the task sets one of the eval fields it is conditional on, see `certify.grader.check`), with the
# grader modules it imports; everything else in GRADER_SOURCES is the shared core and counts for every task.
FAMILY_SOURCES = ("certify/grader/*_checks.py",)
SIMULATOR_SOURCES = ("simulator/*.py",)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Fingerprints(_Strict):
    grader: str
    simulator: str
    world: str
    defaults: str
    checks: dict[str, str] = Field(
        default_factory=dict,
        description="Per check family the task uses (its module's short name): that family's code.",
    )


class Review(_Strict):
    verdict: str
    by: str
    at: str
    note: str = ""
    flag: str | None = None


class TaskCertificate(_Strict):
    path: str
    persona: str | None = None
    story: str | None = None
    level: str | None = None
    content_sha256: str
    fingerprints: Fingerprints
    certified: bool
    gates: dict[str, dict[str, Any]]
    reviews: list[Review] = Field(default_factory=list)
    certified_at: str


class PersonaRecord(_Strict):
    """What one persona run wrote: enough to check, from the files alone, that they are the run's output."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    inputs_sha256: str = Field(validation_alias=AliasChoices("inputs_sha256", "sources_sha256"))
    inputs: dict[str, Any] = Field(default_factory=dict)
    tasks: list[str]
    files: dict[str, str] = Field(default_factory=dict)
    calibration: dict[str, Any] = Field(default_factory=dict)
    updated_at: str


class CertificateLock(_Strict):
    taskset: str
    version: int = 1
    tasks: dict[str, TaskCertificate] = Field(default_factory=dict)
    personas: dict[str, PersonaRecord] = Field(default_factory=dict)

    @classmethod
    def load(cls, taskset_root: Path) -> CertificateLock | None:
        path = taskset_root / LOCK_FILE
        if not path.is_file():
            return None
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise TaskFileError(str(path), "(file)", f"cannot read: {exc.strerror or exc}") from exc
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: bytes | str, where: str) -> CertificateLock:
        """A lock from its bytes (on disk or at a commit); a corrupt one is an error naming file and field."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "(root)"
            raise TaskFileError(where, loc, err["msg"]) from exc

    def render(self) -> bytes:
        payload = self.model_dump(mode="json", by_alias=False)
        payload["tasks"] = dict(sorted(payload["tasks"].items()))
        payload["personas"] = dict(sorted(payload["personas"].items()))
        return (json.dumps(payload, indent=2, sort_keys=False) + "\n").encode("utf-8")

    def write(self, taskset_root: Path) -> Path:
        path = taskset_root / LOCK_FILE
        path.write_bytes(self.render())
        return path


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def sha256_text(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _glob(patterns: tuple[str, ...]) -> list[Path]:
    files: set[Path] = set()
    for pattern in patterns:
        files.update(_PACKAGES.glob(pattern))
    return sorted(files)


def _hash_sources(patterns: tuple[str, ...], exclude: tuple[str, ...] = ()) -> str:
    return _hash_paths(sorted(set(_glob(patterns)) - set(_glob(exclude))))


def _hash_paths(files: list[Path]) -> str:
    stamps = tuple((str(path), *_stamp(path)) for path in files)
    return _hash_files(str(_PACKAGES), stamps)


def _stamp(path: str | Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=16)
def _hash_files(packages: str, stamps: tuple[tuple[str, int, int], ...]) -> str:
    """The files' digest, read again only when one of them changes (stamped by mtime and size): a run asks for
    the fingerprints at its start and again when it writes its lock."""
    digest = hashlib.sha256()
    for path, _mtime, _size in stamps:
        digest.update(
            str(Path(path).relative_to(packages)).encode() + b"\0" + Path(path).read_bytes() + b"\0"
        )
    return digest.hexdigest()


def _source(fn: Any) -> str:
    try:
        file = inspect.getsourcefile(fn)
        return _cached_source(fn, *(_stamp(file) if file else (0, 0)))
    except (OSError, TypeError):
        return repr(fn)


@lru_cache(maxsize=256)
def _cached_source(fn: Any, _mtime: int, _size: int) -> str:
    return inspect.getsource(fn)


def grader_fingerprint(registry: dict[str, Any] | None = None) -> str:
    """The grader's shared core as it will run: every grader source but the check families', which count per task
    (`family_fingerprints`). `registry` is accepted for symmetry with `family_fingerprints`; the core does not
    depend on which checks are registered."""
    return _hash_sources(GRADER_SOURCES, exclude=FAMILY_SOURCES)


def family_fingerprints(ev: Any, registry: dict[str, Any] | None = None) -> dict[str, str]:
    """Per check family a task with eval `ev` uses: the family's code — its module, the other check modules it
    imports, and the source and condition of each of its registered checks (so swapping one changes it).

    A family is the module a check is defined in; the task uses it when one of its checks applies to the task
    (`certify.grader.applies`: grading skips the others, so their code cannot move this task's verdict)."""
    from .grader import CHECKS, applies, check_when

    families: dict[str, list[tuple[str, Any]]] = {}
    used: set[str] = set()
    for code, fn in sorted((registry or CHECKS).items()):
        module = getattr(fn, "__module__", "") or ""
        families.setdefault(module, []).append((code, fn))
        if applies(fn, ev):
            used.add(module)
    out = {}
    for module, checks in sorted(families.items()):
        if module not in used:
            continue
        digest = hashlib.sha256(_hash_paths(_family_files(module)).encode())
        for code, fn in checks:
            digest.update(f"{code}\0{_source(fn)}\0{check_when(fn)}\0".encode())
        out[module.rpartition(".")[2] or module] = digest.hexdigest()
    return out


def _family_files(module: str) -> list[Path]:
    """The family module's file and, transitively, every check-family module it imports (a helper it borrows
    from another family is part of its code); the core's files are in the core fingerprint already."""
    family = set(_glob(FAMILY_SOURCES))
    seen: list[Path] = []
    todo = [_module_file(module)]
    while todo:
        path = todo.pop()
        if path is None or path in seen or path not in family:
            continue
        seen.append(path)
        todo.extend(_imported_files(path))
    return sorted(seen)


def _module_file(module: str) -> Path | None:
    path = _PACKAGES / Path(*module.split("."))
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _imported_files(path: Path) -> list[Path]:
    return list(_parsed_imports(path, *_stamp(path)))


@lru_cache(maxsize=256)
def _parsed_imports(path: Path, _mtime: int, _size: int) -> tuple[Path, ...]:
    """The project files `path` imports, parsed again only when it changes (stamped by mtime and size, as the
    hashes are): a run asks for every task's family fingerprints when it writes its lock, and parsing the family
    modules anew for each task was 0.56 s of CPU for a persona's 20 tasks (about 40% of an LLM persona run's CPU
    in bench llm_authoring), all of it after the last model call."""
    import ast

    package = path.relative_to(_PACKAGES).parent.parts
    out: list[Path | None] = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            parts = [*base, *(node.module or "").split(".")] if node.module else base
            out.append(_module_file(".".join(p for p in parts if p)))
            out += [_module_file(".".join([*parts, alias.name])) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [_module_file(alias.name) for alias in node.names]
    return tuple(p for p in out if p is not None)


@lru_cache(maxsize=1)
def simulator_fingerprint() -> str:
    return _hash_sources(SIMULATOR_SOURCES)


def code_fingerprints(registry: dict[str, Any] | None = None) -> tuple[str, str]:
    """(grader, simulator) fingerprints of the code certification runs with."""
    return grader_fingerprint(registry), simulator_fingerprint()


def fingerprints(
    world: World, defaults: dict[str, Any], registry: dict[str, Any] | None = None, task: Any = None
) -> Fingerprints:
    """What a certificate is issued under: the shared code, world and defaults, and — for `task` — the code of
    each check family it uses. Without a task, the shared part alone (`CodePrints.of` adds a task's families)."""
    grader, simulator = code_fingerprints(registry)
    return Fingerprints(
        grader=grader,
        simulator=simulator,
        world=world.fingerprint,
        defaults=sha256_text(json.dumps(defaults, sort_keys=True)),
        checks=family_fingerprints(task.eval, registry) if task is not None else {},
    )


@dataclass(frozen=True)
class CodePrints:
    """The fingerprints certification runs under now, per task: the shared part once, each task's check
    families from its own eval (read with the taskset's defaults, as certification reads it)."""

    shared: Fingerprints
    defaults: dict[str, Any]
    registry: dict[str, Any] | None = None

    def of(self, task: Any) -> Fingerprints:
        return self.shared.model_copy(update={"checks": family_fingerprints(task.eval, self.registry)})

    def of_raw(self, raw: Any, where: str) -> Fingerprints:
        """A task file's fingerprints; one that does not parse has none of its own (its certificate is stale)."""
        from .task import parse_task

        try:
            return self.of(parse_task(raw, where, self.defaults))
        except (TaskFileError, TypeError, ValueError):
            return self.shared


def code_prints(world: World, defaults: dict[str, Any], registry: dict[str, Any] | None = None) -> CodePrints:
    return CodePrints(fingerprints(world, defaults, registry), defaults, registry)


def task_content_hash(raw: dict[str, Any]) -> str:
    return sha256_text(json.dumps(raw, sort_keys=True, ensure_ascii=False))
