"""A calibration's files: calibration.json, calibration.md, trials.jsonl (compact transcripts) and the
staircase picture, rendered in memory and written or read back."""

from __future__ import annotations

import json
from pathlib import Path

from ..task import LEVEL_NAMES
from ..trial import Trial
from .plot import png
from .records import (
    PLOT_PNG,
    RECORD_JSON,
    RECORD_MD,
    TRIALS_JSONL,
    CalibrationRecord,
    LadderFinding,
    LadderReport,
)
from .run import compact


def record_files(record: CalibrationRecord, trials: list[Trial]) -> dict[str, bytes]:
    """The record's files by name, rendered in memory: the same record and trials give the same bytes, so a
    writer can tell its own output from someone else's edit before it touches the disk."""
    lines = [compact(t).model_dump_json() + "\n" for t in sorted(trials, key=lambda t: (t.task_id, t.repeat))]
    return {
        RECORD_JSON: (json.dumps(record.model_dump(), indent=2) + "\n").encode(),
        RECORD_MD: render_markdown(record).encode(),
        TRIALS_JSONL: "".join(lines).encode(),
        PLOT_PNG: png(record),
    }


def write_record(folder: Path, record: CalibrationRecord, trials: list[Trial]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in record_files(record, trials).items():
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    return paths


def load_trials(folder: Path) -> list[Trial]:
    path = folder / TRIALS_JSONL if folder.is_dir() else folder
    return [
        Trial.model_validate_json(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def load_record(folder: Path) -> CalibrationRecord:
    return CalibrationRecord.model_validate_json((folder / RECORD_JSON).read_text(encoding="utf-8"))


def render_matrix(ladder: LadderReport) -> list[str]:
    """The ladder's agent × level matrix as markdown rows: passes/tasks per cell; a level passes the criterion
    when its own rung passes every task and the rung below passes none."""
    if not ladder.levels or not ladder.agents:
        return []  # no table without rows: a ladder over no task says nothing
    head = "| agent | " + " | ".join(f"{lv} {LEVEL_NAMES.get(lv, '')}".strip() for lv in ladder.levels) + " |"
    lines = [head, "|---|" + "---|" * len(ladder.levels)]
    for agent in ladder.agents:
        row = []
        for level in ladder.levels:
            c = ladder.cell(agent, level)
            row.append(
                "—" if c is None or not c.tasks else f"{c.passes}/{c.tasks} ({c.passes / c.tasks:.0%})"
            )
        lines.append(f"| {agent} | " + " | ".join(row) + " |")
    lines.append(
        "| criterion | "
        + " | ".join("fair" if ladder.fair.get(lv) else "VIOLATED" for lv in ladder.levels)
        + " |"
    )
    return lines


def _finding_line(f: LadderFinding) -> str:
    calls = " → ".join(str(e["tool"]) + ("" if e.get("ok") else "✗") for e in f.events) or "no call"
    return f"{f.task_id} [{f.kind}, {f.agent}]: {f.detail}. Trace: {calls}"


def render_markdown(record: CalibrationRecord) -> str:
    verdict = {"holds": "holds", "inverted": "INVERTED", "insufficient": "INSUFFICIENT"}[record.verdict]
    lines = [
        f"# Calibration — {record.persona} ({record.taskset})",
        "",
        f"Reference agent `{record.agent}`, {record.repeats} repeat(s)"
        + (" (deterministic: one run per task)" if record.deterministic else "")
        + f", {record.trials} trials ({record.invalid} invalid, excluded). Staircase: **{verdict}**"
        + (
            f" (rungs with fewer than {record.min_attempts} valid attempts per agent: "
            f"{', '.join(record.insufficient)})"
            if record.insufficient
            else ""
        )
        + ".",
        *(["", f"Judged answers: {record.judge.line()}."] if record.judge is not None else []),
        "",
    ]
    if record.levels:
        lines += [
            "| level | name | attempts | tasks | passes | pass rate | fail rate | Wilson 95% (tasks) | per repeat |"
            " status |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
    else:
        lines.append("No task was calibrated.")
    for s in record.levels:
        rate = "—" if s.pass_rate is None else f"{s.pass_rate:.0%}"
        fail = "—" if s.fail_rate is None else f"{s.fail_rate:.0%}"
        reps = " ".join("—" if r is None else f"{r:.0%}" for r in s.per_repeat)
        lines.append(
            f"| {s.level} | {LEVEL_NAMES.get(s.level, '')} | {s.attempts} | {s.tasks} | {s.passes} | {rate} "
            f"| {fail} | {s.ci[0]:.2f}–{s.ci[1]:.2f} | {reps} | {s.status} |"
        )
    if record.ladder is not None and render_matrix(record.ladder):
        lines += ["", "## Capability ladder", "", *render_matrix(record.ladder)]
    for title, items in (
        (
            "Inversions",
            [f"{i.lower} fails {i.fail_lower:.0%} > {i.upper} {i.fail_upper:.0%}" for i in record.inversions],
        ),
        (
            "Defects (same fingerprint on every attempt)",
            [f"{d.task_id}: {'; '.join(d.fingerprint)}" for d in record.defects],
        ),
        ("Noise", [f"{n.task_id}: {n.detail}" for n in record.noise]),
        (
            "Dead rungs",
            [
                f"{p.level}: {p.status}" + (f" ({p.agent} on {p.task_id})" if p.agent else "")
                for p in record.probes
            ],
        ),
        ("Shortcuts", [f"{s.task_id}: {s.detail}" for s in record.shortcuts]),
        ("Ladder findings", [_finding_line(f) for f in record.ladder.findings] if record.ladder else []),
    ):
        if items:
            lines += ["", f"## {title}", "", *[f"- {x}" for x in items]]
    return "\n".join(lines) + "\n"
