"""The capability ladder: each rung passes the level of its capability and fails the level above it, on tasks
built in code and on shipped and compat tasks; no rung ever receives the eval block or the task's metadata."""

from __future__ import annotations

import asyncio
import json

import pytest

from certify.agents import TaskView, family, resolve_agent
from certify.agents.ladder import LADDER, LadderAgent
from certify.task import TaskSet, load_task
from certify.trial import run_trial
from simulator import World
from tests.certify.ladder_tasks import ladder_raw, ladder_task, ladder_world
from tests.conftest import COMPAT_TASKS, COMPAT_WORLD, ROOT, needs_compat

SHIPPED = ROOT / "tasksets" / "workspace_tasks"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    return World.load(ladder_world(tmp_path_factory.mktemp("ladder") / "world"))


def run(world: World, task, agent):
    return asyncio.run(run_trial(world, task, agent))


def test_the_family_and_its_members_are_registered():
    assert family("ladder") == LADDER == ("ladder-0", "ladder-1", "ladder-2", "ladder-3", "ladder-4")
    agents = [resolve_agent(name) for name in LADDER]
    assert [a.rung for a in agents] == [0, 1, 2, 3, 4]
    assert all(a.deterministic and not a.privileged for a in agents)
    with pytest.raises(ValueError, match="is a family"):
        resolve_agent("ladder")
    with pytest.raises(ValueError, match=r"rungs are 0\.\.4"):
        LadderAgent(5)


@pytest.mark.parametrize("rung", range(5))
def test_each_rung_passes_its_level_and_the_rung_below_fails_it(world, rung):
    task = ladder_task(rung)
    assert run(world, task, resolve_agent("oracle")).passed, "the task itself must be solvable"
    own = run(world, task, resolve_agent(f"ladder-{rung}"))
    assert own.valid and own.passed, (own.fingerprint, [(e["tool"], e["args"]) for e in own.events])
    if rung:
        below = run(world, task, resolve_agent(f"ladder-{rung - 1}"))
        assert below.valid and below.passed is False


@pytest.mark.parametrize("rung", range(4))
def test_each_rung_fails_the_level_above_it(world, rung):
    trial = run(world, ladder_task(rung + 1), resolve_agent(f"ladder-{rung}"))
    assert trial.valid and trial.passed is False


def test_find_ranks_the_catalog_by_description(world):
    trial = run(world, ladder_task(1), resolve_agent("ladder-1"))
    update = next(e for e in trial.events if e["tool"] == "update_widget")
    assert update["args"] == {"widget_uuid": "w_pos", "data_args": {"fund": "Beta", "period": "QTD"}}
    assert any("found desk_overview_positions" in str(x.get("reasoning")) for x in trial.transcript)


def test_derive_reads_the_document_that_defines_the_policy_and_ignores_its_neighbour(world):
    trial = run(world, ladder_task(2), resolve_agent("ladder-2"))
    reads = [e["args"]["uri"] for e in trial.events if e["tool"] == "read_workspace_resource"]
    assert reads == ["openbb://workspace/app-builder/index", "openbb://workspace/desk/conventions"]
    year_end = ladder_raw(2, prompt=ladder_raw(2)["prompt"].replace("quarter-end", "year-end"))
    year_end["eval"]["required_widgets"][0]["data_args"]["period"] = "YTD"
    year_end["eval"]["required_tools"][-3]["args"]["data_args"]["period"] = "YTD"
    from certify.task import Task

    trial = run(world, Task.model_validate(year_end), resolve_agent("ladder-2"))
    assert (
        next(e for e in trial.events if e["tool"] == "update_widget")["args"]["data_args"]["period"] == "YTD"
    )


