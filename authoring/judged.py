"""Judged tasks in a persona run: the judge audit they are gated against and the record a run commits.

A judged task (one asking for an analysis) certifies only against an audit of its taskset's judge (the judge
gate). The rule author audits its drafts with the embedded rubric as it gates them, in memory (`draft_audit`),
and the finished run writes the audit of the persona's judged tasks into `<taskset>/judge-audit.json`, merged
onto the entries of the other personas (`audit_file`), so that `taskforge certify` on the committed taskset
finds the same audit on record. A taskset whose judge is a model (`judge: openai:<model>` in taskset.json) is
audited with `taskforge judge audit --judge openai:<model>` after the run; the rubric's record does not stand in
for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from certify import (
    JUDGE_AUDIT_FILE,
    AuditFile,
    JudgeAudit,
    Task,
    audit_now,
    merge_audit,
    parse_task,
    restrict,
)
from simulator import World

Reader = Any  # Callable[[Path], bytes | None]


def draft_audit(world: World, task: Task, path: str) -> JudgeAudit | None:
    """The rubric's audit of one judged draft (None for a task that is not judged)."""
    if task.eval.judged is None:
        return None
    return audit_now(world, [(Path(path), task)])


def audit_file(
    root: Path,
    persona: str,
    raws: list[dict[str, Any]],
    world: World,
    defaults: dict[str, Any],
    read: Reader,
    stamp: str,
) -> bytes | None:
    """The taskset's judge-audit.json with this persona's judged tasks audited by the rubric (its earlier entries
    replaced, the other personas' kept); None when there is nothing to write. Pure given its inputs: the audit
    is stamped with the run's stamp, so a resumed run writes the same bytes."""
    path = root / JUDGE_AUDIT_FILE
    base = read(path)
    current = AuditFile.model_validate_json(base) if base is not None else AuditFile()
    tasks = []
    for raw in raws:
        where = f"{persona}/{raw['id']}.json"
        tasks.append((Path(where), parse_task(raw, where, defaults)))
    judged = [(p, t) for p, t in tasks if t.eval.judged is not None]
    if not judged and base is None:
        return None
    audit = audit_now(world, judged) if judged else None
    changed = False
    for identity, entry in list(current.audits.items()):
        mine = [k for k, v in entry.tasks.items() if v.path.startswith(f"{persona}/")]
        if mine:
            kept = {k: v for k, v in entry.tasks.items() if k not in mine}
            if kept:
                current.audits[identity] = restrict(entry, kept)
            else:
                current.audits.pop(identity)
            changed = True
    if audit is not None:
        audit = audit.model_copy(update={"created_at": stamp or audit.created_at})
        previous = current.audits.get(audit.judge)
        current.audits[audit.judge] = merge_audit(previous, audit)
        changed = True
    if not changed:
        return None
    return (json.dumps(current.model_dump(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
