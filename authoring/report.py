"""`taskforge report`: a static HTML site about one taskset, opened from disk (no server).

Per persona: each story's five levels side by side with their gate results, the calibration staircase (plot
with Wilson intervals, n per level, dead rungs marked) and its trials; the review items, open and decided, with
their evidence; and a transcript viewer over stored calibration and evaluation trials (turns, calls, envelopes,
the checks that failed). Every string in it comes from task files, stories, model output or reviewers — all
untrusted — so the jinja2 environment autoescapes everything and no data is ever placed inside a script.

Stored calibration transcripts are compact (calls without envelopes); the viewer replays their calls through the
simulator, which is deterministic, to show the envelopes and to re-grade the trial for its failing checks.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment

from certify import (
    LEVEL_NAMES,
    LEVELS,
    CalibrationRecord,
    CertificateLock,
    RunRecord,
    Task,
    TaskSet,
    Trial,
    current,
    grade,
    graded_words,
    load_run,
    load_run_record,
    load_trials,
    plot,
    replay_trial,
    select_tasks,
)
from certify import load_calibration as load_record
from simulator import World

from .render import NOT_RUN_PREFIX, abbreviations, gate_columns
from .templating import environment

TEMPLATES = Path(__file__).parent / "templates" / "report"
STATIC = ("report.css", "report.js")
MAX_JSON = 3000


def review_items(taskset_root: Path) -> list[dict[str, Any]]:
    """Every review item of the taskset (open, decided and superseded), from its committed review files. The
    one place the report reads review items from: repoint it here if they move."""
    from .review import all_items

    return [item.to_dict() for item in all_items(taskset_root.parent, taskset_root.name)]


# ------------------------------------------------------------------------------------------------ views
@dataclass
class TrialView:
    anchor: str
    trial: Trial
    verdict: str
    events: list[dict[str, Any]] = field(default_factory=list)
    failing: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    messages: list[dict[str, str]] = field(default_factory=list)


def _verdict(trial: Trial) -> str:
    return "invalid" if not trial.valid else "pass" if trial.passed else "fail"


def _json(value: Any, limit: int = MAX_JSON) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _event(e: dict[str, Any]) -> dict[str, Any]:
    envelope = e.get("envelope") or {}
    error = envelope.get("error") if isinstance(envelope.get("error"), dict) else None
    inline = json.dumps(e.get("args"), ensure_ascii=False, default=str)
    return {
        "index": e.get("index"),
        "tool": e.get("tool"),
        "ok": e.get("ok"),
        "args": _json(e.get("args")),
        "args_inline": inline if len(inline) <= 240 else "",
        "message": envelope.get("message") or "",
        "error": f"{error.get('code')}: {error.get('message')}" if error else "",
        "data": _json(envelope.get("data")) if envelope.get("data") is not None else "",
    }


def _message(m: dict[str, Any]) -> dict[str, str]:
    content = m.get("content")
    body = content if isinstance(content, str) else _json(content) if content is not None else ""
    if m.get("tool_calls"):
        body = (body + "\n" if body else "") + _json(m["tool_calls"])
    return {"role": str(m.get("role", "?")), "content": body[:MAX_JSON]}


def trial_view(world: World, task: Task | None, trial: Trial, anchor: str) -> TrialView:
    """A trial ready to show: its calls with their envelopes and the checks it fails now."""
    view = TrialView(anchor, trial, _verdict(trial), messages=[_message(m) for m in trial.transcript])
    compact = any("request_id" not in (e.get("envelope") or {}) for e in trial.events)
    events = trial.events
    if task is None:
        view.notes.append("its task is not in this taskset any more: shown as stored, not re-graded")
    elif trial.valid:
        try:
            episode = replay_trial(world, task, trial)
            result = grade(task, episode)
        except Exception as exc:  # a stored trial the current simulator cannot replay is shown as stored
            view.notes.append(f"could not be replayed through the current simulator: {exc}")
        else:
            view.failing = [c.to_dict() for c in result.failures]
            if compact:
                events = [e.to_dict() for e in episode.events]
                view.notes.append(
                    "stored compact: the envelopes shown come from replaying its calls through the simulator"
                )
            if result.passed != trial.passed:
                view.notes.append(
                    f"stored verdict {view.verdict}; the current grader says "
                    f"{'pass' if result.passed else 'fail'}"
                )
    view.events = [_event(e) for e in events]
    return view


def _anchor(prefix: str, trial: Trial) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{prefix}-{trial.task_id}-r{trial.repeat}")


@dataclass
class LevelCell:
    task: Task
    gates: dict[str, dict[str, Any]] | None
    certified: bool | None
    trials: list[tuple[str, str]]  # (verdict, anchor) of its calibration trials
    graded: str = ""  # what its eval grades, in words (certify/graded.py), shown beside the prompt


@dataclass
class PersonaView:
    slug: str
    stories: dict[str, list[LevelCell | None]]
    record: CalibrationRecord | None = None
    plot: str | None = None
    trials: list[TrialView] = field(default_factory=list)

    @property
    def dead(self) -> dict[str, str]:
        return {p.level: p.status for p in self.record.probes} if self.record else {}

    @property
    def counts(self) -> tuple[int, int]:
        cells = [c for levels in self.stories.values() for c in levels if c is not None]
        return sum(1 for c in cells if c.certified), len(cells)


@dataclass
class RunView:
    record: RunRecord
    report: dict[str, Any]
    trials: list[TrialView]
    page: str


def _persona_of(task: Task, path_persona: str | None) -> str:
    return (
        (task.meta.persona if task.meta and task.meta.persona else None)
        or task.persona
        or path_persona
        or "tasks"
    )


def _story_of(task: Task) -> str:
    return (task.meta.story if task.meta and task.meta.story else None) or task.id.rsplit("_level", 1)[0]


def _runs(runs_dir: Path | None, taskset_id: str, limit: int) -> list[Path]:
    if runs_dir is None or not runs_dir.is_dir():
        return []
    found = []
    for folder in runs_dir.iterdir():
        try:
            record = load_run_record(folder)
        except (OSError, ValueError):
            continue
        if record.taskset == taskset_id:
            found.append((record.started_at, folder))
    return [folder for _, folder in sorted(found, reverse=True)[:limit]]


def _env() -> Environment:
    env = environment(TEMPLATES, html=True, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(LEVELS=LEVELS, LEVEL_NAMES=LEVEL_NAMES)
    env.filters["pct"] = lambda v: "-" if v is None else f"{v:.0%}"
    env.filters["abbrev"] = lambda names: abbreviations(list(names))
    env.tests["notrun"] = lambda gate: str(gate.get("detail", "")).startswith(NOT_RUN_PREFIX)
    return env


def build_report(
    root: Path, out: Path, *, world: World | None = None, runs_dir: Path | None = None, max_runs: int = 5
) -> Path:
    """Write the site for the taskset at `root` into `out`; returns the index page."""
    taskset = TaskSet.load(root)
    world = world or taskset.world()
    lock = CertificateLock.load(root)
    tasks = select_tasks(root)
    by_id = {t.id: t for t in tasks}
    personas: dict[str, PersonaView] = {}
    for path in taskset.task_files():
        rel = path.relative_to(root)
        top = rel.parts[0] if len(rel.parts) > 1 else None
        task = by_id.get(path.stem)
        if task is None:
            continue
        view = personas.setdefault(_persona_of(task, top), PersonaView(_persona_of(task, top), {}))
        row = view.stories.setdefault(_story_of(task), [None] * len(LEVELS))
        cert = lock.tasks.get(task.id) if lock else None
        row[LEVELS.index(task.difficulty)] = LevelCell(
            task,
            cert.gates if cert else None,
            cert.certified if cert else None,
            [],
            graded_words(task, world),
        )
    (out / "assets").mkdir(parents=True, exist_ok=True)
    for view in personas.values():
        folder = root / "calibration" / view.slug
        if not (folder / "calibration.json").is_file():
            continue
        view.record = load_record(folder)
        view.plot = f"assets/{view.slug}-staircase.png"
        plot(view.record, out / view.plot)
        trials = load_trials(folder) if (folder / "trials.jsonl").is_file() else []
        view.trials = [
            trial_view(world, by_id.get(t.task_id), t, _anchor("cal", t))
            for t in sorted(trials, key=lambda t: (t.task_id, t.repeat))
        ]
        cells = {c.task.id: c for levels in view.stories.values() for c in levels if c is not None}
        for tv in view.trials:
            if tv.trial.task_id in cells:
                cells[tv.trial.task_id].trials.append((tv.verdict, tv.anchor))
    runs = []
    for folder in _runs(runs_dir, taskset.manifest.taskset_id, max_runs):
        record = load_run_record(folder)
        trials = sorted(current(load_run(folder)), key=lambda t: (t.task_id, t.repeat))
        report = (
            json.loads((folder / "report.json").read_text(encoding="utf-8"))
            if (folder / "report.json").is_file()
            else {}
        )
        runs.append(
            RunView(
                record,
                report,
                [trial_view(world, by_id.get(t.task_id), t, _anchor("run", t)) for t in trials],
                f"run-{record.run_id}.html",
            )
        )
    items = review_items(root)
    context = {
        "taskset": taskset.manifest,
        "root": str(root),
        "world": world.name,
        "personas": personas,
        "runs": runs,
        "open_items": [i for i in items if i["status"] == "open"],
        "decided_items": [i for i in items if i["status"] not in ("open", "superseded")],
        "superseded": sum(1 for i in items if i["status"] == "superseded"),
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "has_lock": lock is not None,
        "gate_names": gate_columns(
            c.gates
            for v in personas.values()
            for levels in v.stories.values()
            for c in levels
            if c is not None and c.gates
        ),
    }
    env = _env()
    pages: dict[str, tuple[str, dict[str, Any]]] = {
        "index.html": ("index.html.j2", {}),
        "review.html": ("review.html.j2", {}),
    }
    for view in personas.values():
        pages[f"persona-{view.slug}.html"] = ("persona.html.j2", {"persona": view})
        pages[f"trials-{view.slug}.html"] = (
            "trials.html.j2",
            {
                "title": f"Calibration trials of {view.slug}",
                "trials": view.trials,
                "back": f"persona-{view.slug}.html",
                "run": None,
            },
        )
    for run in runs:
        pages[run.page] = (
            "trials.html.j2",
            {
                "title": f"Run {run.record.run_id}: {run.record.agent}",
                "trials": run.trials,
                "back": "index.html",
                "run": run,
            },
        )
    for name, (template, extra) in pages.items():
        (out / name).write_text(
            env.get_template(template).render(**context, **extra, page=name), encoding="utf-8"
        )
    for name in STATIC:
        shutil.copyfile(TEMPLATES / name, out / name)
    return out / "index.html"