def test_derive_finds_a_policy_defined_in_a_note_on_the_dashboard_without_reading_anything(world):
    raw = ladder_raw(2)
    raw["setup"]["initial_state"]["dashboard"]["generated_widgets"] = [
        {
            "widget_type": "note",
            "widget_uuid": "w_rules",
            "name": "Desk Rules",
            "tab_id": "review",
            "data": "The quarter-end book rule: period QTD. The year-end book rule: period YTD.",
            "layout": {"x": 0, "y": 10, "w": 20, "h": 6},
        }
    ]
    raw["eval"]["required_layouts"].append(
        {"widget_uuid": "w_rules", "tab_id": "review", "x": 0, "y": 10, "w": 20, "h": 6}
    )
    from certify.task import Task

    trial = run(world, Task.model_validate(raw), resolve_agent("ladder-2"))
    assert trial.passed, trial.fingerprint
    assert not any(e["tool"] in ("read_workspace_resource", "get_skill_content") for e in trial.events)


def test_ground_writes_the_asked_step_and_not_the_whole_skill(world):
    trial = run(world, ladder_task(3), resolve_agent("ladder-3"))
    note = next(e for e in trial.events if e["tool"] == "add_generative_widget")["args"]["data"]
    assert "amber ledger stamp" in note and "Tie out cash" not in note


def test_execute_reads_what_it_is_told_but_extracts_nothing(world):
    trial = run(world, ladder_task(3), resolve_agent("ladder-0"))
    assert any(
        e["tool"] == "get_skill_content" and e["args"] == {"slug": "close-checklist"} for e in trial.events
    )
    note = next(e for e in trial.events if e["tool"] == "add_generative_widget")["args"]["data"]
    assert "amber" not in note


def test_compose_builds_instantiates_in_the_background_and_places_what_it_built(world):
    trial = run(world, ladder_task(4), resolve_agent("ladder-4"))
    tools = [e["tool"] for e in trial.events]
    assert tools.index("manage_backends") < tools.index("manage_apps") < tools.index("create_widget")
    instantiate = next(e for e in trial.events if e["tool"] == "manage_apps")
    assert instantiate["args"]["activate"] is False and instantiate["args"]["app_name"] == "Desk Watch App"
    placed = next(e for e in trial.events if e["tool"] == "create_widget")
    assert placed["args"] == {"origin": "Desk Watch Service", "widget_id": "watch_register"}


class Spy:
    """Wraps a ladder rung and records everything its session is given."""

    privileged = False
    deterministic = True

    def __init__(self, inner: LadderAgent) -> None:
        self.inner, self.name = inner, inner.name
        self.views: list[TaskView] = []
        self.tasks: list[object] = []
        self.observations: list[object] = []

    def session(self, view, task=None):
        self.views.append(view)
        self.tasks.append(task)
        inner, spy = self.inner.session(view, task), self

        class Recording:
            usage = inner.usage

            async def next_action(self, observation):
                spy.observations.append(observation)
                return await inner.next_action(observation)

            def transcript(self):
                return inner.transcript()

        return Recording()


def test_a_rung_never_receives_the_eval_block_or_the_metadata(world):
    raw = ladder_raw(4)
    raw["eval"]["required_generated_widgets"] = [
        {"widget_type": "note", "name_contains": "EVAL-SENTINEL-7f3", "data_contains": ["EVAL-SENTINEL-7f3"]}
    ]
    raw["meta"] = {
        "persona": "desk_head",
        "story": "desk_watch",
        "level": 4,
        "hidden": [{"kind": "planted", "value": "META-SENTINEL-9c1", "source": "close-checklist"}],
    }
    from certify.task import Task

    task = Task.model_validate(raw)
    spy = Spy(resolve_agent("ladder-4"))
    trial = run(world, task, spy)
    assert trial.valid and spy.tasks == [None]
    seen = json.dumps([vars(v) for v in spy.views] + spy.observations + trial.transcript, default=str)
    assert "EVAL-SENTINEL" not in seen and "META-SENTINEL" not in seen
    assert set(vars(spy.views[0])) == {"task_id", "prompt", "tools", "rules"}
    renamed = Task.model_validate({**raw, "id": "anything_else"})
    again = run(world, renamed, resolve_agent("ladder-4"))
    assert [(e["tool"], e["args"]) for e in again.events] == [(e["tool"], e["args"]) for e in trial.events]


