"""Per-level median prompt length of a taskset next to the source benchmark's published tasks (vendored in
compat/): `python scripts/prompt_lengths.py [TASKSET_DIR] [SOURCE_DIR]`. Exit 1 when a level runs over the
target ratio."""

from __future__ import annotations

import sys
from pathlib import Path

from authoring.lengths import compare, table

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    ours = Path(argv[0]) if argv else ROOT / "tasksets" / "workspace_tasks"
    source = (
        Path(argv[1])
        if len(argv) > 1
        else ROOT / "compat" / "workspacebench" / "tasksets" / "workspace_tasks"
    )
    rows = compare(ours, source)
    print(table(rows))
    return 0 if rows and all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
