"""scripts/trial_cost.py measures what it says (issue 24): a reference played over the wire, every request's
prefix shared with the one before counted, and what is left unshared said by part."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("trial_cost", ROOT / "scripts" / "trial_cost.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_reference_trial_is_measured_and_its_unshared_tokens_said_by_part():
    from certify.evaluate import select_tasks
    from certify.task import TaskSet

    tc = _script()
    taskset = ROOT / "tasksets" / "workspace_tasks"
    task = select_tasks(taskset)[0]
    row = asyncio.run(tc.measure(TaskSet.load(taskset).world(None), task, "tools"))
    assert row["passed"] and row["requests"] == len(task.eval.reference_steps()) + 1
    # the history is only appended: what is unshared is the last request, which its parts make up
    assert abs(sum(row["unshared"].values()) - row["uncached_tokens"]) <= 1
    assert {"prefix", "task", "model", "list_available_widgets"} <= set(row["unshared"])
    assert 0 < row["prefix_share"] < 1 - 1 / row["requests"] + 1e-9  # at most the ceiling


class _ByteTokens:
    """A template whose rendering is the compact JSON and whose tokens are single bytes."""

    def __init__(self, tc) -> None:
        self.tc = tc

    def render(self, body):
        return self.tc.rendered(body).encode()

    def ends(self, prompt):
        return list(range(1, len(prompt) + 1))


def test_token_counts_agree_with_counting_each_request_whether_or_not_the_history_was_rewritten():
    tc = _script()
    system = {"role": "system", "content": "s"}
    grown = [[system, {"role": "user", "content": "u"}]]
    grown.append([*grown[0], {"role": "assistant", "content": "ok"}])
    rewritten = [[system, {"role": "user", "content": "u" * n}] for n in (3, 9)]
    template = _ByteTokens(tc)
    for history in (grown, rewritten):
        texts = [template.render({"messages": m}) for m in history]
        total, shared, tokens = tc.prefix_measure(texts, template)
        assert total == sum(len(t) for t in texts)
        assert shared == sum(tc.common_prefix(a, b) for a, b in itertools.pairwise(texts)) > 0
        assert tokens(5) == 5
