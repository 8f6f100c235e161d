"""No lower level of a story states what a higher level hides (issue 20: a player that met the story's level 0
read Find's target there). Established for every shipped task by the fairness review's own check, and shown to
bite: a ladder whose Execute names Find's target is a blocker."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from authoring.roles.fairness import stated_below, stated_elsewhere
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


def _stood_in(levels: dict[int, Task]) -> bool:
    """Whether every level of the story but Find works on a stand-in (none on the target for want of one)."""
    return all(t.meta is not None and t.meta.stands_in is not None for lv, t in levels.items() if lv != 1)


def _on_target(levels: dict[int, Task]) -> bool:
    """Whether the story's Execute works on its own target: a story asking for a judged analysis at every level
    whose analysed figure no other widget serves (`factcheck.working.execute_stories` keeps the analysis over
    hiding Find's target from a player that met level 0; the fairness review reports it as minor)."""
    execute = levels[0]
    return execute.eval.judged is not None and (execute.meta is None or execute.meta.stands_in is None)


def test_every_shipped_story_hides_what_its_lower_levels_do_not_say():
    stories = _stories()
    assert len(stories) == 24
    found = {name: stated_below(levels) for name, levels in stories.items()}
    # an analysis story whose Execute works on the target names Find's target there, and only that
    for name, levels in stories.items():
        if _on_target(levels):
            target = next(h.value for h in levels[1].meta.hidden if h.kind == "target")  # type: ignore[union-attr]
            assert set(found[name]) == {1} and found[name][1][0] == "blocker", name
            assert f"'{target}' is stated at level0" in found[name][1][1], name
            del found[name]
        elif any(t.meta and t.meta.on_target for t in levels.values()):
            # a level above Find with nothing to stand in for the target works on it and says why: reported
            assert set(found[name]) == {1} and stated_elsewhere(levels)[1][0] == "minor", name
            del found[name]
    assert {name: got for name, got in found.items() if got} == {}


def test_every_shipped_execute_stands_in_for_the_target_find_hides():
    on_target = []
    for name, levels in _stories().items():
        stand = levels[0].meta.stands_in if levels[0].meta else None
        hidden = [h.value for h in levels[1].meta.hidden if h.kind == "target"] if levels[1].meta else []
        if _on_target(levels):
            on_target.append(name)
            continue
        assert stand is not None, name
        assert hidden == [stand.for_name], name
        assert stand.name != stand.for_name, name
    # at most the analysis stories (one per persona) work their Execute on the target, not every one of them:
    # portfolio_manager's Execute asks its analysis over a stand-in serving the figure
    assert len(on_target) < 6 and "portfolio_manager/keel_europe_tilt" not in on_target, on_target


def test_no_shipped_level_but_find_names_the_target_find_hides():
    """Derive, Ground and Compose work on a stand-in too (`factcheck.working`, drawn per level): a player that read
    the published taskset's higher levels does not read Find's answer there. Only a level asking for a judged
    analysis that no stand-in serves works on the target itself (reported, as at Execute)."""
    from certify import states_value

    on_target = []
    for name, levels in _stories().items():
        hidden = next(h.value for h in levels[1].meta.hidden if h.kind == "target")  # type: ignore[union-attr]
        for lv in (0, 2, 3, 4):
            if not states_value(levels[lv].prompt, hidden, any_case=True):
                continue
            meta = levels[lv].meta
            assert _on_target({0: levels[lv]}) or (meta and meta.on_target), (
                f"{name} level{lv} names {hidden!r}"
            )
            on_target.append(f"{name}/level{lv}")
    assert len({n.rsplit("/", 1)[0] for n in on_target}) < 6, on_target


def test_a_level_above_find_keeps_its_own_hidden_value_on_its_stand_in():
    """Derive's carried values and Ground's fact sit on the widget the level works on: a stand-in is graded on
    them where the target was (the graded values stay constant, only the widget differs), and on no value Find
    does not grade the target on but those the level itself hides."""
    moved = 0
    for name, levels in _stories().items():
        for lv in (2, 3, 4):
            task = levels[lv]
            stand = task.meta.stands_in if task.meta else None
            if stand is None:
                continue
            moved += 1
            assert stand.for_name == next(h.value for h in levels[1].meta.hidden if h.kind == "target"), name
            assert stand.name not in [h.value for h in levels[1].meta.hidden], name
            carried = {h.value for h in task.meta.hidden if h.kind == "carried"}  # type: ignore[union-attr]
            graded = [{str(v) for v in r.data_args.values()} for r in task.eval.required_widgets] + [
                {str(v) for v in (s.args.get("data_args") or {}).values()}
                for s in task.eval.required_tools
                if s.tool == "get_widget_data"
            ]
            if lv == 2:
                # Derive's carried values are graded still (on the stand-in where it carries them)
                assert carried and carried <= set().union(*graded), (name, lv, carried, graded)
    assert moved >= 40, moved


def test_a_target_named_above_is_a_blocker():
    """The property holds for every level, not only below Find: a higher level naming Find's target is read
    by a player that saw the published taskset's higher levels."""
    levels = next(ls for ls in _stories().values() if _stood_in(ls))
    hidden = next(h for h in levels[1].meta.hidden if h.kind == "target")  # type: ignore[union-attr]
    for lv in (2, 3, 4):
        leaky = levels[lv].model_copy(update={"prompt": levels[lv].prompt + f" Then look at {hidden.value}."})
        got = stated_below({**levels, lv: leaky})
        assert got[1][0] == "blocker" and f"stated at level{lv}" in got[1][1], lv


def test_a_level_on_the_target_because_nothing_stands_in_is_reported_not_blocked():
    """Where no stand-in fits a level above Find (`meta.on_target` says why), it keeps working on the target, as
    today, and the review reports it as minor with that reason; the same naming without a reason blocks."""
    levels = next(ls for ls in _stories().values() if _stood_in(ls))
    hidden = next(h for h in levels[1].meta.hidden if h.kind == "target")  # type: ignore[union-attr]
    named = levels[3].prompt + f" Then look at {hidden.value}."
    meta = levels[3].meta.model_copy(update={"stands_in": None, "on_target": "nothing takes its values"})  # type: ignore[union-attr]
    excused = levels[3].model_copy(update={"prompt": named, "meta": meta})
    got = stated_elsewhere({**levels, 3: excused})
    assert got[1][0] == "minor" and "level3: nothing takes its values" in got[1][1]
    blunt = levels[3].model_copy(update={"prompt": named})
    assert stated_elsewhere({**levels, 3: blunt})[1][0] == "blocker"


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


def test_an_instance_among_twins_is_said_below_only_by_what_it_shows():
    """A Find target standing between twin instances of its own widget is hidden as an instance
    (`HiddenValue.instance`): its widget's name is on the pointer's entries, so a lower level naming the widget
    does not say which instance; one that states what the instance is seeded on, or repairs a widget seated on
    it, does."""
    from certify.task import HiddenValue

    # The lower level: a shipped level (Execute first) that repairs one seat and keeps another on a value of its
    # own. Since the one decoy rule (players6) a repair's furniture takes the values its target shows, so no
    # shipped Execute (its target the stand-in) keeps a seat on a value the stand-in does not show; a Derive whose
    # board keeps a look-alike on another status does. stated_below reads only what the lower level says.
    levels, execute = next(
        (ls, ls[lv])
        for lv in range(4)
        for ls in _stories().values()
        if _worked(ls[lv]) and _seated_kept(ls[lv])
    )
    repaired, kept = _worked(execute), _seated_kept(execute)
    name = next(h.value for h in levels[1].meta.hidden if h.kind == "target")  # type: ignore[union-attr]

    def find_hiding(instance: dict[str, str]):
        hidden = [HiddenValue(kind="target", value=name, instance=instance)]
        return levels[1].model_copy(update={"meta": levels[1].meta.model_copy(update={"hidden": hidden})})

    named = execute.model_copy(update={"prompt": execute.prompt + f" Then look at {name}."})
    # the widget named, the instance neither stated nor worked on below: sound
    key, value = next(iter(kept.items()))
    assert 1 not in stated_below({0: named, 1: find_hiding({key: value})})
    # level 0 repairs a widget seated on what the instance shows: a blocker
    key, value = next(iter(repaired.items()))
    got = stated_below({0: execute, 1: find_hiding({key: value})})
    assert got[1][0] == "blocker"
    # or states it
    other = {key: "ZZQX"}
    stating = execute.model_copy(update={"prompt": execute.prompt + " It was on ZZQX."})
    assert 1 not in stated_below({0: execute, 1: find_hiding(other)})
    assert stated_below({0: stating, 1: find_hiding(other)})[1][0] == "blocker"


def _seats(task: Task) -> list[tuple[dict, bool]]:
    """Each seated widget's values, and whether the task grades it to stay as seated."""
    board = task.setup.model_dump()["initial_state"]["dashboard"]
    return [
        (
            {str(k): str(v) for k, v in (w.get("data_args") or {}).items()},
            any(
                (r.origin, r.widget_id) == (w["origin"], w["widget_id"])
                and (w.get("data_args") or {}).items() <= r.data_args.items()
                for r in task.eval.required_widgets
            ),
        )
        for w in board.get("widgets") or []
    ]


def _worked(task: Task) -> dict[str, str]:
    """The values of a seat the task repairs, less those any kept seat shares (empty: it repairs none)."""
    shared = {kv for args, kept in _seats(task) if kept for kv in args.items()}
    return next(
        ({k: v for k, v in args.items() if (k, v) not in shared} for args, kept in _seats(task) if not kept),
        {},
    )


def _seated_kept(task: Task) -> dict[str, str]:
    worked = {kv for args, kept in _seats(task) if not kept for kv in args.items()}
    return next(
        ({k: v for k, v in args.items() if (k, v) not in worked} for args, kept in _seats(task) if kept), {}
    )
