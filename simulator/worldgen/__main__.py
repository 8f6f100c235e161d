"""CLI: python -m simulator.worldgen [--out DIR] [--check]."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import DEFAULT_OUT, build_world, diff_world, write_world


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m simulator.worldgen",
        description="Regenerate the default world from simulator/worldgen/spec.yaml.",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="world directory (default: %(default)s)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the files in --out differ from a fresh generation",
    )
    args = parser.parse_args(argv)
    files = build_world()
    if args.check:
        problems = diff_world(args.out, files)
        for line in problems:
            print(line)
        if problems:
            print(f"{len(problems)} file(s) out of date; run `python -m simulator.worldgen` to regenerate.")
            return 1
        print(f"{args.out}: up to date ({len(files)} files).")
        return 0
    write_world(args.out, files)
    total = sum(len(d) for d in files.values())
    print(f"wrote {len(files)} files ({total / 1e6:.2f} MB) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
