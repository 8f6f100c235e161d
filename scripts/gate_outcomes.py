"""Every gate outcome of a taskset, to compare a change against its base: a speed change must move none.

python scripts/gate_outcomes.py dump out.json               # the shipped taskset (120 tasks x 12 gates)
python scripts/gate_outcomes.py diff base.json out.json     # exit 1 and the differing verdicts, if any
python scripts/gate_outcomes.py lock                        # compare with the certificate lock on record
python scripts/gate_outcomes.py dump out.json --compat      # the compat corpus (its own world) instead

A verdict is a gate's ok and its detail (the reason), per task; the certificate lock records the same pair, so
`lock` needs no earlier dump (tests/certify/test_shipped.py asserts it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHIPPED = ROOT / "tasksets" / "workspace_tasks"
COMPAT = ROOT / "compat" / "workspacebench"


def outcomes(tasks: Path = SHIPPED, world_dir: Path | None = None) -> dict[str, dict[str, list]]:
    from certify.gates import certify_file, collect
    from simulator import DEFAULT_WORLD, World

    world = World.load(world_dir or DEFAULT_WORLD)
    out = {}
    for path, taskset in collect([tasks]):
        cert = certify_file(world, path, taskset)
        out[cert.id] = {name: [g.ok, g.detail] for name, g in cert.gates.items()}
    return out


def recorded(tasks: Path = SHIPPED) -> dict[str, dict[str, list]]:
    from certify.lock import CertificateLock

    lock = CertificateLock.load(tasks)
    assert lock is not None, f"{tasks}: no certificate lock"
    return {tid: {n: [g["ok"], g["detail"]] for n, g in c.gates.items()} for tid, c in lock.tasks.items()}


def differences(base: dict, now: dict) -> list[str]:
    out = [f"{tid}: only in base" for tid in sorted(set(base) - set(now))]
    out += [f"{tid}: only now" for tid in sorted(set(now) - set(base))]
    for tid in sorted(set(base) & set(now)):
        if list(base[tid]) != list(now[tid]):
            out.append(f"{tid}: gates {list(base[tid])} -> {list(now[tid])}")
        for gate in base[tid]:
            if gate in now[tid] and base[tid][gate] != now[tid][gate]:
                out.append(f"{tid} {gate}: {base[tid][gate]} -> {now[tid][gate]}")
    return out


def main(argv: list[str]) -> int:
    compat = "--compat" in argv
    argv = [a for a in argv if a != "--compat"]
    if argv[:1] == ["dump"] and len(argv) == 2:
        data = outcomes(COMPAT / "tasksets" / "workspace_tasks", COMPAT / "world") if compat else outcomes()
        Path(argv[1]).write_text(json.dumps(data, indent=1, sort_keys=True))
        print(f"{len(data)} tasks, {sum(len(g) for g in data.values())} verdicts -> {argv[1]}")
        return 0
    if argv[:1] == ["diff"] and len(argv) == 3:
        base, now = (json.loads(Path(p).read_text()) for p in argv[1:])
    elif argv == ["lock"]:
        base, now = recorded(), outcomes()
    else:
        print(__doc__)
        return 2
    found = differences(base, now)
    print("\n".join(found[:50]) or f"identical: {sum(len(g) for g in now.values())} verdicts")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
