"""Strict and lenient reading of a model's reply, and what each kind of reply counts as."""

from __future__ import annotations

import pytest

from certify.agents.parsing import parse_arguments, parse_reply

ACTION = '{"tool": "get_widget_data", "args": {"origin": "Acme Data", "data_args": {"fund": "Beta"}}}'


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_a_bare_json_action_is_strict_in_both_modes(mode):
    parsed = parse_reply(f"  {ACTION}\n", mode)
    assert parsed.kind == "strict" and parsed.action.parse_error is None
    assert parsed.action.tool == "get_widget_data"
    assert parsed.action.args == {"origin": "Acme Data", "data_args": {"fund": "Beta"}}
    assert parsed.action.lenient is False


@pytest.mark.parametrize(
    "reply",
    [
        f"I'll read the data first.\n{ACTION}",
        f"```json\n{ACTION}\n```",
        f"{ACTION}\nThat should show the Beta rows.",
        f"<tool_call>{ACTION}</tool_call>",
        f'Thinking about {{"a": 1}} first, then: {ACTION} and {{"tool": "final_answer"}}',
    ],
)
def test_lenient_reads_the_first_object_with_a_tool(reply):
    parsed = parse_reply(reply, "lenient")
    assert parsed.kind == "lenient" and parsed.action.parse_error is None and parsed.action.lenient
    assert parsed.action.tool == "get_widget_data" and parsed.action.args["data_args"] == {"fund": "Beta"}
    strict = parse_reply(reply, "strict")
    assert strict.kind == "lenient" and strict.action.parse_error is not None
    assert "exactly one JSON object" in strict.action.parse_error and strict.action.raw == reply


def test_braces_inside_strings_do_not_confuse_the_scan():
    reply = (
        'Note: {"tool": "add_generative_widget", "args": {"widget_type": "note", "data": "a } brace {"}} ok'
    )
    parsed = parse_reply(reply, "lenient")
    assert parsed.action.args["data"] == "a } brace {"


def test_missing_args_means_no_arguments():
    parsed = parse_reply('{"tool": "get_workspace_snapshot"}', "strict")
    assert parsed.kind == "strict" and parsed.action.args == {}


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("I am not sure what to do next.", "not a single JSON object"),
        ('{"name": "get_workspace_snapshot"}', 'no "tool" string'),
        ('"get_workspace_snapshot"', "not an object"),
        (
            '{"tool": "update_widget", "args": "widget_uuid=w_pos"}',
            '"args" of update_widget must be a JSON object',
        ),
        ('Sure: {"tool": 3, "args": {}}', 'no "tool" string'),
        ('{"tool": "final_answer", "args": {"text": "unterminated}', "not a single JSON object"),
    ],
)
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_garbage_is_an_unparseable_action(reply, why, mode):
    parsed = parse_reply(reply, mode)
    assert parsed.kind == "failed"
    assert parsed.action.parse_error is not None and why in parsed.action.parse_error


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="strict, lenient"):
        parse_reply(ACTION, "loose")


def test_native_tool_arguments():
    assert parse_arguments("get_workspace_snapshot", "", "strict").action.args == {}
    ok = parse_arguments("read_widget", '{"widget_uuid": "w_pos"}', "strict")
    assert ok.kind == "strict" and ok.action.args == {"widget_uuid": "w_pos"}
    fenced = '```json\n{"widget_uuid": "w_pos"}\n```'
    assert parse_arguments("read_widget", fenced, "lenient").action.args == {"widget_uuid": "w_pos"}
    rejected = parse_arguments("read_widget", fenced, "strict")
    assert rejected.kind == "lenient" and "text around" in rejected.action.parse_error
    bad = parse_arguments("read_widget", "{widget_uuid: w_pos}", "lenient")
    assert (
        bad.kind == "failed"
        and "not valid JSON" in bad.action.parse_error
        and bad.action.tool == "read_widget"
    )
    listed = parse_arguments("read_widget", '["w_pos"]', "lenient")
    assert listed.kind == "failed" and "must be a JSON object" in listed.action.parse_error


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_a_nested_object_is_never_taken_for_the_whole_argument_set(mode):
    cut = '{"widget_uuid": "w_pos", "data_args": {"fund": "Beta"}'
    parsed = parse_arguments("update_widget", cut, mode)
    assert parsed.kind == "failed" and parsed.action.args == {}
    assert "truncated" in parsed.action.parse_error and "update_widget" in parsed.action.parse_error
    malformed = 'args: {widget_uuid: w_pos, "data_args": {"fund": "Beta"}} then {"widget_uuid": "w_2"}'
    lenient = parse_arguments("update_widget", malformed, "lenient")
    assert lenient.kind == "lenient" and lenient.action.args == {"widget_uuid": "w_2"}


def test_a_truncated_json_action_is_named_truncated():
    reply = '{"tool": "add_generative_widget", "args": {"widget_type": "note", "data": "Gamma QTD'
    for mode in ("strict", "lenient"):
        parsed = parse_reply(reply, mode)
        assert parsed.kind == "failed" and "truncated" in parsed.action.parse_error
    closed = parse_reply('{"tool": "read_widget", "args": {"widget_uuid": w_pos}}', "strict")
    assert closed.kind == "failed" and "truncated" not in closed.action.parse_error
