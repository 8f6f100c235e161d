"""Tasks as Harbor tasks (`taskforge export harbor`), so Harbor's runners (local Docker, Daytona, Modal, ...) run
them at scale with any agent Harbor supports.

One folder per task, in Harbor's task format (`harbor.models.task`; the package needs Python >= 3.12):

- `task.toml` (Harbor's `TaskConfig`, written by its own serializer): the name `<org>/<task id>`, description and
  keywords, `[metadata]` (level, persona, story, turn budget, the task file's and its certificate's hashes), the
  agent's and verifier's timeouts from the turn budget, the workspace MCP server the agent is given
  (`[[environment.mcp_servers]]`, Streamable HTTP at `http://workspace:8000/tasks/<id>/mcp`), a healthcheck that
  holds the agent back until the server answers, and a separate verifier fed by a collect hook.
- `instruction.md`: the request and the episode's rules, then the system prompt our harness's tools mode sends
  (`certify.agents.llm.first_message` and `system_prompt`, the one source of that text).
- `environment/`: the agent's container (`Dockerfile`, Python for the oracle's client) and, in
  `docker-compose.yaml`, the `workspace` sidecar built from `environment/workspace/` (this package's source
  and a one-task taskset; it makes no outbound call) running `taskforge serve`; `main` starts once it is healthy.
- `tests/`: the verifier's own image. After the agent phase Harbor stops the agent's container, runs the collect
  hook in the sidecar (`collect.sh` stops the server, which grades every open episode), copies the sidecar's run
  to the verifier, where `test.sh` writes `reward.txt` (the strict verdict), `reward.json` and `verdict.json`.
  The task's episode is the first session that made a call; a second such session fails the task.
- `solution/solve.sh`: Harbor's oracle, the reference played over MCP.

The scripts are the files of `certify/harbor_task/`, copied as they are; what differs per task is data
(`solution/reference.json`, `tests/expected.json`, the task file). `validate` checks an exported folder with
Harbor's own loader and linter.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict

from simulator import DEFAULT_WORLD

from .agents.base import TaskView
from .agents.llm import first_message, system_prompt
from .episode import reference_calls
from .lock import CertificateLock, TaskCertificate, task_content_hash
from .rewards import turn_budget
from .task import Task, TaskSet, read_json

FILES = Path(__file__).resolve().parent / "harbor_task"
PACKAGES = ("simulator", "certify", "authoring")
SOURCE_ROOT = Path(__file__).resolve().parents[1]
SERVICE = "workspace"
PORT = 8000
BASE_IMAGE = "python:3.12-slim"
AGENT_SECONDS_PER_TURN = 60
VERIFIER_SECONDS = 30
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class HarborExportError(Exception):
    """An export that cannot be written (Harbor missing, an unsafe id, no source tree); one line for the user."""


@dataclass(frozen=True)
class ExportedTask:
    task_id: str
    path: Path


def harbor_models() -> Any:
    """Harbor's task models, or a clear error where Harbor cannot be installed (it needs Python >= 3.12)."""
    try:
        from harbor.models.task import config
    except ImportError as exc:
        import sys

        raise HarborExportError(
            f"exporting Harbor tasks needs Harbor's task models ({exc.name} is missing): "
            f"pip install -e '.[harbor]' on Python >= 3.12 (this is {sys.version_info.major}.{sys.version_info.minor})"
        ) from None
    return config


def mcp_url(task_id: str) -> str:
    return f"http://{SERVICE}:{PORT}/tasks/{task_id}/mcp"


def instruction(task: Task) -> str:
    """The request and the episode's rules (our harness's first message), then what else our harness tells the
    agent (its tools mode's system prompt)."""
    view = TaskView.of(task)
    return (
        f"{first_message(view).strip()}\n\n"
        "---\n\n"
        f"{system_prompt(view, 'tools').strip()}\n\n"
        f"The tools are those of the MCP server `{SERVICE}` ({mcp_url(task.id)}). One MCP session is one episode "
        "of this task: work in a single session; a second session that makes calls fails the task.\n"
    )


