"""Terminal rendering shared by every command, so output stays readable at 80 columns.

Three rules hold everywhere: data (ids, paths, reasons, prompts) is never parsed as rich markup — a path like
`src[old]` or an extra like `'.[postgres]'` must print as written; an id is never cut (rows that cannot fit
fold into a compact layout instead); long text goes under a table as a wrapped list, not into a squeezed
column. Lines are wrapped at word boundaries with a hanging indent, and a word is never split.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

PASS, FAIL, NOT_RUN = "✓", "✗", "·"
NOT_RUN_PREFIX = "not run"
# A hanging indent wider than this wastes the line; longer prefixes hang by two spaces instead.
MAX_HANG = 16


def console(*, stderr: bool = False) -> Console:
    """A console for one command; its width follows the terminal (or $COLUMNS) at print time."""
    return Console(stderr=stderr, highlight=False)


def text(value: Any, style: str = "") -> Text:
    """A table cell or line fragment holding data: shown verbatim, never read as markup."""
    return Text("-" if value is None else str(value), style=style)


def wrap(message: str, width: int, *, prefix: str = "", indent: int | None = None) -> list[str]:
    """`message` wrapped to `width` after `prefix`, continuation lines indented; words are never split, so a
    word longer than the line (an id, a path) overflows rather than breaks."""
    if indent is None:
        indent = len(prefix) if len(prefix) <= MAX_HANG else 2
    hang = " " * indent
    lines: list[str] = []
    for i, paragraph in enumerate(message.splitlines() or [""]):
        first = prefix if i == 0 else hang
        lines += textwrap.wrap(
            paragraph,
            width=max(20, width),
            initial_indent=first,
            subsequent_indent=hang,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [first.rstrip()]
    return lines


def say(
    out: Console,
    message: str,
    *,
    prefix: str = "",
    prefix_style: str = "",
    style: str = "",
    indent: int | None = None,
) -> None:
    """Print one message as data, word-wrapped at the console's width with a hanging indent."""
    for i, line in enumerate(wrap(message, out.width, prefix=prefix, indent=indent)):
        if i == 0 and prefix and prefix_style:
            out.print(Text.assemble((prefix, prefix_style), (line[len(prefix) :], style)), soft_wrap=True)
        else:
            out.print(Text(line, style=style), soft_wrap=True)


def error(out: Console, message: str) -> None:
    say(out, message, prefix="error: ", prefix_style="red")


def warning(out: Console, message: str) -> None:
    say(out, message, prefix="warning: ", prefix_style="yellow")


def fits(out: Console, table: Table) -> bool:
    """Whether `table` prints at its natural width (measured unclamped: rich would otherwise squeeze it)."""
    return Measurement.get(out, out.options.update_width(10_000), table).maximum <= out.width


def table(**kwargs: Any) -> Table:
    """The house table: a rule under the header and no borders (a border costs columns at 80 wide). Titles
    are printed above it with `say`: a table's own title wraps at the table's width."""
    kwargs = {"padding": (0, 1), "collapse_padding": True, **kwargs}
    return Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, **kwargs)


def level_table(figures: Sequence[str], *, notes: Sequence[str] = ()) -> Table:
    """A table with one row per level: the level and its name, then `figures` (right-aligned), then `notes`."""
    grid = table()
    for col in ("level", ""):
        grid.add_column(col, no_wrap=True)
    for col in figures:
        grid.add_column(col, justify="right", no_wrap=True)
    for col in notes:
        grid.add_column(col, no_wrap=True)
    return grid


def bullets(out: Console, title: str, items: Iterable[tuple[str, str]], *, style: str = "") -> None:
    """`title` then one wrapped entry per (key, text), continuation lines indented under the key."""
    items = list(items)
    if not items:
        return
    out.print(Text(title, style="bold"), soft_wrap=True)
    for key, body in items:
        say(out, body, prefix=f"  {key}: ", prefix_style=style, indent=4)


# -------------------------------------------------------------------------------------------------- gates
class GateLike(Protocol):
    ok: bool
    detail: str


def gate_ok(gate: GateLike | Mapping[str, Any]) -> bool:
    return bool(gate["ok"] if isinstance(gate, Mapping) else gate.ok)


def gate_detail(gate: GateLike | Mapping[str, Any]) -> str:
    return str(gate["detail"] if isinstance(gate, Mapping) else gate.detail)


def gate_ran(gate: GateLike | Mapping[str, Any]) -> bool:
    return not gate_detail(gate).startswith(NOT_RUN_PREFIX)


def gate_mark(gate: GateLike | Mapping[str, Any] | None) -> Text:
    if gate is None or not gate_ran(gate):
        return Text(NOT_RUN, style="dim")
    return Text(PASS, style="green") if gate_ok(gate) else Text(FAIL, style="bold red")


