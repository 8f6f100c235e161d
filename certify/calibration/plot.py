"""The staircase picture of a calibration record (the PNG beside its calibration.json).

Drawing is presentation, not grading: it lives apart from the calibration analysis so that a change to the
picture does not change the grader fingerprint and make every certificate stale."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..task import LEVEL_NAMES

if TYPE_CHECKING:
    from .records import CalibrationRecord


_PNGS: OrderedDict[str, bytes] = OrderedDict()
_PNGS_LOCK = threading.Lock()


def png(record: CalibrationRecord) -> bytes:
    """The staircase as PNG bytes. Drawing costs more than the rest of writing a run's files, and the picture is
    a pure function of the record (its time stamp aside), so it is drawn once per record per process — a run
    can draw it while it waits for a model, and its commit finds it done."""
    key = record.model_dump_json(exclude={"created_at"})
    with _PNGS_LOCK:
        if key in _PNGS:
            _PNGS.move_to_end(key)
            return _PNGS[key]
    image = io.BytesIO()
    _draw(record, image)
    data = image.getvalue()
    with _PNGS_LOCK:
        _PNGS[key] = data
        while len(_PNGS) > 32:
            _PNGS.popitem(last=False)
    return data


def plot(record: CalibrationRecord, path: str | Path | IO[bytes]) -> None:
    data = png(record)
    if isinstance(path, (str, Path)):
        Path(path).write_bytes(data)
    else:
        path.write(data)


def _draw(record: CalibrationRecord, out: IO[bytes]) -> None:
    staircase_figure(record).savefig(out, format="png", metadata={"Software": None})


def staircase_figure(record: CalibrationRecord) -> Any:
    """Pass rate per level with its Wilson 95% interval and n, per-repeat rates as dots, dead rungs (measured,
    never passed) marked, so the picture says how much each bar can be trusted."""
    from matplotlib.figure import Figure

    # a Figure of its own, not pyplot's global figure manager: a run may draw in a worker thread
    fig = Figure(figsize=(6.4, 3.6), dpi=100)
    ax = fig.subplots()
    xs = list(range(len(record.levels)))
    dead = {p.level: p.status for p in record.probes}
    for x, s in zip(xs, record.levels, strict=True):
        rate = s.pass_rate or 0.0
        is_dead = s.level in dead
        if is_dead:
            ax.axvspan(x - 0.45, x + 0.45, ymax=1.0 / 1.25, color="#fbe3e3", zorder=0)
        ax.bar(
            x,
            rate,
            color="#e45756" if is_dead else "#4c78a8",
            width=0.6,
            hatch="//" if is_dead else None,
            edgecolor="#9d2f2f" if is_dead else "#4c78a8",
            alpha=0.85,
        )
        if s.attempts:
            lo, hi = s.ci
            ax.errorbar(
                x, rate, yerr=[[rate - lo], [hi - rate]], fmt="none", ecolor="black", capsize=4, linewidth=1
            )
        for r in s.per_repeat:
            if r is not None:
                ax.plot(x, r, "o", color="black", markersize=3)
        # n is what the interval counts: unique tasks (a task's repeats are not more evidence of the level)
        label = (
            (f"n={s.tasks} tasks" + (f"\n{s.attempts} attempts" if s.attempts != s.tasks else ""))
            if s.attempts
            else "no valid trial"
        )
        if is_dead:
            label += f"\ndead ({dead[s.level].replace('_', ' ')})"
        ax.text(x, 1.08, label, ha="center", va="bottom", fontsize=7, color="#9d2f2f" if is_dead else "black")
    ax.set_xticks(xs, [f"{s.level}\n{LEVEL_NAMES.get(s.level, '')}" for s in record.levels], fontsize=8)
    ax.set_ylim(0, 1.25)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("pass rate (Wilson 95%)")
    ax.set_title(f"{record.persona}: {record.agent} x{record.repeats} ({record.verdict})", fontsize=9)
    # fixed margins (what tight_layout settles on for this figure): laying out costs as much as drawing
    fig.subplots_adjust(left=0.10, right=0.985, top=0.92, bottom=0.14)
    return fig
