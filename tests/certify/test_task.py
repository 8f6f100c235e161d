import json

import pytest

from certify.task import Task, TaskFileError, TaskSet, deep_merge, load_task, parse_task
from tests.certify.helpers import raw
from tests.conftest import COMPAT_TASKS, needs_compat


def test_base_task_parses():
    t = Task.model_validate(raw())
    assert t.level == 0 and t.eval.turn_budget == 8
    assert t.eval.required_tools[1].graded() == {
        "widget_uuid": "w_pos",
        "data_args": {"fund": "Gamma", "period": "QTD"},
    }
    assert t.eval.required_tools[1].outcome and t.eval.required_tools[2].outcome


def test_defaults_apply_where_the_task_is_silent():
    t = Task.model_validate(raw(**{"eval.trace_checks": {}}))
    assert t.eval.trace_checks.max_invalid_tool_calls == 0
    assert t.eval.trace_checks.forbid_invented_widget_ids is True
    assert t.eval.layout.within_grid is True


def test_task_defaults_merge_key_by_key():
    defaults = {
        "category": "story",
        "eval": {
            "trace_checks": {"max_invalid_tool_calls": 2, "forbid_invented_widget_ids": True},
            "workspace_checks": {"preserve_other_dashboards": True},
        },
    }
    mine = raw(**{"eval.trace_checks": {"max_invalid_tool_calls": 5}})
    t = parse_task(mine, "x.json", defaults)
    assert t.category == "story"
    assert t.eval.trace_checks.max_invalid_tool_calls == 5
    assert t.eval.workspace_checks.preserve_other_dashboards is True
    assert deep_merge({"a": [1, 2], "b": {"c": 1}}, {"a": [3], "b": {"d": 2}}) == {
        "a": [3],
        "b": {"c": 1, "d": 2},
    }


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        ("{bad json", "line 1 column 2", "invalid JSON"),
        ("[]", "(root)", "JSON object"),
        (json.dumps(raw(surprise=1)), "surprise", "unknown key"),
        (
            json.dumps(raw(**{"eval.required_widgets": [{"widget_id": "w"}]})),
            "eval.required_widgets.0.origin",
            "required key is missing",
        ),
        (
            json.dumps(raw(**{"eval.required_widgets": [{"origin": "A"}]})),
            "eval.required_widgets.0",
            "give widget_id or name",
        ),
        (json.dumps(raw(**{"eval.max_turns": "many"})), "eval.max_turns", "integer"),
        (json.dumps(raw(id="../escape")), "id", "path separator"),
        (json.dumps(raw(difficulty="level9")), "difficulty", "level0"),
        (
            json.dumps(
                raw(**{"setup.initial_state.dashboard.widgets": [{"widget_id": "x", "colour": "red"}]})
            ),
            "setup.initial_state.dashboard.widgets.0.colour",
            "unknown key",
        ),
    ],
)
def test_malformed_files_name_file_and_field(tmp_path, content, field, message):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert info.value.file == str(path)
    assert info.value.field == field
    assert message in info.value.message


def test_taskset_found_upward(tmp_path):
    root = tmp_path / "ts"
    (root / "persona").mkdir(parents=True)
    (root / "taskset.json").write_text(
        json.dumps(
            {
                "taskset_id": "ts",
                "workspace_baseline": "lived",
                "task_defaults": {"eval": {"layout": {"no_overlaps": True}}},
            }
        )
    )
    body = raw()
    body["setup"].pop("workspace_baseline")
    body["eval"].pop("layout")
    (root / "persona" / "desk_fix_level0.json").write_text(json.dumps(body))
    t = load_task(root / "persona" / "desk_fix_level0.json")
    assert t.setup.workspace_baseline == "lived" and t.eval.layout.no_overlaps is True
    assert [p.name for p in TaskSet.find(root / "persona").task_files()] == ["desk_fix_level0.json"]


def test_bad_manifest(tmp_path):
    (tmp_path / "taskset.json").write_text(json.dumps({"taskset_id": "x", "oops": 1}))
    with pytest.raises(TaskFileError, match="oops"):
        TaskSet.load(tmp_path)


@needs_compat
def test_every_published_task_parses_unchanged():
    ts = TaskSet.load(COMPAT_TASKS)
    files = ts.task_files()
    assert len(files) >= 25
    for path in files:
        t = load_task(path, ts)
        assert t.eval.trace_checks.max_invalid_tool_calls == 2
        assert t.setup.workspace_baseline == "stark-workspace-a"
