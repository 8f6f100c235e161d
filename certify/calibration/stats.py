"""Small statistics for pass rates and per-trial diagnostics.

Pass rates are reported with a Wilson score interval rather than the normal approximation: with a handful of
attempts per level and rates near 0 or 1, the normal interval escapes [0, 1] and collapses to a point at 0/n
and n/n, which would read as certainty where there is none.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

Z95 = 1.959963984540054


def wilson(passes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for `passes` successes out of `n`; (0.0, 0.0) when there are no attempts.

    `passes` may be fractional: a calibration counts each unique task once (n = tasks) and credits it with the
    share of its attempts that passed, so repeats of one task never narrow the interval as if they were new
    tasks."""
    if n < 0 or passes < 0 or passes > n:
        raise ValueError(f"wilson needs 0 <= passes <= n, got passes={passes}, n={n}")
    if n == 0:
        return (0.0, 0.0)
    p = passes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if passes == 0 else max(0.0, centre - margin)
    hi = 1.0 if passes == n else min(1.0, centre + margin)
    return (lo, hi)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: always an observed value, which reads better for counts like turns."""
    if not sorted_values:
        raise ValueError("percentile of an empty sequence")
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


def distribution(values: Sequence[float]) -> dict[str, float | None]:
    """min, median, p90, max and mean; every figure None when there is nothing to summarise."""
    if not values:
        return {"min": None, "median": None, "p90": None, "max": None, "mean": None}
    ordered = sorted(values)
    return {
        "min": ordered[0],
        "median": statistics.median(ordered),
        "p90": percentile(ordered, 0.9),
        "max": ordered[-1],
        "mean": round(statistics.fmean(ordered), 4),
    }


def pass_hat_k(passes: int, n: int, k: int) -> float:
    """The chance that k trials drawn without replacement from n (of which `passes` passed) all pass:
    C(passes, k) / C(n, k), the unbiased pass^k estimate tau2-bench reports for an agent's reliability."""
    if not 0 <= passes <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= passes <= n and 1 <= k <= n, got passes={passes}, n={n}, k={k}")
    return math.comb(passes, k) / math.comb(n, k)
