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
    from .records import CalibrationRecord, LadderReport


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
    """The calibration as what it measured. The capability ladder (deterministic agents, ladder-k holding k
    capabilities) is drawn as its agent × level matrix — passes/tasks per cell, the two cells its criterion reads
    outlined — with each level's fairness verdict: its 100/80/60/40/20 pooled rates would only restate how it was
    built, so no rate or interval is drawn for it. A sampled agent (a model) gets pass rates with their Wilson 95%
    intervals over tasks, labelled with the agent; another deterministic agent gets its counts, no interval."""
    from matplotlib.figure import Figure

    ladder = record.ladder if record.ladder is not None and record.ladder.agents else None
    panels = (["ladder"] if ladder is not None else []) + (
        ["rates"] if not record.deterministic or ladder is None else []
    )
    # a Figure of its own, not pyplot's global figure manager: a run may draw in a worker thread
    fig = Figure(figsize=(6.4, 3.6 * len(panels)), dpi=100)
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "ladder":
            assert ladder is not None
            _ladder_panel(ax, record, ladder)
        else:
            _rates_panel(ax, record)
    # fixed margins (what tight_layout settles on for this figure): laying out costs as much as drawing
    fig.subplots_adjust(left=0.14, right=0.985, top=1 - 0.08 / len(panels), bottom=0.14 / len(panels))
    if len(panels) > 1:
        fig.subplots_adjust(hspace=0.55)
    return fig


# a cell's colour says what the agent did (a rung below a level failing it is the ladder working, so not red);
# the criterion row says whether the level is fair
_PASS, _FAIL, _PART, _NONE, _VIOLATED = "#9fd4a3", "#d9d9d9", "#f6d58e", "#f4f4f4", "#f2a7a6"


def _ladder_panel(ax: Any, record: CalibrationRecord, ladder: LadderReport) -> None:
    from matplotlib.patches import Rectangle

    levels, agents = ladder.levels, ladder.agents
    rung = {a: _rung(a) for a in agents}
    for row, agent in enumerate(agents):
        for col, level in enumerate(levels):
            c = ladder.cell(agent, level)
            if c is None or not c.tasks:
                colour, text = _NONE, "—"
            else:
                colour = _PASS if c.passes == c.tasks else _FAIL if not c.passes else _PART
                text = f"{c.passes}/{c.tasks}"
            # the criterion of level k reads ladder-k (must pass all) and ladder-(k-1) (must pass none)
            read = rung[agent] is not None and rung[agent] in (_rung(level), (_rung(level) or 0) - 1)
            ax.add_patch(
                Rectangle(
                    (col - 0.5, row - 0.5),
                    1,
                    1,
                    facecolor=colour,
                    edgecolor="black" if read else "white",
                    linewidth=1.5 if read else 1,
                    zorder=2 if read else 1,
                )
            )
            ax.text(col, row, text, ha="center", va="center", fontsize=8, zorder=3)
    row = len(agents)
    for col, level in enumerate(levels):
        fair = bool(ladder.fair.get(level))
        ax.add_patch(
            Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor=_PASS if fair else _VIOLATED, edgecolor="white")
        )
        ax.text(col, row, "fair" if fair else "VIOLATED", ha="center", va="center", fontsize=8, weight="bold")
    ax.set_xlim(-0.5, len(levels) - 0.5)
    ax.set_ylim(len(agents) + 0.5, -0.5)
    ax.set_xticks(range(len(levels)), [f"{lv}\n{LEVEL_NAMES.get(lv, '')}" for lv in levels], fontsize=8)
    ax.set_yticks(range(len(agents) + 1), [*agents, "criterion"], fontsize=8)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    fair_levels = sum(bool(ladder.fair.get(lv)) for lv in levels)
    ax.set_title(
        f"{record.persona}: capability ladder, passes/tasks per agent × level — {fair_levels}/{len(levels)} levels fair",
        fontsize=9,
    )


def _rung(name: str) -> int | None:
    """k of `ladder-k` or `levelk`."""
    digits = name.rpartition("-")[2] if "-" in name else name.removeprefix("level")
    return int(digits) if digits.isdigit() else None


def _rates_panel(ax: Any, record: CalibrationRecord) -> None:
    """Pass rate per level: with its Wilson 95% interval over tasks, n and per-repeat rates for a sampled agent;
    passes/tasks alone for a deterministic one (its repeats are copies: no interval to draw). Dead rungs (measured,
    never passed) are marked."""
    sampled = not record.deterministic
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
        if sampled and s.attempts:
            lo, hi = s.ci
            ax.errorbar(
                x, rate, yerr=[[rate - lo], [hi - rate]], fmt="none", ecolor="black", capsize=4, linewidth=1
            )
            for r in s.per_repeat:
                if r is not None:
                    ax.plot(x, r, "o", color="black", markersize=3)
        # n is what the interval counts: unique tasks (a task's repeats are not more evidence of the level)
        if not s.attempts:
            label = "no valid trial"
        elif sampled:
            label = f"n={s.tasks} tasks" + (f"\n{s.attempts} attempts" if s.attempts != s.tasks else "")
        else:
            label = f"{s.passes}/{s.attempts} " + ("tasks" if s.attempts == s.tasks else "attempts")
        if is_dead:
            label += f"\ndead ({dead[s.level].replace('_', ' ')})"
        ax.text(x, 1.08, label, ha="center", va="bottom", fontsize=7, color="#9d2f2f" if is_dead else "black")
    ax.set_xticks(xs, [f"{s.level}\n{LEVEL_NAMES.get(s.level, '')}" for s in record.levels], fontsize=8)
    ax.set_ylim(0, 1.25)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("pass rate (Wilson 95%, tasks)" if sampled else "pass rate (deterministic)")
    who = f"{record.agent} x{record.repeats}" if sampled else f"{record.agent}, deterministic"
    ax.set_title(f"{record.persona}: pass rate of {who} ({record.verdict})", fontsize=9)
