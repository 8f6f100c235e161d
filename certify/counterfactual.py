"""Counterfactual copies of a task: the same request in a world whose source says something else.

A level's hidden value (Find's target, Derive's carried value, Ground's fact) is meant to come from a source —
the catalog's content, a policy document, a fact's passage. That is established per task, not assumed: the task
is copied into a world where the source says another thing (another widget is the one that fits the description;
the documents the reference reads define the phrase as another option; the fact's passage states another value),
with the eval that world implies. Then
- the reference agent of the level (the ladder rung, which reads sources and nothing privileged) must pass the
  copy: reading the source, it reaches the other state;
- the original reference, replayed in the copy, must fail it: the source changes the right answer, so no fixed
  behaviour passes both copies;
- every shortcut agent (the gated battery and the probes) must fail at least one of the two copies.

Nothing here edits a file: the copies are built in memory from the task and the world (frozen dataclasses
replaced, an eval rewritten as JSON), so a counterfactual costs a few replays.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from simulator import Workspace, World, option_values, value_allowed

from .agents.knowledge import defines, policy_value
from .agents.reading import option_mentions
from .agents.request import note_entries, read_request, shown_by
from .episode import ByObject, Episode, start_episode
from .task import Task
from .trial import drive

# What the three kinds of source are called in a verdict.
SOURCE_WORDS = {
    "target": "another widget fits the description",
    "carried": "the policy the reference reads defines the phrase as another option",
    "planted": "the fact's passage states another value",
}
# A free-text value (a title) has no declared alternatives: its counterfactual is one of these, the first the
# task does not already use.
TITLE_ALTERNATIVES = ("Desk Ledger", "Working Papers", "Review Sheet", "Morning Sheet")


@dataclass
class Copy:
    """One counterfactual: what changed (`value` → `other`, in `where`), the world and the task it implies."""

    kind: str
    value: str
    other: str
    where: str
    world: World
    task: Task


@dataclass
class NotApplicable:
    """A hidden value for which no counterfactual can be built, and why (a gate reports it, never passes it
    silently)."""

    kind: str
    value: str
    why: str


# ------------------------------------------------------------------------------------------------ helpers
@functools.lru_cache(maxsize=2048)
def _word(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])")


def _says_word(text: str, value: str) -> bool:
    """`_word(value).search(text)`: `text` holds `value` as a word. A value that does not occur in `text` at all
    cannot occur as a word: asked first, it spares compiling a pattern for most of the values a copy asks about
    (each cell and label of a task is a pattern of its own, compiled once per process)."""
    return value in text and _word(value).search(text) is not None


def swap_words(text: str, pairs: dict[str, str]) -> str:
    """`text` with every whole-word occurrence of each key replaced by its value, in one pass (so a swap a↔b
    given as {a: b, b: a} exchanges them instead of undoing itself)."""
    keys = sorted((k for k in pairs if k), key=len, reverse=True)
    # A text holding none of the keys (most leaves a copy rewrites) has nothing to swap: it needs no pattern.
    if not any(k in text for k in keys):
        return text
    return _swap_pattern(tuple(keys)).sub(lambda m: pairs[m.group(1)], text)


@functools.lru_cache(maxsize=2048)
def _swap_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    # Compiled once per set of words (a copy swaps the same pairs in every text it rewrites).
    return re.compile(r"(?<![\w.-])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w-]|\.\d)")


def _walk(obj: Any, fn: Callable[[Any, str | None], Any], key: str | None = None) -> Any:
    """`obj` rebuilt with `fn(leaf, key)` applied to every scalar leaf (`key` the dict key above it)."""
    if isinstance(obj, dict):
        return {k: _walk(v, fn, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_walk(v, fn, key) for v in obj]
    return fn(obj, key)


def _data_args(obj: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Every dict holding `data_args` in `obj`, with its data_args."""
    if isinstance(obj, dict):
        if isinstance(obj.get("data_args"), dict):
            yield obj, obj["data_args"]
        for v in obj.values():
            yield from _data_args(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _data_args(v)


def _rows(world: World, task: Task, origin: str, widget_id: str, args: dict[str, Any]) -> list[Any]:
    return _rows_for(world, task, origin, widget_id, [args])[0]


def _rows_for(
    world: World, task: Task, origin: str, widget_id: str, cuts: list[dict[str, Any]]
) -> list[list[Any]]:
    """The rows `widget_id` serves for each of `cuts`, read as an agent reads them (one workspace for all, no
    turn budget: these reads are the gate's, not an agent's; started as an episode is, so the setup is not
    serialised again for the key of its started workspace)."""
    workspace = start_episode(world, task).workspace
    out: list[list[Any]] = []
    for args in cuts:
        call = {"origin": origin, "widget_id": widget_id, "data_args": args}
        env = workspace.answer("get_widget_data", call)
        data = env.get("data") if env.get("ok") else None
        rows = data.get("data") if isinstance(data, dict) else None
        out.append(rows if isinstance(rows, list) else [])
    return out


def _cells(row: Any) -> list[tuple[Any, Any]]:
    """(column, value) of a served row: a dict's keys, a list's positions."""
    if isinstance(row, dict):
        return list(row.items())
    return list(enumerate(row)) if isinstance(row, list) else []


# A task as JSON, by the task (`ByObject`: a task is never edited in place — a changed task is a new model). A
# copy reads the same task's eval and setup through it several times over (the carrying parameter, the values
# used, the target's arguments, the graded cuts); read only, never edited: a copy edits a dump of its own.
_DUMPED = ByObject(256)


def _dumped(task: Task) -> dict[str, Any]:
    return dict(_DUMPED.get(task, lambda t: t.model_dump(mode="json")))


def _copy_world(world: World, what: str, **changes: Any) -> World:
    """`world` with some of its parts replaced; a fingerprint of its own, so nothing cached on the original
    world (certificates, listings) is taken for the copy's. The built baselines are the exception: a build is
    keyed by the baseline and the catalogs it draws on (`Workspace.shared_builds`), so the copy reuses those it
    did not replace instead of seeding every baseline dashboard again for each of its episodes."""
    digest = hashlib.sha256(f"{world.fingerprint}|{what}".encode()).hexdigest()[:16]
    return dataclasses.replace(
        world, fingerprint=f"{world.fingerprint}~cf{digest}", cache=Workspace.shared_builds(world), **changes
    )


def _task_with(
    task: Task, *, eval_: dict[str, Any] | None = None, setup: dict[str, Any] | None = None
) -> Task:
    data = task.model_dump(mode="json", exclude_none=True)
    if eval_ is not None:
        data["eval"] = eval_
    if setup is not None:
        data["setup"] = setup
    data["id"] = task.id
    return Task.model_validate(data)


def _source_docs(world: World, task: Task, source: str | None) -> list[str]:
    """The documents the hidden value comes from: the fact's own source when it names one, else every document
    the reference reads (skills, resources, prompts), as 'kind:name'."""
    if source:
        return [source]
    out: list[str] = []
    for step in task.eval.reference_steps():
        args = step.args if isinstance(step.args, dict) else {}
        if step.tool == "get_skill_content" and args.get("slug") in world.skills:
            out.append(f"skill:{args['slug']}")
        elif step.tool == "read_workspace_resource" and args.get("uri") in world.resources:
            out.append(f"resource:{args['uri']}")
        elif step.tool == "get_workspace_prompt" and args.get("name") in world.prompts:
            out.append(f"prompt:{args['name']}")
    return list(dict.fromkeys(out))


def _every_doc(world: World) -> list[str]:
    return (
        [f"skill:{k}" for k in world.skills]
        + [f"resource:{k}" for k in world.resources]
        + [f"prompt:{k}" for k in world.prompts]
    )


def _rewrite_docs(
    world: World, docs: list[str], pairs: dict[str, str], move: Callable[[str, str], str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The world parts with `pairs` swapped in the named documents' text (and, with `move`, the rule's line moved
    as `moved_rule` does), and the documents that changed."""
    texts: dict[str, str] = {}
    for doc in docs:
        text = source_text(world, doc)
        if text is not None and (new := swap_words(text, pairs)) != text:
            texts[doc] = move(text, new) if move is not None else new
    return _replace_texts(world, texts), list(texts)


def moved_rule(
    before: str,
    after: str,
    says_value: Callable[[str], bool],
    says_other: Callable[[str], bool],
    rule_line: Callable[[str], bool],
    reads: Callable[[str], Any] | None = None,
    kept: Callable[[str], bool] = lambda line: False,
) -> str:
    """`after` — `before` with the carried value and the other option exchanged in place — with the rule moved off
    its line, as a writer of the other document could have put it. Swapped in place, every rule keeps its line, so
    a reader of a fixed line ("the note's second rule") takes the right option in both copies whenever the rule
    the request names happens to stand there. So the lines that stated the value exchange places with those that
    stated the other option (each line then states, in the copy, what its place stated in the original, and the
    phrases are what moved), or, where no line stated the other option, with the next rule line of the same shape
    (a list item with a list item) that `kept` does not hold — a line stating another value the task grades (the
    rival rule Derive's second view takes) stays, or a reader of two fixed lines would find the same pair of
    options in both copies. `reads(text)`: what a reader of the rules takes from a text (the options each policy
    phrase gets); a move that changes it is not made (a heading whose rule sits on the line below)."""
    old, new = before.split("\n"), after.split("\n")
    if len(old) != len(new):
        return after
    changed = [i for i in range(len(old)) if old[i] != new[i]]
    of_other = [i for i in changed if says_other(old[i]) and not says_value(old[i])]
    of_value = [i for i in changed if i not in of_other]
    if not of_value:
        return after
    lines = list(new)
    if of_other and len(of_other) == len(of_value):
        for i, j in zip(of_value, of_other, strict=True):
            lines[i], lines[j] = new[j], new[i]
    else:

        def shape(line: str) -> str:
            return re.match(r"\s*([-*|>#]|\d+[.)])?", line).group(0).strip()  # type: ignore[union-attr]

        free = [j for j in range(len(old)) if j not in of_value and rule_line(old[j]) and not kept(old[j])]
        for i in of_value:
            same = [j for j in free if shape(old[j]) == shape(old[i])]
            if not same:
                continue
            j = min(same, key=lambda j: ((j - i) % len(old), j))
            free.remove(j)
            lines[i], lines[j] = lines[j], lines[i]
    moved = "\n".join(lines)
    if reads is not None and reads(moved) != reads(after):
        return after
    return moved


# ------------------------------------------------------------------------------------------- carried value
def _carrying_param(world: World, task: Task, value: str) -> tuple[str, str, str, dict[str, Any]] | None:
    """(origin, widget_id, param, its declaration) of a catalog widget the eval sets to `value`."""
    ev = _dumped(task)["eval"]
    for holder, args in _data_args(ev):
        for key, v in args.items():
            if v != value:
                continue
            origin, wid = holder.get("origin"), holder.get("widget_id")
            fixture = world.fixture_of(str(origin), task.setup.workspace_backends or None) if origin else None
            definition = fixture.catalog.widgets.get(str(wid)) if fixture and wid else None
            param = definition.param(key) if definition else None
            if param is not None and option_values(param):
                return str(origin), str(wid), key, param
    return None


def _label(param: dict[str, Any], value: Any) -> str | None:
    for option in param.get("options") or []:
        if isinstance(option, dict) and option.get("value") == value and isinstance(option.get("label"), str):
            return str(option["label"])
    return None


def _used_values(task: Task, key: str) -> set[Any]:
    """Every value the task's setup or eval gives parameter `key` anywhere (twins, decoys, look-alikes)."""
    dumped = _dumped(task)
    return {args[key] for _, args in _data_args([dumped["setup"], dumped["eval"]]) if key in args}


def carried_copy(world: World, task: Task, value: str, source: str | None, kind: str) -> Copy | NotApplicable:
    # The documents the reference reads; when it reads none (the policy is found without a read the reference
    # spells out), every document of the world: the counterfactual world then says the other thing everywhere.
    docs = _source_docs(world, task, source) or _every_doc(world)
    found = _carrying_param(world, task, value)
    if found is None:
        return _free_text_copy(world, task, value, docs, kind)
    origin, wid, key, param = found
    used = _used_values(task, key)
    args = _target_args(task, origin, wid, key, value)
    # An option the task uses nowhere else first (a twin or decoy keeps its own value in both copies).
    # Never an option on which the copy's target would be another view the eval already grades (Derive's second
    # view on the rival rule's value): the copy would ask for one widget twice.
    graded = _graded_args(task, origin, wid)
    free = [o for o in option_values(param) if o != value and _frozen({**args, key: o}) not in graded]
    candidates = [o for o in free if o not in used] or free
    if not candidates:
        return NotApplicable(kind, value, f"'{key}' declares no other option")
    read = _rows_for(world, task, origin, wid, [args, *({**args, key: o} for o in candidates)])
    base_rows = read[0]
    served = {str(o): rows for o, rows in zip(candidates, read[1:], strict=True)}
    # The copy as hard as the original: not the parameter's default, not a value the workspace already shows
    # on that widget (a neighbour to copy), and serving other rows, so what the agent records changes too.
    default = param.get("value")
    shown = _shown_in_world(world, task, wid, key)
    candidates.sort(
        key=lambda o: (
            str(o) == str(default),
            str(o) in shown,
            not served[str(o)] or served[str(o)] == base_rows,
        )
    )
    other = candidates[0]
    pairs = {value: str(other), str(other): value}
    label, other_label = _label(param, value), _label(param, other)
    if label and other_label and label != value and other_label != str(other):
        pairs |= {label: other_label, other_label: label}
    # an option whose words hold a swapped one ("Partially Filled" beside Filled) stays itself: its longer match
    # is taken first, so the swap does not turn it into an option nobody declared ("Partially Cancelled")
    for option in option_values(param):
        for text in {str(option), _label(param, option) or ""} - set(pairs) - {""}:
            if any(_says_word(text, k) for k in list(pairs)):
                pairs[text] = text
    # A Derive rule is moved off its line as its value changes (`moved_rule`); a Ground fact stays where the request
    # points (a step, a row), which is what the level asks an agent to find.
    move = (
        _rule_mover(task.prompt, param, value, str(other), label, other_label, used)
        if kind == "carried"
        else None
    )
    parts, changed = _rewrite_docs(world, docs, pairs, move)
    if not changed:
        # The value is not spelt out where it is defined (the document says "quarter to date" for QTD): the
        # definition the reader finds is restated with the other option.
        parts, changed = _restate_definitions(world, docs, task.prompt, param, value, str(other), move)
    # A policy may also sit in a note on the board (the task's own setup): it says the other thing too (its rule
    # moved off its line as in a document), and the eval's check that the note is kept reads the note as the copy
    # has it (line by line, so in any order).
    dumped = task.model_dump(mode="json", exclude_none=True)

    def noted(x: Any, k: str | None) -> Any:
        swapped = _sentence_swap(x, pairs) if k == "data" else x
        return move(x, swapped) if move is not None and isinstance(x, str) and swapped != x else swapped

    setup = _walk(dumped["setup"], noted)
    if setup != dumped["setup"]:
        changed.append("the board's notes")
    if not changed:
        return NotApplicable(
            kind, value, f"no document it comes from ({', '.join(docs)}) states '{value}' or its label"
        )
    ev = _walk(dumped["eval"], lambda x, k: _sentence_swap(x, pairs) if k == "data_contains" else x)
    cf_world = _copy_world(world, f"{kind}:{value}->{other}:{','.join(changed)}", **parts)
    probe_task = _task_with(task, setup=setup)
    if not _read_by_reference(task, origin, wid, args):
        # the view is placed, not read (Derive's second view beside a read): what the reference records comes
        # from another cut, and stays as it was
        base_rows, served[str(other)] = [], []
    cf_task = _retarget(probe_task, ev, key, value, other, base_rows, served[str(other)])
    return Copy(kind, value, str(other), ", ".join(changed), cf_world, cf_task)


def _rule_mover(
    prompt: str,
    param: dict[str, Any],
    value: str,
    other: str,
    label: str | None,
    other_label: str | None,
    graded: set[Any] = frozenset(),  # type: ignore[assignment]
) -> Callable[[str, str], str]:
    """`moved_rule` for one carried value: lines said to state the value or the other option by their words,
    rule lines by the options of `param` they state, what a reader takes by the prompt's policy phrases, and the
    lines of the task's other `graded` values of the parameter kept where they are."""
    keys = [value, *([label] if label else [])]
    other_keys = [other, *([other_label] if other_label else [])]
    rivals = {str(v) for v in graded} - {value, other}
    phrases = [p.phrase for p in read_request(prompt).policies]

    def reads(text: str) -> list[Any]:
        found = [policy_value(text, p, param, phrases) for p in phrases]
        return [str(f.value) if f is not None else None for f in found]

    return lambda before, after: moved_rule(
        before,
        after,
        lambda line: any(_word(k).search(line) for k in keys),
        lambda line: any(_word(k).search(line) for k in other_keys),
        lambda line: bool(option_mentions(line, param)),
        reads,
        lambda line: any(str(m.value) in rivals for m in option_mentions(line, param)),
    )


def _restate_definitions(
    world: World,
    docs: list[str],
    prompt: str,
    param: dict[str, Any],
    value: str,
    other: str,
    move: Callable[[str, str], str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The world parts with each definition of one of the prompt's policy phrases that assigns `value` to
    `param` — the span a reader takes for the value, however it is worded — replaced by `other`."""
    phrases = [p.phrase for p in read_request(prompt).policies]
    texts: dict[str, str] = {}
    for doc in docs:
        text = source_text(world, doc)
        if text is None:
            continue
        new = text
        for phrase in phrases:
            if not defines(new, phrase):
                continue
            others = [p.phrase for p in read_request(new).policies]
            found = policy_value(new, phrase, param, others)
            if found is not None and str(found.value) == value:
                new = new[: found.start] + other + new[found.end :]
        if new != text:
            texts[doc] = move(text, new) if move is not None else new
    return _replace_texts(world, texts), list(texts)


def source_text(world: World, doc: str | None) -> str | None:
    """The text of a source named as the eval names it ("skill:slug", "resource:uri", "prompt:name")."""
    if not doc:
        return None
    kind, _, name = doc.partition(":")
    if kind == "skill" and name in world.skills:
        return world.skills[name].content
    if kind == "resource" and name in world.resources:
        return world.resources[name].text
    if kind == "prompt" and name in world.prompts:
        return world.prompts[name].text
    return None


def _replace_texts(world: World, texts: dict[str, str]) -> dict[str, Any]:
    """The world's skills, resources and prompts with the given documents' text replaced."""
    skills, resources, prompts = dict(world.skills), dict(world.resources), dict(world.prompts)
    for doc, text in texts.items():
        kind, _, name = doc.partition(":")
        if kind == "skill":
            skills[name] = dataclasses.replace(skills[name], content=text)
        elif kind == "resource":
            resources[name] = dataclasses.replace(resources[name], text=text)
        elif kind == "prompt":
            prompts[name] = dataclasses.replace(prompts[name], text=text)
    return {"skills": skills, "resources": resources, "prompts": prompts}


def _sentence_swap(x: Any, pairs: dict[str, str]) -> Any:
    """`pairs` swapped in a sentence (a note's text), never in a bare value: a cell that is an option's value
    is the rows' business, not the policy's."""
    if not isinstance(x, str) or len(x.split()) < 4:
        return x
    return swap_words(x, pairs)


def _shown_in_world(world: World, task: Task, widget_id: str, key: str) -> set[str]:
    """The values `key` shows on `widget_id` wherever it is placed in the task's starting workspace."""
    workspace = start_episode(world, task).workspace
    return {
        str(w.data_args[key])
        for d in workspace.dashboards.values()
        for w in d.widgets
        if w.widget_id == widget_id and key in (w.data_args or {})
    }


def _read_by_reference(task: Task, origin: str, wid: str, args: dict[str, Any]) -> bool:
    """Whether the reference reads the rows of `wid` on `args` (a read's recorded figures come from them), or
    reads no rows at all (nothing recorded to keep apart)."""
    reads = [
        t.args.get("data_args") or {}
        for t in task.eval.required_tools
        if t.tool == "get_widget_data" and t.args.get("origin") == origin and t.args.get("widget_id") == wid
    ]
    return not reads or any(_frozen(r) == _frozen(args) for r in reads)


def _graded_args(task: Task, origin: str, wid: str) -> set[str]:
    """The data_args (frozen) of every widget `wid` of `origin` the eval requires."""
    return {
        _frozen(args)
        for holder, args in _data_args(_dumped(task)["eval"])
        if holder.get("origin") == origin and holder.get("widget_id") == wid and "min_count" in holder
    }


def _target_args(task: Task, origin: str, wid: str, key: str, value: str) -> dict[str, Any]:
    for holder, args in _data_args(_dumped(task)["eval"]):
        if holder.get("origin") == origin and holder.get("widget_id") == wid and args.get(key) == value:
            return dict(args)
    return {key: value}


def _row_map(base: list[Any], other: list[Any]) -> dict[str, str]:
    """Cell by cell (same row, same column): what the served value was → what the other option serves."""
    out: dict[str, str] = {}
    for a, b in zip(base, other, strict=False):
        cells_b = dict(_cells(b))
        for col, x in _cells(a):
            if col in cells_b and str(x) != str(cells_b[col]) and str(x) not in out:
                out[str(x)] = str(cells_b[col])
    return out


def _frozen(args: Any) -> str:
    return json.dumps(args or {}, sort_keys=True)


def _seeded_widgets(task: Task) -> set[tuple[Any, Any, str]]:
    """(origin, widget_id, data_args) of every widget the task's setup places."""
    state = task.setup.initial_state
    boards = state.seeded_dashboards() if state is not None else []
    return {(w.origin, w.widget_id, _frozen(w.data_args)) for b in boards for w in (b.widgets or [])}


def _retarget(
    task: Task,
    ev: dict[str, Any],
    key: str | None,
    value: Any,
    other: Any,
    base_rows: list[Any],
    other_rows: list[Any],
) -> Task:
    """The task with `eval` `ev` rewritten for the copy: parameter `key` set to `other` where it was `value`,
    and what the reference records of the served rows (notes, the answer's forbidden figures) moved from the rows
    it read to the rows the copy serves."""
    cells = _row_map(base_rows, other_rows)

    def leaf(x: Any, k: str | None) -> Any:
        if key is not None and k == key and x == value:
            return other
        if isinstance(x, str) and k in ("data", "text", "reference_answer"):
            return swap_words(x, cells)
        if isinstance(x, str) and x in cells and k == "data_contains":
            return cells[x]  # a recorded figure; never an argument (data_args are the source's business)
        return x

    # A widget the board seeds and the eval keeps as seeded (furniture, a twin left alone) is not the source's
    # business: it shows the same thing in both copies, whatever value it happens to show.
    seeded = _seeded_widgets(task)
    kept = {
        i: w
        for i, w in enumerate(ev.get("required_widgets") or [])
        if (w.get("origin"), w.get("widget_id"), _frozen(w.get("data_args"))) in seeded
    }
    new = _walk(ev, leaf)
    for i, w in kept.items():
        new["required_widgets"][i] = w
    new.pop("judge_evaluation", None)  # the judged answer is the judge gate's; the copy grades the state
    served = {str(v) for row in other_rows for _, v in _cells(row)}
    text = " ".join(served)

    def still_served(m: Any) -> bool:
        return str(m) in served or str(m) in text

    if isinstance(ev.get("answer_must_not_contain"), list):
        cited = [x for x in cells if _says_word(str(ev.get("reference_answer") or ""), x)]
        new["answer_must_not_contain"] = [m for m in ev["answer_must_not_contain"] if not still_served(m)] + [
            x for x in cited if not still_served(x) and x not in ev["answer_must_not_contain"]
        ]
    for before, after in zip(
        ev.get("required_generated_widgets") or [], new.get("required_generated_widgets") or [], strict=False
    ):
        expected = list(after.get("data_contains") or [])
        if "must_not_contain" in before:
            # What the original recorded and the copy no longer serves is now a distractor; what the copy
            # still serves (another row of the same rows) stays allowed, as it was.
            dropped = [
                x for x in before.get("data_contains") or [] if x not in expected and not still_served(x)
            ]
            after["must_not_contain"] = [
                m for m in before["must_not_contain"] if m not in expected and not still_served(m)
            ] + dropped
    return _task_with(task, eval_=new)


# A phrase's counterfactual changes its first word to one of these (the first the task and its source do not
# use), so the other phrase reads like the original and shares no graded word with it but the rest.
PHRASE_WORDS = ("cobalt", "slate", "copper", "cedar", "harbour", "linden")


def phrase_copy(world: World, task: Task, phrase: str, source: str | None) -> Copy | NotApplicable:
    """A fact recorded as its phrase (a Ground note): the passage states another phrase, and the note must
    record that one."""
    text = source_text(world, source) if source else None
    if text is None:
        return NotApplicable("planted", phrase, f"its source '{source}' is not in the world")
    words = phrase.split()
    used = (text + " " + task.prompt + " " + json.dumps(_dumped(task))).casefold()
    fresh = next((w for w in PHRASE_WORDS if w not in used), None)
    if not words or fresh is None:
        return NotApplicable("planted", phrase, "no other phrase is free in this task")
    other = " ".join([fresh.capitalize() if words[0][:1].isupper() else fresh, *words[1:]])
    parts, changed = _rewrite_docs(world, [str(source)], {phrase: other})
    if not changed:
        return NotApplicable("planted", phrase, f"{source} does not state '{phrase}' as written")
    ev = task.model_dump(mode="json", exclude_none=True)["eval"]
    pattern = re.compile(re.escape(phrase), re.I)
    new = _walk(
        ev, lambda x, k: pattern.sub(other, x) if isinstance(x, str) and k in ("data_contains", "data") else x
    )
    if new == ev:
        return NotApplicable("planted", phrase, "the eval grades no record of the phrase")
    cf_world = _copy_world(world, f"planted:{phrase}->{other}:{source}", **parts)
    return Copy("planted", phrase, other, str(source), cf_world, _task_with(task, eval_=new))


def _free_text_copy(world: World, task: Task, value: str, docs: list[str], kind: str) -> Copy | NotApplicable:
    """A carried value with no declared options (a tab title): the passage states another title."""
    text = json.dumps(_dumped(task)) + task.prompt
    other = next((t for t in TITLE_ALTERNATIVES if t not in text), None)
    if other is None:
        return NotApplicable(kind, value, "no alternative title is free in this task")
    parts, changed = _rewrite_docs(world, docs, {value: other})
    if not changed:
        return NotApplicable(kind, value, f"no document it comes from ({', '.join(docs)}) states '{value}'")
    ev = task.model_dump(mode="json", exclude_none=True)["eval"]
    new = _walk(ev, lambda x, k: other if isinstance(x, str) and x.casefold() == value.casefold() else x)
    new.pop("judge_evaluation", None)
    new.pop("reference_answer", None)
    if isinstance(new.get("accepted_names"), list):
        new["accepted_names"] = [other]
    cf_world = _copy_world(world, f"{kind}:{value}->{other}:{','.join(changed)}", **parts)
    return Copy(kind, value, other, ", ".join(changed), cf_world, _task_with(task, eval_=new))


# ----------------------------------------------------------------------------------------------- find target
def _target_widget(world: World, task: Task, name: str) -> tuple[str, str] | None:
    """(origin, widget_id) of the catalog widget named `name` that the eval grades."""
    ev = _dumped(task)["eval"]
    placed = {
        w.widget_uuid: (str(w.origin), str(w.widget_id))
        for w in (
            task.setup.initial_state.dashboard.widgets
            if task.setup.initial_state and task.setup.initial_state.dashboard
            else []
        )
    }
    candidates: list[tuple[str, str]] = [
        (str(r.get("origin")), str(r.get("widget_id")))
        for r in ev.get("required_widgets") or []
        if r.get("widget_id")
    ]
    for step in task.eval.reference_steps():
        args = step.args if isinstance(step.args, dict) else {}
        if args.get("widget_uuid") in placed:
            candidates.append(placed[args["widget_uuid"]])
        elif args.get("origin") and args.get("widget_id"):
            candidates.append((str(args["origin"]), str(args["widget_id"])))
    for origin, wid in candidates:
        fixture = world.fixture_of(origin, task.setup.workspace_backends or None)
        definition = fixture.catalog.widgets.get(wid) if fixture else None
        if definition is not None and definition.name.casefold() == name.casefold():
            return origin, wid
    return None


# a served reference: letters, an optional separator, then at least three digits
REFERENCE = re.compile(r"([A-Za-z]{2,}[-_/]?)(\d{3,})")


def _shifted(row: Any, params: set[str]) -> Any:
    if not isinstance(row, dict):
        return row
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k not in params and isinstance(v, str) and (ref := REFERENCE.fullmatch(v)):
            # a reference (TRD-85886, CLM-0412) is a figure too: a note that wrote the original's down must fail
            out[k] = f"{ref.group(1)}{int(ref.group(2)) * 7 + 1013}"
        elif k in params or isinstance(v, bool) or not isinstance(v, int | float):
            out[k] = v
        else:
            # Far from the original and from small counts, so no substring check mistakes one for the other.
            out[k] = v * 7 + 1013 if isinstance(v, int) else round(v * 1.5 + 0.0137, 4)
    return out


def _served_otherwise(definition: Any) -> Any:
    """`definition` serving other figures: every number of its rows that is not a filter column moved, so what
    a reader records of them differs in the copy and a trace that wrote the original's figures down fails."""
    params = {str(p.get("paramName")) for p in definition.params}
    rows = [_shifted(r, params) for r in definition.rows] if definition.rows else definition.rows
    samples = (
        [
            {**x, "data": [_shifted(r, params) for r in x["data"]]}
            if isinstance(x, dict) and isinstance(x.get("data"), list)
            else x
            for x in definition.sample_by_args
        ]
        if definition.sample_by_args
        else definition.sample_by_args
    )
    return dataclasses.replace(definition, rows=rows, sample_by_args=samples)


def target_copy(world: World, task: Task, name: str) -> Copy | NotApplicable:
    """Another widget of the target's app becomes the one that fits: the two widgets' whole content (name,
    description, parameters, rows) is exchanged while their ids and catalog places stay, and on the board the
    target's instance takes the other's place. An agent that reads what widgets are follows the content; one
    that reads where they sit or what they are called by id does not."""
    found = _target_widget(world, task, name)
    if found is None:
        return NotApplicable("target", name, "the eval grades no catalog widget of that name")
    origin, a = found
    fixture = world.fixture_of(origin, task.setup.workspace_backends or None)
    assert fixture is not None
    catalog = fixture.catalog
    apps = catalog.apps_of(a)
    mates = [w for app in apps for w in catalog.app_widgets(app) if w != a and w in catalog.widgets]
    mates = list(dict.fromkeys(mates)) or [w for w in catalog.widgets if w != a]
    dumped = task.model_dump(mode="json", exclude_none=True)
    on_board = {
        w.get("widget_id")
        for w in ((dumped["setup"].get("initial_state") or {}).get("dashboard") or {}).get("widgets") or []
    }
    # A look-alike already placed beside the target first: that is the widget a reader must tell apart.
    graded_ids = {str(r.get("widget_id")) for r in dumped["eval"].get("required_widgets") or []}
    unsaid = [w for w in mates if catalog.widgets[w].name.casefold() not in task.prompt.casefold()]
    wanted = next(
        (
            dict(h.get("data_args") or {})
            for h in dumped["eval"].get("required_widgets") or []
            if h.get("origin") == origin and h.get("widget_id") == a
        ),
        {},
    )

    def takes(w: str) -> bool:
        d = catalog.widgets[w]
        return all((p := d.param(k)) is not None and value_allowed(p, v) for k, v in wanted.items())

    # One that takes what the target must end on first: its content then fits at the target's catalog place, so a
    # reader of places (the first or last listed widget that takes the stated values) takes the same place in
    # both copies and is wrong in one; then a look-alike already placed beside the target. A widget the eval
    # grades is passed over, unless only a look-alike placed beside the target (graded as kept as seeded, its
    # requirement relabelled with it) takes those values.
    ungraded = [w for w in unsaid if w not in graded_ids]
    mates = (
        ungraded
        if any(takes(w) for w in ungraded)
        else [w for w in unsaid if w in on_board and takes(w)] or ungraded or mates
    )
    mates.sort(key=lambda w: (not takes(w), w not in on_board))
    if not mates:
        return NotApplicable("target", name, f"'{a}' is the only widget of {origin}: nothing else could fit")
    b = mates[0]
    da, db = catalog.widgets[a], catalog.widgets[b]
    widgets = dict(catalog.widgets)
    widgets[a] = dataclasses.replace(db, widget_id=a)
    widgets[b] = _served_otherwise(dataclasses.replace(da, widget_id=b))
    new_catalog = dataclasses.replace(catalog, widgets=widgets, _listings={})
    backends = dict(world.backends)
    backends[fixture.slug] = dataclasses.replace(fixture, catalog=new_catalog)
    cf_world = _copy_world(world, f"target:{origin}:{a}<->{b}", backends=backends)

    ids = {a: b, b: a}

    def relabel(x: Any, k: str | None) -> Any:
        return ids.get(x, x) if k in ("widget_id", "i") and isinstance(x, str) else x

    setup = _walk(dumped["setup"], relabel)
    new_eval = _walk(dumped["eval"], relabel)
    board = (setup.get("initial_state") or {}).get("dashboard") or {}
    placed = board.get("widgets") or []
    mine = next(
        (i for i, w in enumerate(placed) if w.get("origin") == origin and w.get("widget_id") == b), None
    )
    graded = json.dumps(dumped["eval"])
    if mine is not None and placed[mine].get("widget_uuid") and placed[mine]["widget_uuid"] in graded:
        # The target sits on the board and the reference addresses its instance: the instance of the other
        # placed widget becomes the one to work on. The two instances exchange what they are (widget, values)
        # and keep where they are (uuid, order, layout), so no uuid or position is the target's in both copies.
        others = [i for i, w in enumerate(placed) if i != mine]
        others.sort(key=lambda i: placed[i].get("widget_id") != a)
        if not others:
            return NotApplicable("target", name, "the target is alone on its board: nothing else could fit")
        j = others[0]
        kept = ("widget_uuid", "layout", "tab_id")
        pi, pj = placed[mine], placed[j]
        placed[mine] = {
            **{k: v for k, v in pj.items() if k not in kept},
            **{k: pi[k] for k in kept if k in pi},
        }
        placed[j] = {**{k: v for k, v in pi.items() if k not in kept}, **{k: pj[k] for k in kept if k in pj}}
        uuids = {pi["widget_uuid"]: pj["widget_uuid"], pj["widget_uuid"]: pi["widget_uuid"]}
        new_eval = _walk(new_eval, lambda x, k: uuids.get(x, x) if isinstance(x, str) else x)
    # The target's rows also serve other figures in the copy, so what a reader records of them (the first
    # row) differs too: a fixed trace that wrote the original's values down fails the copy.
    reads = [
        dict(h[1])
        for h in _data_args(dumped["eval"])
        if h[0].get("widget_id") == a and h[0].get("origin") == origin
    ]
    if reads:
        probe_task = _task_with(task, setup=setup)
        base = _rows(world, task, origin, a, reads[0])
        moved = _rows(cf_world, probe_task, origin, b, reads[0])
        cf_task = _retarget(probe_task, new_eval, None, None, None, base, moved)
    else:
        cf_task = _task_with(task, eval_=new_eval, setup=setup)
    return Copy("target", name, db.name, f"{origin}: '{a}' ↔ '{b}'", cf_world, cf_task)


def _note_of(setup: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The note named `name` that the setup seeds on its dashboard (as dumped)."""
    board = (setup.get("initial_state") or {}).get("dashboard") or {}
    return next((n for n in board.get("generated_widgets") or [] if n.get("name") == name), None)


def _said(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _pointer_relabel(
    ids: dict[str, str], uuids: dict[str, str], pairs: dict[str, str]
) -> Callable[[Any, str | None], Any]:
    """How a pointer copy rewrites the eval's leaves: widget ids and instance uuids exchanged, and the note's
    entries as a graded note must contain them."""

    def relabel(x: Any, k: str | None) -> Any:
        if k == "widget_id" and isinstance(x, str):
            return ids.get(x, x)
        if k == "widget_uuid" and isinstance(x, str):
            return uuids.get(x, x)
        if k == "data_contains" and isinstance(x, str):
            return swap_words(x, pairs)
        return x

    return relabel


def exchange_labels(text: str, a: str, b: str) -> str:
    """A pointer note with the labels of its entries saying `a` and `b` exchanged, every name left on its line:
    what the entry asked for names is the other widget, and a reader of a fixed line ("the first entry") takes
    the same widget in both copies, so it cannot pass both."""
    lines = text.split("\n")
    found: dict[str, int] = {}
    for i, line in enumerate(lines):
        entries = note_entries(line)
        if len(entries) == 1 and entries[0][1].casefold() in (a.casefold(), b.casefold()):
            found.setdefault(entries[0][1].casefold(), i)
    if len(found) != 2:
        return swap_words(text, {a: b, b: a})
    i, j = found[a.casefold()], found[b.casefold()]
    head_i, _, said_i = lines[i].partition(": ")
    head_j, _, said_j = lines[j].partition(": ")
    lines[i], lines[j] = f"{head_j}: {said_i}", f"{head_i}: {said_j}"
    return "\n".join(lines)


def pointer_copy(world: World, task: Task, name: str, note: str) -> Copy | NotApplicable:
    """A target found by a pointer (a note on the board that lists it under the entry the request points at,
    beside a rival entry naming another widget): in the copy the two entries name each other's widget, the
    world unchanged, so the widget the request's entry points at is the rival. The eval moves with it — the
    rival must end as the target had to (added, repaired or read), the target is left as seeded — so a reader
    of the pointer reaches the other state, and anything that picks by the request's words, by names or by
    places picks the same widget in both copies."""
    dumped = task.model_dump(mode="json", exclude_none=True)
    seeded = _note_of(dumped["setup"], note)
    if seeded is None:
        return NotApplicable("target", name, f"the pointer '{note}' is not on the board")
    entries = note_entries(str(seeded.get("data") or ""))
    head = f"{name} on ".casefold()
    if not any(s.casefold() == name.casefold() for _, s in entries) and (
        twins := [(label, said) for label, said in entries if said.casefold().startswith(head)]
    ):
        return _twin_pointer_copy(world, task, name, note, twins)
    found = _target_widget(world, task, name)
    if found is None or not any(s.casefold() == name.casefold() for _, s in entries):
        return NotApplicable("target", name, f"'{note}' names no rival beside '{name}'")
    origin, a = found
    fixture = world.fixture_of(origin, task.setup.workspace_backends or None)
    assert fixture is not None
    category = fixture.catalog.widgets[a].definition.get("category")
    wanted = next(
        (
            dict(h.get("data_args") or {})
            for h in dumped["eval"].get("required_widgets") or []
            if h.get("origin") == origin and h.get("widget_id") == a
        ),
        {},
    )

    def widget_of(said: str) -> str | None:
        named = [wid for wid, d in fixture.catalog.widgets.items() if d.name.casefold() == said.casefold()]
        named.sort(key=lambda wid: fixture.catalog.widgets[wid].definition.get("category") != category)
        return named[0] if named else None

    def takes(wid: str | None) -> bool:
        d = fixture.catalog.widgets[wid] if wid is not None else None
        return d is not None and all(
            (p := d.param(k)) is not None and value_allowed(p, v) for k, v in wanted.items()
        )

    # the rival is the first other entry whose widget takes what the target must end on (a pointer may list
    # widgets taking only some of it beside its rivals: pointing at one of those, the copy would ask the
    # impossible)
    others = [said for _, said in entries if said.casefold() != name.casefold()]
    rival = next((said for said in others if takes(widget_of(said))), others[0] if others else None)
    if rival is None:
        return NotApplicable("target", name, f"'{note}' names no rival beside '{name}'")
    b = widget_of(rival)
    if b is None:
        return NotApplicable("target", name, f"the rival entry's '{rival}' is no widget of {origin}")
    pairs = {name: rival, rival: name}
    setup = dumped["setup"]
    board = (setup.get("initial_state") or {}).get("dashboard") or {}
    for n in board.get("generated_widgets") or []:
        if n.get("name") == note:
            n["data"] = exchange_labels(str(n["data"]), name, rival)
    placed = board.get("widgets") or []
    instances = {
        wid: [w for w in placed if w.get("origin") == origin and w.get("widget_id") == wid] for wid in (a, b)
    }
    ids = {a: b, b: a}
    uuids = {}
    if len(instances[a]) == 1 and len(instances[b]) == 1:
        ua, ub = instances[a][0].get("widget_uuid"), instances[b][0].get("widget_uuid")
        uuids = {ua: ub, ub: ua}

    ev = _walk(dumped["eval"], _pointer_relabel(ids, uuids, pairs))
    for holder in ev.get("required_widgets") or []:
        # a widget kept as seeded (the rival, in the original) is now the target, kept as it was seeded
        mine = instances.get(str(holder.get("widget_id")))
        if holder.get("origin") == origin and holder.get("widget_id") == a and mine and len(mine) == 1:
            holder["data_args"] = dict(mine[0].get("data_args") or {})
    reads = [
        dict(step.args.get("data_args") or {})
        for step in task.eval.reference_steps()
        if step.tool == "get_widget_data" and isinstance(step.args, dict) and step.args.get("widget_id") == a
    ]
    for entry in ev.get("required_generated_widgets") or []:
        if not reads or entry.get("name_contains") == note or not entry.get("must_not_contain"):
            continue
        # a read's note: it must record what the rival serves on the same cut, not what the target does
        other = _rows(world, task, origin, b, reads[0])
        before = list(entry.get("data_contains") or [])
        row = other[0] if other and isinstance(other[0], dict) else {}
        now = [_said(v) for k, v in row.items() if k not in reads[0]][: len(before)]
        if not now:
            return NotApplicable("target", name, f"'{rival}' serves no row to record on {reads[0]}")
        served = json.dumps(other, default=str)
        entry["data_contains"] = now
        entry["must_not_contain"] = [
            m for m in [*before, *(entry.get("must_not_contain") or [])] if m not in served and m not in now
        ]
    ev.pop("judge_evaluation", None)
    cf_world = _copy_world(world, f"pointer:{note}:{a}<->{b}")
    cf_task = _task_with(task, eval_=ev, setup=setup)
    return Copy("target", name, rival, f"the entries of '{note}'", cf_world, cf_task)


def _twin_pointer_copy(
    world: World, task: Task, name: str, note: str, twins: list[tuple[str, str]]
) -> Copy | NotApplicable:
    """`pointer_copy` where the pointer's two entries name instances of the same widget by what each shows
    ("Live Grid on TSLA", "Live Grid on MSFT": a target its declared options alone single out, beside twins of
    itself): in the copy the entries exchange what they say, so the instance the request's entry points at is
    the rival twin. The eval moves with it — the twin must end as the target had to, the target's instance is
    left as seeded — and the world is unchanged: no name, position, signature or id tells the copies apart."""
    dumped = task.model_dump(mode="json", exclude_none=True)
    found = _target_widget(world, task, name)
    mine = [(label, said) for label, said in twins if _says_word(task.prompt.casefold(), label.casefold())]
    if found is None or len(twins) < 2 or len(mine) != 1:
        return NotApplicable("target", name, f"'{note}' names no twin of '{name}' beside the entry asked for")
    origin, a = found
    # the first other entry as listed is the rival the copy points at (any would do: each names a placed twin)
    rival = next(t for t in twins if t != mine[0])
    setup = dumped["setup"]
    board = (setup.get("initial_state") or {}).get("dashboard") or {}
    placed = [w for w in board.get("widgets") or [] if w.get("origin") == origin and w.get("widget_id") == a]
    head = len(name) + len(" on ")

    def instance(said: str) -> dict[str, Any] | None:
        shows = said[head:]
        best = [w for w in placed if shown_by(shows, w.get("data_args") or {}) > 0]
        return best[0] if len(best) == 1 else None

    ours, theirs = instance(mine[0][1]), instance(rival[1])
    if ours is None or theirs is None or ours is theirs:
        return NotApplicable(
            "target", name, f"the entries of '{note}' name no two placed instances of '{name}'"
        )
    pairs = {mine[0][1]: rival[1], rival[1]: mine[0][1]}
    for n in board.get("generated_widgets") or []:
        if n.get("name") == note:
            n["data"] = exchange_labels(str(n["data"]), mine[0][1], rival[1])
    uuids = {ours["widget_uuid"]: theirs["widget_uuid"], theirs["widget_uuid"]: ours["widget_uuid"]}

    ev = _walk(dumped["eval"], _pointer_relabel({}, uuids, pairs))
    kept = dict(theirs.get("data_args") or {})
    for holder in ev.get("required_widgets") or []:
        # the twin kept as seeded in the original is the one to work on now: the target's instance is kept
        if (
            holder.get("origin") == origin
            and holder.get("widget_id") == a
            and holder.get("data_args") == kept
        ):
            holder["data_args"] = dict(ours.get("data_args") or {})
    ev.pop("judge_evaluation", None)
    cf_world = _copy_world(world, f"pointer:{note}:{ours['widget_uuid']}<->{theirs['widget_uuid']}")
    cf_task = _task_with(task, eval_=ev, setup=setup)
    return Copy("target", name, rival[1], f"the entries of '{note}'", cf_world, cf_task)


def copies(world: World, task: Task) -> list[Copy | NotApplicable]:
    """One counterfactual per hidden value (a planted fact and the value it carries make one)."""
    hidden = task.meta.hidden if task.meta else []
    planted = next((h for h in hidden if h.kind == "planted"), None)
    out: list[Copy | NotApplicable] = []
    for h in hidden:
        if h.kind == "target" and (h.source or "").startswith("note:"):
            out.append(pointer_copy(world, task, h.value, str(h.source).removeprefix("note:")))
        elif h.kind == "target":
            out.append(target_copy(world, task, h.value))
        elif h.kind == "carried":
            kind = "planted" if planted is not None else "carried"
            out.append(carried_copy(world, task, h.value, planted.source if planted else None, kind))
    if planted is not None and not any(h.kind == "carried" for h in hidden):
        out.append(phrase_copy(world, task, planted.value, planted.source))
    return out


def play(world: World, task: Task, agent_name: str) -> Episode:
    """One episode of a deterministic reference agent (a ladder rung) on `task`: a trial's own loop
    (`certify.trial.drive`), driven synchronously, for the gate has no event loop; a rung's session is a script
    whose awaits never suspend."""
    from .agents import ladder  # noqa: F401  (registers the rungs)
    from .agents.base import AGENTS

    # A rung is made by its own factory, as `resolve_agent` makes it, without registering every agent first:
    # that imports the model agent and its client (a sizeable share of a certification's imports), which no
    # rung needs. Any other name goes through `resolve_agent`.
    factory = AGENTS.get(agent_name)
    if factory is None:
        from .agents import resolve_agent

        agent = resolve_agent(agent_name)
    else:
        agent = factory(agent_name)
    episode = start_episode(world, task)
    loop = drive(episode, agent, task, {}, until_unparseable=True)
    try:
        loop.send(None)
    except StopIteration:
        return episode
    loop.close()  # the episode is stopped as it unwinds
    raise RuntimeError(f"{agent_name} suspended; the counterfactual check needs a scripted agent")


__all__ = ["Copy", "NotApplicable", "copies", "moved_rule", "play", "pointer_copy", "swap_words"]
