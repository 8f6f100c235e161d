"""Row builders of the Widget Showcase that need more than independent random columns (price bars)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping, Sequence
from typing import Any

from ._catalog import RowBuilder
from ._common import SpecError, stable_seed

_BARS = 8
_STEPS = {"5m": dt.timedelta(minutes=5), "1h": dt.timedelta(hours=1), "1d": dt.timedelta(days=1)}
_LAST = dt.datetime(2026, 5, 29, 15, 55)


def _bars(seed: str, symbol: str, interval: str) -> list[dict[str, Any]]:
    rng = random.Random(stable_seed(seed, "bars", symbol, interval))
    price = random.Random(stable_seed(seed, "base", symbol)).uniform(20, 240)
    step = _STEPS[interval]
    scale = {"5m": 0.002, "1h": 0.006, "1d": 0.018}[interval]
    stamps: list[dt.datetime] = []
    when = _LAST.replace(hour=16, minute=0) if interval == "1d" else _LAST
    while len(stamps) < _BARS:
        if when.weekday() < 5:
            stamps.append(when)
        when -= step
    rows = []
    for stamp in reversed(stamps):
        open_ = price
        close = max(1.0, open_ * (1 + rng.gauss(0, scale)))
        high = max(open_, close) * (1 + abs(rng.gauss(0, scale / 2)))
        low = min(open_, close) * (1 - abs(rng.gauss(0, scale / 2)))
        label = stamp.date().isoformat() if interval == "1d" else stamp.strftime("%Y-%m-%d %H:%M")
        rows.append(
            {
                "symbol": symbol,
                "interval": interval,
                "time": label,
                "open": round(open_, 2),
                "high": round(high, 2),
                "low": round(low, 2),
                "close": round(close, 2),
                "volume": rng.randint(20, 900) * 1000,
            }
        )
        price = close
    return rows


def row_builder(seed: str) -> RowBuilder:
    def build(
        gen: str, entry: Mapping[str, Any], key_params: Sequence[tuple[str, Sequence[Any]]]
    ) -> list[dict[str, Any]]:
        keys = dict(key_params)
        if gen not in {"ohlc", "ohlc_line"} or set(keys) != {"symbol", "interval"}:
            raise SpecError(f"{entry['n']}: showcase builder {gen!r} needs key params symbol and interval")
        rows = [bar for s in keys["symbol"] for i in keys["interval"] for bar in _bars(seed, s, i)]
        if gen == "ohlc_line":
            return [
                {"symbol": r["symbol"], "interval": r["interval"], "time": r["time"], "close": r["close"]}
                for r in rows
            ]
        return rows

    return build
