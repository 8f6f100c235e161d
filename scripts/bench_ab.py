"""The certify bench of two checkouts, interleaved: the marginal cost of the shipped tasks (as `bench.py
certify` measures it: (all tasks - the first) x n/(n-1), in CPU seconds of the CLI process and in wall
seconds), alternating which checkout runs first in each pair, so that a neighbour's load on this shared machine
falls on both alike. Medians over the pairs.

python scripts/bench_ab.py BASE_DIR [OTHER_DIR (default: this checkout)] [--pairs 9]

Each checkout runs its own code (`python -m authoring` from its directory) on its own shipped taskset, with the
interpreter of this checkout's venv.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(where: Path, args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "authoring", *args], cwd=where, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def marginal(where: Path) -> tuple[float, float]:
    tasks = where / "tasksets" / "workspace_tasks"
    files = sorted(p for p in tasks.rglob("*_level*.json") if "calibration" not in p.parts)
    one_cpu, one_wall = run(where, ["certify", "--json", str(files[0])])
    all_cpu, all_wall = run(where, ["certify", "--json", str(tasks)])
    scale = len(files) / (len(files) - 1)
    return (all_cpu - one_cpu) * scale, (all_wall - one_wall) * scale


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base", type=Path)
    parser.add_argument("other", type=Path, nargs="?", default=ROOT)
    parser.add_argument("--pairs", type=int, default=9)
    ns = parser.parse_args()
    got: dict[str, list[tuple[float, float]]] = {"base": [], "other": []}
    loads = []
    for i in range(ns.pairs):
        order = [("base", ns.base), ("other", ns.other)]
        for label, where in order if i % 2 == 0 else order[::-1]:
            got[label].append(marginal(where))
        loads.append(os.getloadavg()[0])
        print(
            f"pair {i + 1}: base cpu {got['base'][-1][0]:.2f} s, other cpu {got['other'][-1][0]:.2f} s "
            f"(load {loads[-1]:.1f})",
            flush=True,
        )
    for label in ("base", "other"):
        cpu = statistics.median(c for c, _ in got[label])
        wall = statistics.median(w for _, w in got[label])
        print(f"{label}: marginal cpu {cpu:.2f} s, wall {wall:.2f} s (median of {ns.pairs})")
    print(f"load average (1 min) median {statistics.median(loads):.1f}")


if __name__ == "__main__":
    main()