def _certificate(lock: CertificateLock | None, task_id: str) -> TaskCertificate | None:
    return lock.tasks.get(task_id) if lock is not None else None


def task_config(
    task: Task, raw: dict[str, Any], certificate: TaskCertificate | None, org: str, taskset: str
) -> Any:
    """The task's `task.toml` as Harbor's TaskConfig."""
    config = harbor_models()
    meta = task.meta
    budget = turn_budget(task)
    level_name = meta.level_name if meta else None
    persona = (meta.persona if meta else None) or task.persona
    metadata: dict[str, Any] = {
        "taskforge_task": task.id,
        "taskset": taskset,
        "level": task.difficulty,
        "turn_budget": budget,
        "content_sha256": task_content_hash(raw),
    }
    for key, value in (
        ("level_name", level_name),
        ("persona", persona),
        ("story", meta.story if meta else None),
    ):
        if value:
            metadata[key] = value
    if certificate is not None:
        metadata["certified"] = certificate.certified
        metadata["certificate_sha256"] = hashlib.sha256(
            certificate.model_dump_json().encode("utf-8")
        ).hexdigest()
    description = " · ".join(
        part
        for part in (
            f"{persona}" if persona else None,
            meta.story if meta else None,
            f"{task.difficulty} ({level_name})" if level_name else task.difficulty,
        )
        if part
    )
    return config.TaskConfig(
        task=config.PackageInfo(
            name=f"{org}/{task.id}",
            description=f"Taskforge workspace task: {description}",
            keywords=[k for k in ("taskforge", "financial-workspace", "mcp", persona, level_name) if k],
        ),
        metadata=metadata,
        agent=config.AgentConfig(timeout_sec=float(AGENT_SECONDS_PER_TURN * budget)),
        verifier=config.VerifierConfig(
            timeout_sec=float(VERIFIER_SECONDS + budget),
            environment_mode=config.VerifierEnvironmentMode.SEPARATE,
            environment=config.EnvironmentConfig(network_mode=config.NetworkMode.NO_NETWORK),
            collect=[
                config.VerifierCollectConfig(command="sh /srv/collect.sh", service=SERVICE, timeout_sec=60)
            ],
        ),
        environment=config.EnvironmentConfig(
            mcp_servers=[
                config.MCPServerConfig(name=SERVICE, transport="streamable-http", url=mcp_url(task.id))
            ],
            healthcheck=config.HealthcheckConfig(
                command=_probe(f"http://{SERVICE}:{PORT}/tasks"),
                interval_sec=2,
                start_period_sec=5,
                start_interval_sec=1,
                retries=30,
            ),
        ),
        artifacts=[config.ArtifactConfig(source="/srv/runs", service=SERVICE)],
    )


def _probe_code(url: str) -> str:
    return f"import urllib.request; urllib.request.urlopen('{url}', timeout=5)"


def _probe(url: str) -> str:
    return f'python3 -c "{_probe_code(url)}"'


def compose(task_id: str) -> dict[str, Any]:
    """environment/docker-compose.yaml: the workspace sidecar, and `main` held until it is healthy."""
    return {
        "services": {
            "main": {"depends_on": {SERVICE: {"condition": "service_healthy"}}},
            SERVICE: {
                "build": {"context": f"./{SERVICE}"},
                "healthcheck": {
                    "test": ["CMD", "python3", "-c", _probe_code(f"http://127.0.0.1:{PORT}/tasks")],
                    "interval": "2s",
                    "timeout": "5s",
                    "retries": 30,
                    "start_period": "10s",
                },
            },
        }
    }


def sidecar_dockerfile(sdist: str, with_world: bool) -> str:
    world = "COPY world /srv/world\n" if with_world else ""
    return (
        "# The workspace sidecar: taskforge (this package's source) serving one task over MCP.\n"
        f"FROM {BASE_IMAGE}\n"
        f"COPY {sdist} /opt/taskforge/{sdist}\n"
        f'RUN pip install --no-cache-dir "/opt/taskforge/{sdist}[mcp]"\n'
        "COPY taskset /srv/taskset\n"
        f"{world}"
        "COPY serve.sh collect.sh /srv/\n"
        "WORKDIR /srv\n"
        f"EXPOSE {PORT}\n"
        'CMD ["sh", "/srv/serve.sh"]\n'
    )


