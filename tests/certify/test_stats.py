"""Wilson intervals and the per-trial distributions reported by evaluation runs."""

from __future__ import annotations

import pytest

from certify.calibration.stats import distribution, pass_hat_k, percentile, wilson


def test_wilson_reference_values():
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    assert wilson(1, 1) == pytest.approx((0.2065, 1.0), abs=1e-4)
    assert wilson(17, 20) == pytest.approx((0.6396, 0.9476), abs=1e-4)


def test_wilson_without_attempts_and_bad_input():
    assert wilson(0, 0) == (0.0, 0.0)
    for passes, n in ((3, 2), (-1, 4), (0, -1)):
        with pytest.raises(ValueError, match="0 <= passes <= n"):
            wilson(passes, n)


def test_wilson_narrows_with_more_attempts():
    small, large = wilson(6, 12), wilson(60, 120)
    assert small[0] < large[0] < 0.5 < large[1] < small[1]


def test_distribution():
    d = distribution([4, 1, 3, 2, 10, 5, 6, 7, 8, 9])
    assert d == {"min": 1, "median": 5.5, "p90": 9, "max": 10, "mean": 5.5}
    assert distribution([3]) == {"min": 3, "median": 3, "p90": 3, "max": 3, "mean": 3}
    assert distribution([]) == {"min": None, "median": None, "p90": None, "max": None, "mean": None}
    assert percentile([1, 2, 3], 0.0) == 1
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_pass_hat_k_is_the_combinatorial_estimate():
    assert pass_hat_k(3, 4, 1) == 0.75
    assert pass_hat_k(3, 4, 2) == pytest.approx(3 / 6)
    assert pass_hat_k(3, 4, 4) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(0, 3, 1) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 3, 4)
