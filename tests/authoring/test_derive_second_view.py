"""Derive hides two values, not one (issue 20): on the shipped set every Derive level asks for the carried
target on the policy's value and, beside it, on the value a rival rule of the same document sets. One hidden
option among the 3-8 a parameter declares is won by a fixed guess about once in k tasks; an ordered pair of
distinct options is not, and a guess that puts both views on one value never passes."""

from __future__ import annotations

import pytest

from certify.evaluate import select_tasks
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


@pytest.fixture(scope="module")
def derive_tasks():
    return [t for t in select_tasks(SHIPPED) if t.difficulty == "level2"]


def test_each_derive_grades_two_views_on_two_hidden_options(derive_tasks):
    assert len(derive_tasks) == 24
    for task in derive_tasks:
        hidden = [h.value for h in task.meta.hidden if h.kind == "carried"]
        assert len(hidden) == 2 and hidden[0] != hidden[1], task.id
        # each hidden value is the carried parameter of one graded view of the same widget, its other values equal
        views = [
            w
            for w in task.eval.required_widgets
            if w.min_count >= 0 and any(str(v) in hidden for v in (w.data_args or {}).values())
        ]
        by_widget: dict[str, list[dict]] = {}
        for w in views:
            by_widget.setdefault(w.widget_id, []).append(dict(w.data_args or {}))
        pairs = [args for args in by_widget.values() if len(args) >= 2]
        assert pairs, task.id
        a, b = pairs[0][:2]
        differing = {k for k in a if a[k] != b.get(k)}
        assert len(differing) == 1 and {str(a[k]) for k in differing} | {str(b[k]) for k in differing} == set(
            hidden
        ), task.id
        # the prompt says neither value
        for value in hidden:
            assert value not in task.prompt, (task.id, value)