def gate_columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The gates present in the results, in the order they were run (never a fixed list: gates come and go)."""
    names: dict[str, None] = {}
    for gates in rows:
        names.update(dict.fromkeys(gates))
    return list(names)


def abbreviations(names: Sequence[str]) -> dict[str, str]:
    """The shortest prefix (two letters at least) of each name that no other name shares."""
    out = {}
    for name in names:
        for size in range(2, len(name) + 1):
            prefix = name[:size]
            if not any(other != name and other.startswith(prefix) for other in names):
                out[name] = prefix
                break
        else:
            out[name] = name
    return out


def gate_legend(names: Sequence[str]) -> str:
    short = abbreviations(names)
    return (
        "gates: "
        + ", ".join(f"{short[n]} {n}" for n in names)
        + f"; {PASS} passed, {FAIL} failed, {NOT_RUN} not run"
    )


def gate_table(
    out: Console,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    extra: Sequence[tuple[str, Sequence[str]]] = (),
    reasons_title: str = "why not",
) -> None:
    """One row per task: its id in full, one mark per gate that ran, then the legend and, under the table,
    the detail of every failed gate. `extra` adds narrow columns (header, one value per row)."""
    names = gate_columns(g for _, g in rows)
    short = abbreviations(names)
    grid = table(padding=(0, 0))
    grid.add_column("task", no_wrap=True, min_width=max((len(r[0]) for r in rows), default=4))
    for header, _ in extra:
        grid.add_column(header, no_wrap=True)
    for name in names:
        grid.add_column(short[name], justify="center", no_wrap=True)
    for i, (task_id, gates) in enumerate(rows):
        grid.add_row(
            text(task_id),
            *(text(values[i]) for _, values in extra),
            *(gate_mark(gates.get(n)) for n in names),
        )
    say(out, title, style="bold")
    if fits(out, grid):
        out.print(grid)
    else:
        for i, (task_id, gates) in enumerate(rows):
            out.print(text(task_id), soft_wrap=True)
            marks = Text("  ")
            for _, values in extra:
                marks.append(f"{values[i]}  ")
            for name in names:
                marks.append(f"{short[name]} ")
                marks.append_text(gate_mark(gates.get(name)))
                marks.append("  ")
            out.print(marks, soft_wrap=True)
    say(out, gate_legend(names), style="dim")
    failing = [
        (
            task_id,
            "; ".join(f"{n}: {gate_detail(g)}" for n, g in gates.items() if not gate_ok(g) and gate_ran(g)),
        )
        for task_id, gates in rows
        if any(not gate_ok(g) for g in gates.values())
    ]
    bullets(out, reasons_title, failing)


def progress_printer(out: Console):
    """A progress callback for long work: one wrapped line per step, never split mid-word."""

    def progress(message: str) -> None:
        say(out, message, prefix="· ", prefix_style="dim")

    return progress


# ---------------------------------------------------------------------------------------------- calibration
def headline(record: Any, open_blockers: int = 0) -> str:
    """The calibration's one-line verdict, as true as the record: the capability ladder is given by its
    fairness verdict (its staircase holds by construction: ladder-k has k capabilities, so its pass rates say
    the levels are ordered by capability, not how hard they are); a deterministic reference by its counts of
    unique tasks (no interval: nothing was sampled); a sampled agent by pass rates with Wilson intervals over
    the unique tasks, n being those tasks. Open blockers are said, never hidden behind a "holds"."""
    if record.ladder is not None:
        unfair = [lv for lv in record.ladder.levels if not record.ladder.fair.get(lv, True)]
        line = (
            f"capability ladder {record.ladder.agents[0]}…{record.ladder.agents[-1]} (agent × level below): "
            + ("fair at every level" if not unfair else f"criterion VIOLATED at {', '.join(unfair)}")
        )
    elif record.deterministic:
        cells = "  ".join(f"{s.level}: {s.passes}/{s.tasks} tasks" for s in record.levels)
        line = (
            f"staircase ({record.agent}, deterministic, each task once): {cells} — {record.verdict.upper()}"
        )
    else:
        cells = "  ".join(
            f"{s.level}: {(s.pass_rate or 0):.0%} [{s.ci[0]:.0%}-{s.ci[1]:.0%}] n={s.tasks} tasks"
            + (f" ({s.attempts} attempts)" if s.attempts != s.tasks else "")
            for s in record.levels
        )
        line = (
            f"staircase ({record.agent} x{record.repeats}, Wilson 95% over unique tasks): {cells} — "
            f"{record.verdict.upper()}"
        )
    if open_blockers:
        line += f"; {open_blockers} blocker(s) open: not settled until they are decided"
    return line