AGENT_DOCKERFILE = (
    "# The agent's container. It holds nothing of the task: the workspace is the MCP server of the `workspace`\n"
    "# sidecar. Python is here for Harbor's healthcheck and the oracle's MCP client (solution/play.py).\n"
    f"FROM {BASE_IMAGE}\n"
    "WORKDIR /app\n"
)
VERIFIER_DOCKERFILE = (
    "# The verifier: reads the run Harbor collected from the workspace sidecar (standard library only).\n"
    f"FROM {BASE_IMAGE}\n"
    "WORKDIR /app\n"
    "COPY . /tests/\n"
)


def source_archive(version: str) -> tuple[str, bytes]:
    """This package's source as an sdist pip can install (pyproject, README and the three packages), built
    byte-for-byte the same every time (sorted members, fixed times and owners), so exports are reproducible."""
    if not (SOURCE_ROOT / "pyproject.toml").is_file():
        raise HarborExportError(
            f"exporting Harbor tasks packs taskforge's source tree, and {SOURCE_ROOT} has no pyproject.toml: "
            "run it from a checkout (pip install -e .)"
        )
    top = f"taskforge-{version}"
    files = [SOURCE_ROOT / "pyproject.toml", SOURCE_ROOT / "README.md"]
    for package in PACKAGES:
        files += sorted(
            p
            for p in (SOURCE_ROOT / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
        )
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for path in sorted(files, key=lambda p: p.relative_to(SOURCE_ROOT).as_posix()):
            data = path.read_bytes()
            info = tarfile.TarInfo(f"{top}/{path.relative_to(SOURCE_ROOT).as_posix()}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return f"{top}.tar.gz", buffer.getvalue()


def _write(path: Path, text: str, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def _copy_file(name: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FILES / name, dest)
    dest.chmod(0o755 if name.endswith(".sh") else 0o644)


def _place(data: bytes, dest: Path, first: list[Path]) -> None:
    """Write the archive once and hard-link it into every other task (a copy where links are refused)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.unlink()
    if first:
        try:
            os.link(first[0], dest)
            return
        except OSError:
            pass
    dest.write_bytes(data)
    first.append(dest)


def export_task(
    task: Task,
    raw: dict[str, Any],
    out: Path,
    *,
    taskset_manifest: dict[str, Any],
    taskset_id: str,
    certificate: TaskCertificate | None,
    org: str,
    archive: tuple[str, bytes],
    world: Path | None,
    written: list[Path],
) -> ExportedTask:
    """One task's Harbor folder under `out/<task id>/` (replaced whole if it exists)."""
    if not SAFE_ID.match(task.id):
        raise HarborExportError(
            f"task id '{task.id}' cannot name a Harbor task (letters, digits, '.', '_', '-')"
        )
    root = out / task.id
    if root.exists():
        if not _previous_export(root, task.id):
            raise HarborExportError(
                f"{root} exists and is not a Harbor export of {task.id}; refusing to replace it"
            )
        shutil.rmtree(root)
    config = task_config(task, raw, certificate, org, taskset_id)
    _write(root / "task.toml", config.model_dump_toml())
    _write(root / "instruction.md", instruction(task))
    env = root / "environment"
    _write(env / "Dockerfile", AGENT_DOCKERFILE)
    _write(env / "docker-compose.yaml", yaml.safe_dump(compose(task.id), sort_keys=False))
    side = env / SERVICE
    sdist, data = archive
    _place(data, side / sdist, written)
    _write(side / "Dockerfile", sidecar_dockerfile(sdist, world is not None))
    _write(
        side / "taskset" / "taskset.json", json.dumps(taskset_manifest, indent=2, ensure_ascii=False) + "\n"
    )
    _write(side / "taskset" / f"{task.id}.json", json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
    if world is not None:
        shutil.copytree(world, side / "world", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("serve.sh", "collect.sh"):
        _copy_file(name, side / name)
    tests = root / "tests"
    _copy_file("test.sh", tests / "test.sh")
    _copy_file("verdict.py", tests / "verdict.py")
    _write(tests / "Dockerfile", VERIFIER_DOCKERFILE)
    _write(tests / "expected.json", json.dumps({"task_id": task.id}) + "\n")
    solution = root / "solution"
    _copy_file("solve.sh", solution / "solve.sh")
    _copy_file("play.py", solution / "play.py")
    reference = {
        "url": mcp_url(task.id),
        "steps": [{"tool": tool, "args": args} for tool, args in reference_calls(task)],
        "answer": task.eval.reference_answer or "Done.",
    }
    _write(solution / "reference.json", json.dumps(reference, indent=2, ensure_ascii=False) + "\n")
    return ExportedTask(task.id, root)


def _previous_export(root: Path, task_id: str) -> bool:
    """Whether `root` is what an earlier export of `task_id` wrote (the only folder an export replaces)."""
    import tomllib

    try:
        config = tomllib.loads((root / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return root.is_dir() and config.get("metadata", {}).get("taskforge_task") == task_id


def export_taskset(
    taskset_dir: Path,
    tasks: list[Task],
    out: Path,
    *,
    org: str = "taskforge",
    world: Path | None = None,
) -> list[ExportedTask]:
    """Every task of `tasks` (all from `taskset_dir`) as a Harbor task under `out`."""
    harbor_models()
    if not SAFE_ID.match(org):
        raise HarborExportError(
            f"--org '{org}' cannot name a Harbor organisation (letters, digits, '.', '_', '-')"
        )
    loaded = TaskSet.load(taskset_dir)
    manifest = dict(read_json(taskset_dir / "taskset.json"))
    manifest.pop("world", None)
    world_dir = world or (Path(loaded.manifest.world) if loaded.manifest.world else None)
    if world_dir is not None and world_dir.resolve() == Path(DEFAULT_WORLD).resolve():
        world_dir = None
    lock = CertificateLock.load(taskset_dir)
    from importlib.metadata import PackageNotFoundError, version

    try:
        archive = source_archive(version("taskforge"))
    except PackageNotFoundError:
        archive = source_archive("0")
    raws = {
        raw["id"]: raw for path in loaded.task_files() for raw in [read_json(path)] if isinstance(raw, dict)
    }
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    exported = []
    for task in tasks:
        raw = raws.get(task.id) or task.model_dump(mode="json", exclude_none=True)
        exported.append(
            export_task(
                task,
                raw,
                out,
                taskset_manifest=manifest,
                taskset_id=loaded.manifest.taskset_id,
                certificate=_certificate(lock, task.id),
                org=org,
                archive=archive,
                world=world_dir,
                written=written,
            )
        )
    return exported


def validate(task_dir: Path) -> list[str]:
    """Problems Harbor itself finds in an exported task: its loader (`harbor.models.task.task.Task`: task.toml
    through TaskConfig, the layout, the verifier's tests) and its linter's rules (`harbor.lint`), except the
    ones that need `docker compose` to read the compose file; that file is checked here for the services and
    the dependency the task relies on. An empty list means valid."""
    harbor_models()
    from harbor.lint.models import COMPOSE_RULES, DEFAULT_RULES
    from harbor.lint.task import lint_task
    from harbor.models.task.task import Task as HarborTask

    problems: list[str] = []
    try:
        HarborTask(task_dir)
    except Exception as exc:  # Harbor's loader raises whatever its validation raises; report it as found
        problems.append(f"{task_dir}: harbor refuses the task: {' '.join(str(exc).split())[:300]}")
        return problems
    for finding in lint_task(task_dir, selected_rules=set(DEFAULT_RULES) - COMPOSE_RULES):
        problems.append(f"{finding.path}: {finding.rule}: {finding.message}")
    compose_file = task_dir / "environment" / "docker-compose.yaml"
    services = (yaml.safe_load(compose_file.read_text(encoding="utf-8")) or {}).get("services", {})
    if set(services) != {"main", SERVICE}:
        problems.append(f"{compose_file}: services are {sorted(services)}, not main and {SERVICE}")
    elif services["main"].get("depends_on", {}).get(SERVICE, {}).get("condition") != "service_healthy":
        problems.append(f"{compose_file}: main does not wait for a healthy {SERVICE}")
    return problems


# --- running an exported task without Docker --------------------------------------------------------------------


class LocalRun(BaseModel):
    """What an exported task's own scripts gave when run on this machine against a local `taskforge serve`."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    agent: Literal["oracle", "noop"]
    reward: int
    verdict: dict[str, Any]
    seconds: float


def _lines(stream: Any, into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def run_locally(
    task_dir: Path, *, agent: Literal["oracle", "noop"], scratch: Path, timeout: float = 120
) -> LocalRun:
    """The task's sidecar scripts (serve.sh, collect.sh), its oracle (solve.sh, when `agent` is "oracle"; "noop"
    plays nothing) and its verifier (test.sh), each run by `sh` as its container would, with the sidecar's files
    in a scratch folder instead of /srv and `taskforge` from this installation. What it does not run is Docker:
    the images are not built and the compose network is loopback."""
    started = time.perf_counter()
    task_id = json.loads((task_dir / "tests" / "expected.json").read_text(encoding="utf-8"))["task_id"]
    home = scratch / "srv"
    if home.exists():
        shutil.rmtree(home)
    shutil.copytree(
        task_dir / "environment" / SERVICE, home, ignore=shutil.ignore_patterns("*.tar.gz", "Dockerfile")
    )
    verifier = scratch / "verifier"
    shutil.rmtree(verifier, ignore_errors=True)
    taskforge = shutil.which("taskforge", path=str(Path(sys.executable).parent)) or "taskforge"
    env = {
        **os.environ,
        "TASKFORGE_HOME": str(home),
        "TASKFORGE_BIND": "127.0.0.1",
        "TASKFORGE_PORT": "0",
        "TASKFORGE_KEEPALIVE": "0",
        "TASKFORGE": taskforge,
        "TASKFORGE_RUNS_DIR": str(home / "runs"),
        "TASKFORGE_VERIFIER_DIR": str(verifier),
    }
    server = subprocess.Popen(["sh", str(home / "serve.sh")], env=env, stderr=subprocess.PIPE, text=True)
    said: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_lines, args=(server.stderr, said), daemon=True).start()
    try:
        url = None
        deadline = time.monotonic() + timeout
        while url is None:
            line = said.get(timeout=max(deadline - time.monotonic(), 0.1))
            if line is None:
                raise HarborExportError(f"{task_id}: serve.sh stopped before serving (exit {server.wait()})")
            found = re.search(r"serving \S+ at (http://\S+)", line)
            url = found.group(1) if found else None
        if agent == "oracle":
            subprocess.run(
                ["sh", str(task_dir / "solution" / "solve.sh")],
                env={**env, "TASKFORGE_MCP_URL": url},
                check=True,
                capture_output=True,
                timeout=timeout,
            )
        subprocess.run(
            ["sh", str(home / "collect.sh")], env=env, check=True, capture_output=True, timeout=timeout
        )
        server.wait(timeout=timeout)
        subprocess.run(
            ["sh", str(task_dir / "tests" / "test.sh")],
            env=env,
            check=True,
            capture_output=True,
            timeout=timeout,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, queue.Empty) as exc:
        detail = getattr(exc, "stderr", None) or b""
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise HarborExportError(f"{task_id}: running it locally failed: {exc} {text.strip()[-300:]}") from exc
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return LocalRun(
        task_id=task_id,
        agent=agent,
        reward=int((verifier / "reward.txt").read_text(encoding="utf-8").strip()),
        verdict=json.loads((verifier / "verdict.json").read_text(encoding="utf-8")),
        seconds=round(time.perf_counter() - started, 3),
    )
