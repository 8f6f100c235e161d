"""Deterministic baked rows: column kinds, parameter columns, per-widget seeded generators.

A column is `field:kind` (or `field` when the field names its kind). Kinds:
- numeric: ret, weight, pct, pct_hi, bps, cost_bps, musd, musd_s, musd_big, kusd, kusd_s, price, shares,
  ratio, beta, vol, score, days, count, hours; `int(lo;hi)`, `num(lo;hi;decimals)`;
- text: date, time, `pick(a|b|c)`, `id(PREFIX)`, or any list/pool name of the spec (ticker, company, fund...);
- derived from earlier columns of the same row: `scale(col;lo;hi)`, `diff(a;b)`, `sum(a;b;...)`,
  `gap(a;b)` (a/b - 1), `gapbps(a;b)`, `ratio(a;b)`, `diffbps(a;b)`, `cmp(a;b;above|level|below)`.
A sector or company column follows the row's ticker.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._common import SpecError, stable_seed

_Draw = Callable[[random.Random], Any]

_NUMERIC: dict[str, _Draw] = {
    "ret": lambda r: round(r.gauss(0.006, 0.035), 4),
    "weight": lambda r: round(r.uniform(0.004, 0.085), 4),
    "pct": lambda r: round(r.uniform(0.02, 0.98), 4),
    "pct_hi": lambda r: round(r.uniform(0.72, 0.995), 4),
    "bps": lambda r: round(r.uniform(-45.0, 45.0), 1),
    "cost_bps": lambda r: round(r.uniform(0.8, 38.0), 1),
    "musd": lambda r: round(r.uniform(0.4, 180.0), 2),
    "musd_s": lambda r: round(r.uniform(-25.0, 25.0), 2),
    "musd_big": lambda r: round(r.uniform(60.0, 2400.0), 1),
    "kusd": lambda r: round(r.uniform(0.5, 950.0), 1),
    "kusd_s": lambda r: round(r.uniform(-120.0, 120.0), 1),
    "price": lambda r: round(r.uniform(9.0, 380.0), 2),
    "shares": lambda r: r.randint(5, 2500) * 100,
    "ratio": lambda r: round(r.uniform(0.3, 3.2), 2),
    "beta": lambda r: round(r.uniform(0.6, 1.6), 2),
    "vol": lambda r: round(r.uniform(0.08, 0.45), 4),
    "score": lambda r: r.randint(1, 10),
    "days": lambda r: r.randint(0, 20),
    "count": lambda r: r.randint(0, 48),
    "hours": lambda r: round(r.uniform(0.2, 36.0), 1),
}
_DATE_START = dt.date(2026, 1, 2)
_DATE_SPAN = 148
_PARAMETRIC = re.compile(r"^(int|num|pick|id)\((.*)\)$")
_DERIVED = re.compile(r"^(scale|diff|sum|gap|gapbps|ratio|diffbps|cmp)\((.*)\)$")
_Derive = Callable[[Mapping[str, Any], random.Random], Any]


@dataclass(frozen=True)
class Column:
    field: str
    header: str
    cell_type: str
    draw: _Draw
    choices: tuple[Any, ...] = ()
    kind: str = ""
    derive: _Derive | None = None
    sources: tuple[str, ...] = ()

    def definition(self) -> dict[str, str]:
        return {"field": self.field, "headerName": self.header, "cellDataType": self.cell_type}


_HEADER_TOKENS = {
    "musd": "($m)",
    "kusd": "($k)",
    "bps": "(bps)",
    "pct": "(%)",
    "usd": "($)",
    "id": "ID",
    "nav": "NAV",
    "var": "VaR",
    "eps": "EPS",
    "fx": "FX",
    "pm": "PM",
    "ter": "TER",
    "adv": "ADV",
    "ssi": "SSI",
    "roic": "ROIC",
    "fcf": "FCF",
    "ev": "EV",
    "ebitda": "EBITDA",
    "dcf": "DCF",
    "wacc": "WACC",
    "hwm": "HWM",
    "kyc": "KYC",
    "pep": "PEP",
    "sla": "SLA",
    "qty": "Qty",
    "pnl": "P&L",
    "mv": "MV",
    "yoy": "YoY",
    "5m": "5m",
    "ioi": "IOI",
    "aum": "AUM",
    "im": "IM",
    "vm": "VM",
    "mmf": "MMF",
    "bmo": "BMO",
    "ytd": "YTD",
}


def header_for(field: str) -> str:
    return " ".join(_HEADER_TOKENS.get(tok, tok.capitalize()) for tok in field.split("_"))


def _draw_date(rng: random.Random) -> str:
    day = _DATE_START + dt.timedelta(days=rng.randrange(_DATE_SPAN))
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day.isoformat()


def _draw_time(rng: random.Random) -> str:
    seconds = rng.randrange(9 * 3600 + 30 * 60, 16 * 3600)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def parse_column(token: str, vocab: Mapping[str, Sequence[Any]]) -> Column:
    """'field:kind' (or just 'field' when the field names its kind) -> Column."""
    field, _, kind = token.partition(":")
    kind = kind or field
    if not re.fullmatch(r"[a-z][a-z0-9_]*", field):
        raise SpecError(f"column {token!r}: field names are snake_case")
    header = header_for(field)
    if kind in _NUMERIC:
        return Column(field, header, "number", _NUMERIC[kind], kind=kind)
    if kind == "date":
        return Column(field, header, "date", _draw_date)
    if kind == "time":
        return Column(field, header, "text", _draw_time)
    match = _PARAMETRIC.match(kind)
    if match:
        name, args = match.groups()
        if name == "int":
            lo, hi = (int(a) for a in args.split(";"))
            return Column(field, header, "number", lambda r: r.randint(lo, hi))
        if name == "num":
            lo_s, hi_s, dec_s = args.split(";")
            flo, fhi, dec = float(lo_s), float(hi_s), int(dec_s)
            return Column(field, header, "number", lambda r: round(r.uniform(flo, fhi), dec))
        if name == "pick":
            choices = tuple(args.split("|"))
            return Column(field, header, "text", lambda r: r.choice(choices), choices)
        prefix = args
        return Column(field, header, "text", lambda r: f"{prefix}-{r.randint(10000, 99999)}")
    derived = _DERIVED.match(kind)
    if derived:
        name, args = derived.groups()
        parts = args.split(";")
        derive, sources = _derived(name, parts, token)
        cell = "text" if name == "cmp" else "number"
        return Column(field, header, cell, _no_draw, kind=name, derive=derive, sources=sources)
    if kind in vocab:
        choices = tuple(vocab[kind])
        if not choices:
            raise SpecError(f"column {token!r}: pool {kind!r} is empty")
        return Column(field, header, "text", lambda r: r.choice(choices), choices, kind=kind)
    raise SpecError(
        f"column {token!r}: unknown kind {kind!r} (not a numeric kind, date, time, int(), num(), pick(), "
        f"id(), a derived kind scale/diff/sum/gap/gapbps/ratio/diffbps/cmp(), or a pool/list name)"
    )


def _no_draw(rng: random.Random) -> Any:
    raise SpecError("a derived column is computed from its row, never drawn")


def _decimals(value: Any) -> int:
    text = repr(value)
    return min(4, len(text.split(".")[1])) if "." in text else 0


def _derived(name: str, parts: list[str], token: str) -> tuple[_Derive, tuple[str, ...]]:
    """Columns computed from earlier columns of the same row, so related figures agree."""
    if name == "scale":
        src, lo, hi = parts[0], float(parts[1]), float(parts[2])

        def scale(row: Mapping[str, Any], rng: random.Random) -> Any:
            base = row[src]
            value = base * rng.uniform(lo, hi)
            if isinstance(base, int):
                return round(value)
            return round(value, 4 if abs(base) < 1 else max(1, _decimals(base)))

        return scale, (src,)
    if name == "cmp":
        a, b, labels = parts[0], parts[1], parts[2].split("|")
        if len(labels) != 3:
            raise SpecError(f"column {token!r}: cmp(a;b;above|level|below) takes three labels")

        def compare(row: Mapping[str, Any], rng: random.Random) -> str:
            rel = row[a] / row[b] - 1 if row[b] else 0.0
            return labels[0] if rel > 0.005 else labels[2] if rel < -0.005 else labels[1]

        return compare, (a, b)
    if name == "sum":
        return (
            lambda row, rng: round(sum(row[p] for p in parts), max(_decimals(row[p]) for p in parts))
        ), tuple(parts)
    a, b = parts
    formulas: dict[str, _Derive] = {
        "diff": lambda row, rng: round(row[a] - row[b], max(_decimals(row[a]), _decimals(row[b]))),
        "gap": lambda row, rng: round(row[a] / row[b] - 1, 4) if row[b] else 0.0,
        "ratio": lambda row, rng: round(row[a] / row[b], 4) if row[b] else 0.0,
        "diffbps": lambda row, rng: round((row[a] - row[b]) * 10000, 1),
        "gapbps": lambda row, rng: round((row[a] / row[b] - 1) * 10000, 1) if row[b] else 0.0,
    }
    return formulas[name], (a, b)


def linked(column: Column, source: str, mapping: Mapping[str, str]) -> Column:
    """The column re-bound to a value looked up from another column (e.g. a ticker's sector)."""
    return Column(
        column.field,
        column.header,
        column.cell_type,
        _no_draw,
        kind=column.kind,
        derive=lambda row, rng: mapping[row[source]],
        sources=(source,),
    )


@dataclass(frozen=True)
class Profile:
    """How one dataset sizes its rows: weights of 1, 2 or 3 rows per combination, and the row count
    range of widgets without key parameters."""

    name: str
    seed: str
    per_combo_weights: tuple[float, float, float]
    keyless_rows: tuple[int, int]


def _text_values(row: Mapping[str, Any]) -> list[str]:
    return [v for v in row.values() if isinstance(v, str)]


def _names_widget(row: Mapping[str, Any], forbidden: Sequence[str]) -> bool:
    texts = [t.lower() for t in _text_values(row)]
    return any(bad in text for bad in forbidden for text in texts)


def generate_rows(
    *,
    widget_id: str,
    widget_name: str,
    key_params: Sequence[tuple[str, Sequence[Any]]],
    columns: Sequence[Column],
    profile: Profile,
    tickers: Mapping[str, Mapping[str, str]] | None = None,
    each: tuple[str, Sequence[str], Callable[[str, random.Random], dict[str, Any]]] | None = None,
    sort_by: str | None = None,
) -> list[dict[str, Any]]:
    """Rows for one widget in one dataset, seeded from the dataset seed and the widget id.

    Every combination of the key parameters' options gets its own rows (1-3, or one per item of
    ``each``), carrying the combination as columns so a filter on those params is specific. A row's
    sector and company follow its ticker, and a sector key param limits the tickers to that sector.
    """
    rng = random.Random(stable_seed(profile.seed, widget_id))
    forbidden = [widget_name.lower(), widget_id.lower()]
    names = [name for name, _ in key_params]
    columns = _link_to_ticker(list(columns), names, tickers or {})
    known = set(names)
    for col in columns:
        missing = [src for src in col.sources if src not in known]
        if missing:
            raise SpecError(f"{widget_id}: column {col.field} depends on {missing}, which must come earlier")
        known.add(col.field)
    ticker_col = next((c for c in columns if c.kind == "ticker" and c.field not in names), None)
    by_sector = "sector" in names and ticker_col is not None
    unique = (
        ticker_col
        if by_sector
        else next((c for c in columns if c.choices and c.derive is None and c.field not in names), None)
    )
    combos = list(itertools.product(*[options for _, options in key_params])) if key_params else [()]
    rows: list[dict[str, Any]] = []
    for combo in combos:
        keyed = dict(zip(names, combo, strict=True))
        pool: list[Any] = []
        if unique is not None:
            pool = [c for c in unique.choices if str(c).lower() not in forbidden]
            if by_sector:
                pool = [t for t in pool if tickers and tickers[t]["sector"] == keyed["sector"]]
                if not pool:
                    raise SpecError(f"{widget_id}: no ticker in sector {keyed['sector']!r}")
        if each is not None:
            count = len(each[1])
        elif key_params:
            count = rng.choices((1, 2, 3), weights=profile.per_combo_weights)[0]
        else:
            count = rng.randint(*profile.keyless_rows)
        if by_sector:
            count = min(count, len(pool))
        picks = rng.sample(pool, min(count, len(pool))) if unique is not None and each is None else []
        combo_rows = []
        for index in range(count):
            for _attempt in range(40):
                row: dict[str, Any] = dict(keyed)
                if each is not None:
                    row.update(each[2](each[1][index], rng))
                for col in columns:
                    if col.field in row:
                        continue
                    if col.derive is not None:
                        row[col.field] = col.derive(row, rng)
                    elif col is unique and index < len(picks):
                        row[col.field] = picks[index]
                    else:
                        row[col.field] = col.draw(rng)
                if not _names_widget(row, forbidden):
                    break
            else:
                raise SpecError(
                    f"{widget_id}: cannot draw a row that does not name the widget; "
                    f"rename the widget or change its pools"
                )
            combo_rows.append(row)
        if sort_by:
            combo_rows.sort(key=lambda r: str(r[sort_by]))
        rows.extend(combo_rows)
    return rows


def _link_to_ticker(
    columns: list[Column], names: Sequence[str], tickers: Mapping[str, Mapping[str, str]]
) -> list[Column]:
    source = (
        "ticker"
        if "ticker" in names
        else next((c.field for c in columns if c.kind == "ticker" and c.field not in names), None)
    )
    if source is None or not tickers:
        return columns
    out = []
    for col in columns:
        if col.kind in ("sector", "company") and col.field not in names and col.derive is None:
            mapping = {t: info[col.kind] for t, info in tickers.items()}
            col = linked(col, source, mapping)
        out.append(col)
    return out


def metric_item(kind_columns: Mapping[str, Column]) -> Callable[[str, random.Random], dict[str, Any]]:
    """Row builder for metric tiles: 'Label:kind' -> {label, value, delta}."""

    def build(item: str, rng: random.Random) -> dict[str, Any]:
        label, _, kind = item.rpartition(":")
        value = kind_columns[kind].draw(rng)
        if isinstance(value, int):
            delta: float = round(rng.gauss(0.0, 0.15) * max(value, 4))
        else:
            scale = abs(value) or 1.0
            delta = round(rng.gauss(0.0, 0.08) * scale, 4 if scale < 1 else 2)
        return {"label": label, "value": value, "delta": delta}

    return build
