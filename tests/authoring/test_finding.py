"""Flag and ReviewItem share one Finding base; the files they are written to keep the field order they always
had (pydantic alone would put the base's fields first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from authoring.flags import FINDING_FIELDS, Finding, make_flag
from authoring.review import ReviewFile, item_flag, run_items

SHIPPED = Path(__file__).resolve().parents[2] / "tasksets" / "workspace_tasks" / "reviews"


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.json")), ids=lambda p: p.stem)
def test_a_shipped_review_file_is_written_again_byte_for_byte(path):
    data = path.read_bytes()
    parsed = ReviewFile.parse(data, str(path))
    assert parsed.items, f"{path.name} has no items: nothing is compared"
    assert parsed.render() == data


def test_a_flag_writes_its_fields_in_its_declared_order_with_the_finding_in_place():
    flag = make_flag(
        role="validator", kind="ambiguity", persona="p", check="c", severity="minor", reason="why", story="s"
    )
    keys = list(flag.model_dump())
    assert keys[:3] == ["id", "role", "kind"]
    assert keys.index("check") == keys.index("level") + 1
    assert set(FINDING_FIELDS) <= set(keys)


def test_a_flag_made_into_a_review_item_and_back_keeps_its_finding():
    flag = make_flag(
        role="fairness",
        kind="level_gap",
        persona="p",
        check="fairness.gap",
        severity="blocker",
        reason="level 2 gives level 3 away",
        story="s",
        task_id="s_level2",
        level=2,
        evidence="both ask for the same value",
        suggestion="hide the value at level 3",
    )
    (item,) = run_items([flag], run="r1", taskset="t", pending={flag.id}, finished=False)
    assert item.source == "graph"
    back = item_flag(item)
    assert {k: getattr(back, k) for k in FINDING_FIELDS} == {k: getattr(flag, k) for k in FINDING_FIELDS}
    assert back.check == flag.check and back.id == flag.id


def test_a_finding_whose_written_order_misses_a_field_is_refused_when_declared():
    with pytest.raises(TypeError, match=r"WRITTEN must list each of its fields once"):

        class Partial(Finding):  # declaring it is the test
            WRITTEN = ("kind",)
            extra: str = ""
