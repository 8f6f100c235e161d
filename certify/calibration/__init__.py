"""Calibration: the staircase gate of a persona's tasks.

A reference agent runs the persona's tasks N times; the pooled failure rate must not decrease from one level
to the next (FAIL(L0) ≤ … ≤ FAIL(L4), ties allowed). On an inversion the lower level — the one failing more than
a harder one — is examined task by task: the same failure fingerprint on every attempt of a task is a defect
(for the fixer, with its transcripts); scattered failures are noise (a note for review). A level above Execute
the reference never passes must prove it is feasible: one episode of a frontier agent on its most promising
task (pass: an honest floor; fail: flagged), or it stays "unprobed", a visible review item. The record is kept as
JSON and markdown with a staircase plot, beside compact transcripts that let a grader change re-grade it without
calling any model.

Honesty: a deterministic agent runs once per task (its repeats would be copies, not attempts), and every
Wilson interval counts unique tasks. A level with fewer valid attempts per agent than the minimum (default 3) is
"insufficient": the verdict is then "insufficient" — a blocker, never "holds" — and so is a calibration whose
trials were all invalid. The reference may be a family: `ladder` runs ladder-0 … ladder-4, pools them into the
staircase and reports the agent × level matrix, where level k must be passed by ladder-k and failed by
ladder-(k-1); each violation is a finding with its transcript.

The package: `records` (the models), `analysis` (the staircase from trials), `run` (calibrate, rehearse,
probe, regrade), `files` (what is written beside the tasks), `plot` (the picture, outside the grader
fingerprint) and `stats` (Wilson intervals, pass^k).
"""

from .analysis import all_deterministic, analyse, is_deterministic, ladder_report
from .files import load_record, load_trials, record_files, render_markdown, render_matrix, write_record
from .records import (
    MIN_ATTEMPTS,
    PLOT_PNG,
    RECORD_JSON,
    RECORD_MD,
    TRIALS_JSONL,
    CalibrationRecord,
    Defect,
    Inversion,
    LadderCell,
    LadderFinding,
    LadderReport,
    LevelStat,
    Noise,
    Probe,
    Shortcut,
    Verdict,
)
from .run import (
    TrialMemo,
    calibrate,
    compact,
    probe_dead_rungs,
    regrade,
    rehearse,
    repeats_for,
)

__all__ = [
    "MIN_ATTEMPTS",
    "PLOT_PNG",
    "RECORD_JSON",
    "RECORD_MD",
    "TRIALS_JSONL",
    "CalibrationRecord",
    "Defect",
    "Inversion",
    "LadderCell",
    "LadderFinding",
    "LadderReport",
    "LevelStat",
    "Noise",
    "Probe",
    "Shortcut",
    "TrialMemo",
    "Verdict",
    "all_deterministic",
    "analyse",
    "calibrate",
    "compact",
    "is_deterministic",
    "ladder_report",
    "load_record",
    "load_trials",
    "probe_dead_rungs",
    "record_files",
    "regrade",
    "rehearse",
    "render_markdown",
    "render_matrix",
    "repeats_for",
    "write_record",
]
