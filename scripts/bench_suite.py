"""Is the suite slower than at an earlier commit? Run the same test files in two checkouts, interleaved, with
one venv, and compare the time of the tests the two share (same node id), so tests added since do not count.

    python scripts/bench_suite.py --before /tmp/before --after . --runs 3 tests/certify/test_grader.py ...

Each checkout runs with PYTHONPATH set to itself, so its own packages are imported whatever the venv's editable
install points at. The machine this runs on is shared and noisy: runs alternate before/after so load hits both
alike, and the figure to read is the ratio of medians (after / before), not the seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path


def run_once(checkout: Path, files: list[str]) -> tuple[float, dict[str, float]]:
    """One pytest run of `files` in `checkout`: its wall time and each passed test's own time by node id."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *files],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        if not report.is_file():
            raise SystemExit(
                f"{checkout}: pytest wrote no report (exit {done.returncode}):\n{done.stdout[-2000:]}"
            )
        times = {}
        for case in ET.parse(report).iter("testcase"):
            if any(child.tag in ("failure", "error", "skipped") for child in case):
                continue
            times[f"{case.get('classname')}::{case.get('name')}"] = float(case.get("time") or 0)
    return wall, times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, required=True, help="checkout of the earlier commit")
    parser.add_argument("--after", type=Path, required=True, help="checkout of the later commit")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout, interleaved")
    parser.add_argument("files", nargs="+", help="test files or directories, relative to each checkout")
    args = parser.parse_args()
    results: dict[str, list[tuple[float, dict[str, float]]]] = {"before": [], "after": []}
    for i in range(args.runs):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for side in order:
            wall, times = run_once(getattr(args, side).resolve(), args.files)
            results[side].append((wall, times))
            print(f"run {i + 1} {side:6}: wall {wall:6.1f} s, {len(times)} passed tests", flush=True)
    shared = set.intersection(*(set(t) for side in results.values() for _, t in side))
    print(f"{len(shared)} tests pass at both commits under the same node id")
    medians = {}
    for side, runs in results.items():
        totals = [sum(t[k] for k in shared) for _, t in runs]
        walls = [w for w, _ in runs]
        medians[side] = (statistics.median(totals), statistics.median(walls))
        print(
            f"{side:6}: shared tests {', '.join(f'{x:.1f}' for x in totals)} s (median {medians[side][0]:.1f}); "
            f"wall {', '.join(f'{x:.1f}' for x in walls)} s (median {medians[side][1]:.1f})"
        )
    print(
        f"after / before: shared tests {medians['after'][0] / medians['before'][0]:.2f}, "
        f"wall {medians['after'][1] / medians['before'][1]:.2f}"
    )


if __name__ == "__main__":
    main()
