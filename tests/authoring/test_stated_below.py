"""No lower level of a story states what a higher level hides (issue 20: a player that met the story's level 0
read Find's target there). Established for every shipped task by the fairness review's own check, and shown to
bite: a ladder whose Execute names Find's target is a blocker."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from authoring.roles.fairness import stated_below
from certify.task import Task
from tests.conftest import ROOT

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


def _stories() -> dict[str, dict[int, Task]]:
    out: dict[str, dict[int, Task]] = defaultdict(dict)
    for path in sorted(Path(SHIPPED).glob("*/*_level?.json")):
        task = Task.model_validate(json.loads(path.read_text()))
        assert task.meta is not None and task.meta.story and task.meta.level is not None
        out[f"{task.meta.persona}/{task.meta.story}"][task.meta.level] = task
    return out


def test_every_shipped_story_hides_what_its_lower_levels_do_not_say():
    stories = _stories()
    assert len(stories) == 24
    found = {name: stated_below(levels) for name, levels in stories.items()}
    assert {name: got for name, got in found.items() if got} == {}


def test_every_shipped_execute_stands_in_for_the_target_find_hides():
    for name, levels in _stories().items():
        stand = levels[0].meta.stands_in if levels[0].meta else None
        hidden = [h.value for h in levels[1].meta.hidden if h.kind == "target"] if levels[1].meta else []
        assert stand is not None, name
        assert hidden == [stand.for_name], name
        assert stand.name != stand.for_name, name


def test_a_target_named_below_is_a_blocker_and_a_copied_carried_value_is_reported():
    levels = next(iter(_stories().values()))
    hidden = next(h for h in levels[1].meta.hidden if h.kind == "target")  # type: ignore[union-attr]
    leaky = levels[0].model_copy(update={"prompt": levels[0].prompt + f" Then look at {hidden.value}."})
    got = stated_below({**levels, 0: leaky})
    assert got[1][0] == "blocker" and hidden.value in got[1][1]
    # a level every hidden value of which a lower level says is copied: reported
    derive = levels[2]
    said = " ".join(h.value for h in derive.meta.hidden)  # type: ignore[union-attr]
    copied = levels[1].model_copy(update={"prompt": levels[1].prompt + f" ({said})"})
    got = stated_below({**levels, 1: copied})
    assert got.get(2, ("", ""))[0] == "minor"
