"""Nodes and routes of the authoring graph called alone, and the checkpoint serializer on what each version wrote."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.runtime import Runtime
from langgraph.types import Send

from authoring.flags import make_flag
from authoring.graph import CheckpointFormatError, RunContext, serializer
from authoring.graph.nodes import after_validation, fairness
from authoring.graph.routes import route_after_revise
from authoring.graph.state import AuthoredTask, Certification, Cursor, Rounds, Validation
from authoring.options import RunOptions
from tests.authoring.test_pipeline import FlaggingFairness, drivers


def opts(**kw) -> RunOptions:
    return RunOptions(
        persona="desk_head", tasksets_dir="t", sources_root="s", skills_dir="k", world="w", **kw
    )


def blocker(role: str, task_id: str):
    return make_flag(
        role=role,  # type: ignore[arg-type]
        kind=role,
        persona="desk_head",
        story=task_id.rsplit("_level", 1)[0],
        task_id=task_id,
        level=1,
        check="clarity",
        severity="blocker",
        reason="unclear",
    )


def test_validator_blockers_go_back_while_their_rounds_last():
    f = blocker("validator", "risk_repair_level1")
    runtime = Runtime(context=RunContext(opts(review_rounds=2), drivers()))
    sent = after_validation({"flags": {f.id: f}, "rounds": Rounds(validator=1, fix=1)}, runtime)
    assert sent == {"revise": ["risk_repair_level1"], "rounds": Rounds(validator=2, fix=1)}
    spent = after_validation({"flags": {f.id: f}, "rounds": Rounds(validator=2)}, runtime)
    assert spent == {"revise": []}, "out of rounds: the set moves on, the blocker waits for a person"


def test_a_revision_goes_where_its_reviewer_sends_it():
    task = AuthoredTask(raw={"id": "a_level1"}, cert=Certification(certified=True), story="a", level=1)
    state = {"revise": ["a_level1"], "tasks": {"a_level1": task}}
    assert route_after_revise({**state, "rounds": Rounds(after_revise="recertify")}) == "recertify"
    (send,) = route_after_revise({**state, "rounds": Rounds(after_revise="validate")})
    assert send == Send("validate", Validation(task_id="a_level1", raw={"id": "a_level1"}))
    uncertified = task.model_copy(update={"cert": Certification(certified=False)})
    assert route_after_revise({**state, "tasks": {"a_level1": uncertified}}) == "after_validation"


def test_fairness_spends_its_own_rounds_and_sends_the_revision_to_the_recertification(
    sources, repo, mini_world_path
):
    from tests.authoring.test_pipeline import options

    run = RunContext(options(sources, repo, mini_world_path), drivers(fairness=FlaggingFairness()))
    tasks = {}
    for slug in ("morning_positions", "risk_repair"):
        ctx = run.contexts()[slug]
        for level in range(5):
            raw = run.drivers.author.draft(ctx, level, [], []).task
            tasks[raw["id"]] = AuthoredTask(raw=raw, cert=run.certify(raw), story=slug, level=level)
    state = {"stories": ["morning_positions", "risk_repair"], "tasks": tasks, "rounds": Rounds(validator=2)}
    out = fairness(state, Runtime(context=run))
    assert out["revise"] == ["risk_repair_level1"]
    assert out["rounds"] == Rounds(validator=2, fairness=1, after_revise="recertify")


def test_rounds_read_the_counter_dict_of_earlier_versions():
    assert Rounds.upgrade({}) == Rounds()
    assert Rounds.upgrade({"validator": 1, "fairness": 2, "revise_from": 2}) == Rounds(
        validator=1, fairness=2, after_revise="recertify"
    )
    assert Rounds.upgrade({"fix": 1, "revise_from": 1}) == Rounds(fix=1, after_revise="validate")
    assert Rounds.upgrade(Rounds(fix=2)) == Rounds(fix=2)


def earlier(model: type, module: str = "authoring.state") -> type:
    """The same model as an earlier version named it."""
    return type(model.__name__, (model,), {"__module__": module})


def test_the_serializer_reads_what_earlier_versions_wrote_as_todays_models():
    theirs = JsonPlusSerializer(allowed_msgpack_modules=True)
    ours = serializer()
    old = earlier(RunOptions)(persona="p", tasksets_dir="t", sources_root="s", skills_dir="k", world="w")
    read = ours.loads_typed(theirs.dumps_typed({"options": old}))
    assert type(read["options"]) is RunOptions and read["options"] == opts().model_copy(
        update={"persona": "p"}
    )

    cursor = {"story": "a", "level": 2, "round": 1, "feedback": ["gate x"], "history": []}
    (send,) = ours.loads_typed(theirs.dumps_typed([Send("draft", cursor)]))
    assert send == Send("draft", Cursor.model_validate(cursor)), (
        "a draft's dict payload is read as its Cursor"
    )
    today = Send("validate", Validation(task_id="a_level1", raw={"id": "a_level1"}))
    assert ours.loads_typed(ours.dumps_typed(today)) == today


def test_the_serializer_refuses_what_it_does_not_know_instead_of_reading_a_dict():
    theirs = JsonPlusSerializer(allowed_msgpack_modules=True)
    unknown = earlier(Rounds, "authoring.somewhere_else")(fix=1)
    with pytest.raises(CheckpointFormatError, match=r"authoring\.somewhere_else\.Rounds"):
        serializer().loads_typed(theirs.dumps_typed({"rounds": unknown}))
    broken = earlier(RunOptions).model_construct(persona="p")
    with pytest.raises(CheckpointFormatError, match="RunOptions does not read as one"):
        serializer().loads_typed(theirs.dumps_typed(broken))