# ------------------------------------------------------------------------- tasks nobody here wrote for the ladder
def shipped(task_id: str):
    persona = next(p.name for p in SHIPPED.iterdir() if (p / f"{task_id}.json").is_file())
    taskset = TaskSet.load(SHIPPED)
    return taskset.world(None), load_task(SHIPPED / persona / f"{task_id}.json", taskset)


@pytest.mark.parametrize(
    ("task_id", "passes", "fails"),
    [
        ("listed_pulled_orders_level0", "ladder-0", None),
        ("basket_desk_shortfall_level3", "ladder-3", "ladder-2"),
        ("flow_credit_liquidity_limit_level3", "ladder-3", "ladder-2"),
        ("listed_pulled_orders_level4", "ladder-4", "ladder-3"),
    ],
)
def test_shipped_tasks(task_id, passes, fails):
    world, task = shipped(task_id)
    assert run(world, task, resolve_agent(passes)).passed
    if fails:
        assert run(world, task, resolve_agent(fails)).passed is False


def test_a_fenced_off_twin_is_left_alone_and_the_stale_instance_repaired():
    world, task = shipped("flow_credit_liquidity_limit_level3")
    trial = run(world, task, resolve_agent("ladder-3"))
    updates = [e["args"] for e in trial.events if e["tool"] == "update_widget"]
    # the stale instance repaired with the handbook's limit type; the fenced-off copy (w_c087) left alone
    assert updates == [
        {"widget_uuid": "w_1f16", "data_args": {"desk": "Credit Flow", "limit_type": "Liquidity"}},
    ]
    assert trial.passed
    below = run(world, task, resolve_agent("ladder-0"))
    assert [e["args"]["widget_uuid"] for e in below.events if e["tool"] == "update_widget"] == ["w_1f16"]
    assert not below.passed


@needs_compat
@pytest.mark.parametrize(
    ("path", "passes", "fails"),
    [
        ("fund_operations/settlement_watch_level0.json", "ladder-0", None),
        ("client_advisor/client_review_level3.json", "ladder-3", "ladder-2"),
        ("fund_operations/nav_close_repair_level4.json", "ladder-4", "ladder-3"),
    ],
)
def test_compat_tasks(path, passes, fails):
    taskset = TaskSet.load(COMPAT_TASKS)
    task = load_task(COMPAT_TASKS / path, taskset)
    world = World.load(COMPAT_WORLD)
    assert run(world, task, resolve_agent(passes)).passed
    if fails:
        assert run(world, task, resolve_agent(fails)).passed is False


def test_rungs_are_deterministic():
    world, task = shipped("basket_desk_shortfall_level4")
    first, second = (run(world, task, resolve_agent("ladder-4")) for _ in range(2))
    assert [(e["tool"], e["args"]) for e in first.events] == [(e["tool"], e["args"]) for e in second.events]


@needs_compat
@pytest.mark.parametrize(
    ("path", "why"),
    [
        # the description names no column it serves: eight schemas to read, nine turns in all
        ("client_advisor/client_review_level1.json", "budget"),
        # "the live price watch" is the catalog's description, not what Live Grid serves (symbol, price, ...)
        ("client_advisor/holdings_watch_level1.json", "not_found"),
    ],
)
def test_compat_find_levels_written_in_catalog_words_are_beyond_a_content_reader(path, why):
    """A finding about the source corpus, kept visible: its Find levels describe the target in the catalog's
    own description words, which is what a description matcher exploits (issue 20 item 2). ladder-1 finds by
    what a widget serves (its columns and filters, read from each candidate's schema), so on these two it runs
    out of turns or finds nothing; the oracle still certifies them (the reference is the source's own)."""
    taskset = TaskSet.load(COMPAT_TASKS)
    task = load_task(COMPAT_TASKS / path, taskset)
    trial = run(World.load(COMPAT_WORLD), task, resolve_agent("ladder-1"))
    assert not trial.passed
    tools = [e["tool"] for e in trial.events]
    if why == "budget":
        assert len(tools) == task.eval.max_turns and tools.count("get_widget_schema") >= 6
    else:
        assert "update_widget" not in tools and "create_widget" not in tools
