"""The board a level starts from: what the rule author seeds on the story's dashboard before the agent arrives.

A repair seeds its targets stale (left on wrong values) and, next to the first, a decoy that takes the values the
Find prompt states. Derive may seed the note that defines its policy. Ground and Compose work on a lived-in board:
a twin of the first target on another cut (to leave alone), a piece of furniture from the same app (at Ground
left on a wrong value, its fix part of the work) and a prior note. Every record is built once, here, and read by
the plan and the wording; nothing is added to it later.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from certify import BM25, served_text
from simulator import WidgetDef, option_values, value_allowed

from ...factcheck import ResolvedTarget, find_said, lexical_pull, second_view
from ...factcheck import value_text as said_as_text
from .context import FIND_BOARD
from .level import Level, pick, word_pattern

SEED_W, SEED_H, NOTE_H = 20, 14, 8
# ... and up to this many more, placed against readers of places and values (`_open_sides`, `_off_defaults_above`)
FIND_EXTRA = 2


@dataclass(frozen=True)
class Slot:
    """Where a seed sits on the tab's grid (two columns of SEED_W, rows of SEED_H)."""

    x: int
    y: int
    w: int
    h: int

    @classmethod
    def at(cls, index: int, h: int = SEED_H, w: int = SEED_W) -> Slot:
        return cls(0 if index % 2 == 0 else SEED_W, SEED_H * (index // 2), w, h)

    def wire(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "w": self.w, "h": self.h}


@dataclass(frozen=True)
class Seeded:
    """A catalog widget placed on the board before the level starts."""

    uuid: str
    origin: str
    widget_id: str
    data_args: dict[str, Any]
    slot: Slot

    def wire(self, tab_id: str) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "widget_id": self.widget_id,
            "widget_uuid": self.uuid,
            "tab_id": tab_id,
            "data_args": dict(self.data_args),
            "layout": self.slot.wire(),
        }


@dataclass(frozen=True)
class SeededNote:
    """A note on the board before the level starts (the policy's definition, or the prior pass's note)."""

    uuid: str
    name: str
    text: str
    slot: Slot

    def wire(self, tab_id: str) -> dict[str, Any]:
        return {
            "widget_type": "note",
            "widget_uuid": self.uuid,
            "name": self.name,
            "data": self.text,
            "tab_id": tab_id,
            "layout": self.slot.wire(),
        }


@dataclass(frozen=True)
class Fix:
    """The furniture's real repair at Ground: seeded on `wrong`, it must end on `right`."""

    wrong: dict[str, Any]
    right: dict[str, Any]


@dataclass(frozen=True)
class Furniture:
    """A second view of the first target's app on a lived-in board, placed as `seed`; it must end on `params`,
    its right values (at Ground it is seeded wrong and `fix` is the repair that gets it there)."""

    seed: Seeded
    name: str
    params: dict[str, Any]
    fix: Fix | None = None


@dataclass(frozen=True)
class Board:
    """Everything a level seeds. `stale` holds a repair's targets as seeded (one per target, on the wrong values
    they show); `decoy` a widget that takes the values the Find prompt states, placed next to a repair's target
    so that "the one placed widget that accepts the stated values" is not the target (it must stay as seeded);
    `twin` the first target again on another cut, on a lived-in board (to leave alone)."""

    widgets: tuple[Seeded, ...] = ()
    notes: tuple[SeededNote, ...] = ()
    stale: tuple[Seeded, ...] = ()
    decoy: Seeded | None = None
    twin: Seeded | None = None
    furniture: Furniture | None = None
    policy_note: SeededNote | None = None
    prior_note: SeededNote | None = None
    pointer_note: SeededNote | None = (
        None  # Find's planted pointer (`factcheck.FindPointer`), when it has one
    )
    lookalikes: tuple[Seeded, ...] = ()  # Find's further decoys (each stays as seeded, like `decoy`)


@dataclass
class _Placing:
    """The widgets and notes placed so far while a board is seeded."""

    level: Level
    widgets: list[Seeded] = field(default_factory=list)
    notes: list[SeededNote] = field(default_factory=list)

    def widget(self, role: str, widget_id: str, origin: str, params: dict[str, Any]) -> Seeded:
        seeded = Seeded(self.level.uuid(role), origin, widget_id, dict(params), Slot.at(len(self.widgets)))
        self.widgets.append(seeded)
        return seeded

    def note(self, role: str, name: str, text: str, slot: Slot) -> SeededNote:
        note = SeededNote(self.level.uuid(role), name, text, slot)
        self.notes.append(note)
        return note


def seed_board(level: Level) -> Board:
    s = level.story
    placing = _Placing(level)
    stale: list[Seeded] = []
    lookalikes: list[Seeded] = []
    decoy = policy_note = None
    if s.kind == "repair":
        for i, t in enumerate(s.targets):
            stale.append(placing.widget(f"stale{i}", t.widget_id, t.origin, _seeded_args(level, i)))
        # the decoy sits on the board at every level (the graded core stays constant), and one serving the find
        # description as well as the target would make Find a coin toss, so such a widget is passed over
        # (when every candidate ties, the first is still seeded: without a decoy the stated values alone would
        # single the target out)
        first = _decoy(level)
        pointer = s.find_pointer if level.number == 1 else None
        if pointer is not None and pointer.twins:
            # the pointer's rival entry names a twin instance of the target (its declared options alone single
            # it out): the decoy is that instance, on the twin's values
            first = (
                level.first.widget_id,
                level.first.origin,
                {**stale[0].data_args, **dict(pointer.twins[0])},
            )
        elif pointer is not None:
            # the pointer's rival entry names a widget on the board: the decoy (the one a reader of the wrong
            # entry would repair)
            fixture = level.fixture(level.first.origin)
            others = set(fixture.catalog.widgets) - {pointer.rival} if fixture is not None else set()
            first = _decoy(level, frozenset(others))
        passed: set[str] = set()
        while (
            pointer is None
            and (found := _decoy(level, frozenset(passed))) is not None
            and not _still_found(level, [s.targets[0].widget_id, found[0]])
        ):
            passed.add(found[0])
        found = first if pointer is not None else (found or first)
        if found is not None:
            decoy = placing.widget("decoy", *found)
            if level.number == 1:
                # Find hides which widget is the target: with two on the board any positional rule ("the
                # first placed", "the last", "top-left") picks it on half the tasks, so Find seeds more
                # look-alikes (each taking the stated values, each to stay as seeded) and the drawn order
                # leaves a fixed position right about once in FIND_BOARD tasks.
                seen = {found[0]}
                board_ids = [s.targets[0].widget_id, found[0]]
                for i, values in enumerate(pointer.twins[1:] if pointer is not None else ()):
                    # the further twins, so that among its own instances the target sits at neither end
                    args = {**stale[0].data_args, **dict(values)}
                    lookalikes.append(placing.widget(f"twin{i}", found[0], found[1], args))
                listed = (
                    [wid for _, wid, _ in pointer.more] if pointer is not None and not pointer.twins else []
                )
                for wid in listed:
                    # the pointer's further entries name widgets on the board too: a repair goes to a placed
                    # widget, so one listed but not placed would be struck off the list unread
                    fixture = level.fixture(level.first.origin)
                    others = set(fixture.catalog.widgets) - {wid} if fixture is not None else set()
                    if (more := _decoy(level, frozenset(others), turn=len(lookalikes) + 1)) is not None:
                        seen.add(more[0])
                        lookalikes.append(placing.widget(f"lookalike{len(lookalikes)}", *more))
                while len(placing.widgets) < FIND_BOARD and (
                    more := _decoy(level, frozenset(seen), own_app=True, turn=len(lookalikes) + 1)
                ):
                    seen.add(more[0])
                    if _still_found(level, [*board_ids, more[0]]):
                        board_ids.append(more[0])
                        lookalikes.append(placing.widget(f"lookalike{len(lookalikes)}", *more))
                for side in _open_sides(level, board_ids)[:FIND_EXTRA]:
                    # a reader of the catalog's order takes the first (or last) listed widget of those placed that
                    # take the stated values: one listed before the target and one after it are placed too
                    # (the live product's listing order is the world's; the board is ours to furnish), of the
                    # target's app (a board holds views of its own world: where the app lists none there, the
                    # counterfactual copy establishes the level, and `check` warns)
                    more = _decoy(level, frozenset(seen), own_app=True, turn=len(lookalikes) + 1, where=side)
                    if more is not None and _still_found(level, [*board_ids, more[0]]):
                        seen.add(more[0])
                        board_ids.append(more[0])
                        lookalikes.append(placing.widget(f"lookalike{len(lookalikes)}", *more))
                if not _off_defaults_above(level, placing, lookalikes, stale[0]):
                    # no look-alike placed has parameters enough to stand further off: one that has is placed
                    mine = _off_default(
                        level.widget_def(stale[0].origin, stale[0].widget_id), stale[0].data_args
                    )
                    more = _decoy(
                        level,
                        frozenset(seen),
                        own_app=True,
                        turn=len(lookalikes) + 1,
                        where=lambda wid: _can_stand_off(level, wid) > mine,
                    )
                    room = len(placing.widgets) < FIND_BOARD + FIND_EXTRA
                    if room and more is not None and _still_found(level, [*board_ids, more[0]]):
                        seen.add(more[0])
                        board_ids.append(more[0])
                        lookalikes.append(placing.widget(f"lookalike{len(lookalikes)}", *more))
                    _off_defaults_above(level, placing, lookalikes, stale[0], tie=True)
    doc = s.policy_doc
    if level.number == 2 and doc is not None and doc.kind == "note":
        lines = doc.text.splitlines()
        # the rotation drawn from the task's id first (so no fixed line holds the rule across a taskset), then
        # the next ones, as `rules.compile_level` asks while a shortcut still passes: every rotation is tried
        offset = int.from_bytes(
            hashlib.sha256(f"{level.ctx.persona.slug}|{level.slug}".encode()).digest()[:4], "big"
        )
        turn = (offset + level.draw) % max(1, len(lines))
        text = "\n".join(lines[turn:] + lines[:turn])
        policy_note = placing.note("policy-note", doc.ref, text, Slot.at(len(placing.widgets), NOTE_H))
    elif level.compare is not None and doc is not None and doc.rival_note is not None:
        # the rival rule Derive's second view takes, coined by the pipeline, is defined where an agent reads it
        name, text = doc.rival_note
        policy_note = placing.note("policy-note", name, text, Slot.at(len(placing.widgets), NOTE_H))
    pointer_note = None
    if level.number == 1 and s.find_pointer is not None:
        pointer_note = placing.note(
            "pointer-note",
            s.find_pointer.note,
            s.find_pointer.text(level.first.name),
            Slot.at(len(placing.widgets), NOTE_H),
        )

    def board(**lived: Any) -> Board:
        """What was placed, drawn into cells; a lived-in board adds its twin, furniture and prior note (look-alikes
        are Find's, so empty there)."""
        return _drawn(
            level,
            Board(
                tuple(placing.widgets),
                tuple(placing.notes),
                tuple(stale),
                decoy,
                policy_note=policy_note,
                pointer_note=pointer_note,
                lookalikes=tuple(lookalikes),
                **lived,
            ),
        )

    if not level.lived:
        return board()
    t0 = level.first
    twin = None
    twin_params = _twin_params(level)
    if twin_params is not None:
        twin = placing.widget("twin", t0.widget_id, t0.origin, twin_params)
    furniture = None
    found_furniture = _furniture(level, decoy)
    if found_furniture is not None:
        wid, name, origin, params = found_furniture
        # a side repair is work the story asks for: only a view the story names gets one (a view drawn from the
        # target's app is ordinary furniture, on its right values, and the level differs by what it hides)
        named = name in story_widgets(level)
        fix = _furniture_fix(level, wid, origin, params) if s.governance.sets and named else None
        seed = placing.widget("furniture", wid, origin, {**params, **(fix.wrong if fix else {})})
        furniture = Furniture(seed, name, {**params, **(fix.right if fix else {})}, fix)
    text = (
        f"Prior pass on {level.dash}: leave the {t0.name} cut to "
        f"{', '.join(said_as_text(v) for v in (twin_params or t0.params).values())} in place"
        + (f" next to the {furniture.name}" if furniture else "")
        + " until the next review."
    )
    placed = len(placing.widgets)
    slot = Slot.at(placed, NOTE_H, SEED_W if placed % 2 else 2 * SEED_W)
    prior_note = placing.note("prior-note", f"Prior {level.dash} Note", text, slot)
    return board(twin=twin, furniture=furniture, prior_note=prior_note)


def _inner_uuid(level: Level, board: Board) -> dict[str, str]:
    """At a Find repair, a new uuid for the target (old → new) where its own is the smallest or the largest of
    the placed widgets that take as many stated values as it does (its look-alikes, its twins): ids are
    minted from role names, and an agent that cannot tell the candidates apart may take the first or the last
    id, as a positional rule takes the first or last cell. The new one is drawn from the old (the same task
    always mints the same) between the smallest and the largest of theirs. Empty where the target's id is
    already between them, or fewer than two candidates stand beside it."""
    if not board.stale:
        return {}
    t = board.stale[0]
    fixture = level.fixture(t.origin)
    catalog = fixture.catalog.widgets if fixture is not None else {}
    if t.widget_id not in catalog:
        return {}
    top = _fit(level, catalog[t.widget_id])
    rivals = [
        w.uuid
        for w in board.widgets
        if w.uuid != t.uuid and w.widget_id in catalog and _fit(level, catalog[w.widget_id]) >= top
    ]
    if len(rivals) < 2 or min(rivals) < t.uuid < max(rivals):
        return {}
    taken = {w.uuid for w in board.widgets} | {n.uuid for n in board.notes}
    for k in range(1, 4096):
        new = "w_" + hashlib.sha256(f"{t.uuid}|{k}".encode()).hexdigest()[:4]
        if min(rivals) < new < max(rivals) and new not in taken:
            return {t.uuid: new}
    return {}


def _drawn(level: Level, board: Board) -> Board:
    """The board with its widgets' order and grid cells drawn from the task's id: the target, its look-alike,
    the twin, the decoy and the furniture each land first (and in any cell) on some tasks and not on others, so
    that no fixed position — "the first placed widget" — predicts the target across a taskset. The draw is a
    hash, so the same task always seeds the same board; notes keep their cells after the widgets. A Find
    repair's target is then moved to the place its turn deals it (`_dealt`)."""
    task = f"{level.ctx.persona.slug}|{level.slug}_level{level.number}"

    def rank(w: Seeded) -> bytes:
        return hashlib.sha256(f"{task}|{w.uuid}".encode()).digest()

    order = sorted(board.widgets, key=rank)
    if level.number == 1 and len(order) >= 3 and board.stale:
        order = _dealt(level, board, order, task, rank)
    minted = _inner_uuid(level, board) if level.number == 1 else {}
    moved = {
        w.uuid: replace(w, uuid=minted.get(w.uuid, w.uuid), slot=Slot.at(i)) for i, w in enumerate(order)
    }

    def at(w: Seeded | None) -> Seeded | None:
        return moved[w.uuid] if w is not None else None

    furniture = board.furniture
    return replace(
        board,
        widgets=tuple(moved[w.uuid] for w in order),
        stale=tuple(moved[w.uuid] for w in board.stale),
        decoy=at(board.decoy),
        lookalikes=tuple(moved[w.uuid] for w in board.lookalikes),
        twin=at(board.twin),
        furniture=replace(furniture, seed=moved[furniture.seed.uuid]) if furniture else None,
    )


def inner_places(placed: int) -> list[int]:
    """The places (indexes of the placed order, laid two to a row: `Slot.at`) a Find repair's target may take on
    a board of `placed` widgets: never the first or the last placed, what a positional rule tries first."""
    return list(range(1, placed - 1))


def dealt_places(turns: tuple[tuple[str, int], ...]) -> dict[str, int]:
    """The place (`inner_places`) dealt to each Find repair's target over a taskset (`turns`: task ids in their
    drawn order, each with how many widgets its board places; `AuthorContext.find_order`). Dealt one board at a
    time — those with the fewest places first, then in the drawn order — each to the place whose grid row
    (`Slot.at`: two to a row) and index hold the fewest targets dealt so far (the fewer of the two first, then
    their sum; ties broken by a hash of the task and place), so that every index of the placed order, every row
    and every cell holds the target on as few tasks as the boards allow: about a third of the repairs per row on
    six-widget boards, where uniform over the inner places the middle row (two of them, against one in the first
    and the last row) takes half. A pure function of `turns`: every task deals the same."""
    rows: Counter[int] = Counter()
    places: Counter[int] = Counter()
    out: dict[str, int] = {}
    order = sorted(range(len(turns)), key=lambda k: (len(inner_places(turns[k][1])), k))
    for k in order:
        task, placed = turns[k]
        inner = inner_places(placed)
        if not inner:
            continue

        def load(i: int, task: str = task) -> tuple[int, int, bytes]:
            row, at = rows[i // 2], places[i]
            return (max(row, at), row + at, hashlib.sha256(f"{task}|place{i}".encode()).digest())

        best = min(inner, key=load)
        out[task] = best
        rows[best // 2] += 1
        places[best] += 1
    return out


def _dealt(level: Level, board: Board, order: list[Seeded], task: str, rank: Any) -> list[Seeded]:
    """A Find repair's board order (drawn by `rank`) with its target moved to the place dealt to it over the
    taskset's Find repairs (`dealt_places` over `AuthorContext.find_order`, this board as placed) — so that across a taskset no fixed place (an index of the placed order, a grid
    row, a cell) holds the target on more than its share of the Find repairs, where a draw per task leaves a place
    three times in six. The other targets are kept off both ends; and among the instances of the target's own
    widget (twins beside a target its options alone single out) the target is neither the first nor the last
    where there are three or more — the other instances are moved around it, never the target."""
    order = list(order)
    first = board.stale[0]
    # (this board as placed, whatever the taskset written so far says; a task the context does not list, dealt
    # after those it does)
    listed = level.ctx.find_order
    turns = tuple((t, len(order) if t == task else n) for t, n in listed)
    if task not in {t for t, _ in listed}:
        turns += ((task, len(order)),)
    j = dealt_places(turns)[task]
    i = next(k for k, w in enumerate(order) if w.uuid == first.uuid)
    order[i], order[j] = order[j], order[i]
    targets = {w.uuid for w in board.stale}
    for end in (0, len(order) - 1):
        if order[end].uuid in targets:
            inner = [k for k in range(1, len(order) - 1) if order[k].uuid not in targets]
            if inner:
                k = inner[int.from_bytes(rank(order[end])[:4], "big") % len(inner)]
                order[end], order[k] = order[k], order[end]

    def own(w: Seeded) -> bool:
        return (w.origin, w.widget_id) == (first.origin, first.widget_id)

    mine = [k for k, w in enumerate(order) if own(w)]
    if len(mine) >= 3 and j in (mine[0], mine[-1]):
        # an instance from the far side is moved to the near side of the target, onto a widget of another kind
        # (never another target): the target keeps its dealt place
        near = range(j) if j == mine[0] else range(j + 1, len(order))
        spots = [k for k in near if not own(order[k]) and order[k].uuid not in targets]
        if spots:
            far = mine[-1] if j == mine[0] else mine[0]
            k = spots[int.from_bytes(rank(order[far])[:4], "big") % len(spots)]
            order[far], order[k] = order[k], order[far]
    return _untied(level, board, order, j, lambda w: own(w) or w.uuid in targets)


# How far down a measure's ranking (highest first, ties in board order) a reader takes its pick: the top one,
# and for the request's words the runner-up too (a chooser that expects the gate to refuse only the clear top
# match takes the second)
TIE_READS = {"words": (0, 1), "other": (0,)}


def tie_measures(level: Level, widgets: list[Seeded]) -> list[tuple[str, list[float]]]:
    """(kind, one score per widget) for the measures an outside player may rank a Find repair's placed widgets
    by, the highest first and ties broken by the board's order: the words each catalog entry (its name, its
    description, both) shares with what the request says (each description it may say, by words and by stems),
    the letters its name shares with the board's, its name's length either way, how many parameters it has, how
    many stated values it takes, how many of its values stand off their defaults, how many placed widgets are
    its catalog neighbours or of its sub-category. Kind "words" for the request's words (read to the second
    place, `TIE_READS`), "other" for the rest."""
    from certify import lexical_stems as _stems
    from certify import lexical_words as _words

    t0 = level.first
    fixture = level.fixture(t0.origin)
    if fixture is None or any(w.widget_id not in fixture.catalog.widgets for w in widgets):
        return []
    catalog = fixture.catalog.widgets
    defs = [catalog[w.widget_id] for w in widgets]
    s = level.story
    said = find_said(s.story, t0)
    hints = [h for h in (s.find_hints or [s.find_hint]) if h] or [""]
    out: list[tuple[str, list[float]]] = []
    fields = {
        "name": lambda d: d.name,
        "description": lambda d: str(d.definition.get("description") or ""),
        "name+description": lambda d: f"{d.name} {d.definition.get('description') or ''}",
    }
    for hint in hints:
        for tokenize in (_words, _stems):
            asked = set(tokenize(f"{said} {hint}"))
            for get in fields.values():
                out.append(("words", [float(len(asked & set(tokenize(get(d))))) for d in defs]))
    board = Counter(ch for ch in level.dash.lower() if ch.isalpha())
    out.append(
        (
            "other",
            [float(sum((Counter(c for c in d.name.lower() if c.isalpha()) & board).values())) for d in defs],
        )
    )
    out.append(("other", [float(len(d.name)) for d in defs]))
    out.append(("other", [-float(len(d.name)) for d in defs]))
    out.append(("other", [float(len(d.params)) for d in defs]))
    out.append(("other", [float(_fit(level, d)) for d in defs]))
    out.append(("other", [float(_off_default(d, w.data_args)) for d, w in zip(defs, widgets, strict=True)]))
    listed = {wid: i for i, wid in enumerate(catalog)}
    at = [listed.get(w.widget_id, -10) for w in widgets]
    out.append(("other", [float(sum(1 for b in at if abs(a - b) == 1)) for a in at]))
    subs = Counter(str(d.definition.get("subCategory")) for d in defs)
    out.append(("other", [float(subs[str(d.definition.get("subCategory"))]) for d in defs]))
    return out


def tie_reads(measures: list[tuple[str, list[float]]], order: list[int], target: int) -> int:
    """How many of `measures` (`tie_measures`, one score per widget) a reader takes the target by, the widgets
    placed in `order` (indexes into the scores) — its place in the measure's ranking, ties in board order, one
    the reader takes (`TIE_READS`)."""
    where = {k: i for i, k in enumerate(order)}
    hits = 0
    for kind, scores in measures:
        mine = scores[target]
        above = sum(1 for k, v in enumerate(scores) if v > mine or (v == mine and where[k] < where[target]))
        hits += above in TIE_READS.get(kind, TIE_READS["other"])
    return hits


def _untied(level: Level, board: Board, order: list[Seeded], j: int, fixed: Any) -> list[Seeded]:
    """A Find repair's board order with the widgets that may move (`fixed` tells those that may not: the
    targets, the target's own instances) rearranged so that the target — kept at its dealt place `j` — is taken
    by as few tie-breaking readers as the board allows (`tie_reads`): a player ranking the placed widgets by a
    measure the target ties on breaks the tie by board order, and "the target placed before the widgets it ties
    with" would hand it every such tie (second_best_overlap, ROUND7.md). Which widgets stand before the target
    decides that alone, so of the sets that can (kept as drawn where it reads as few), the fewest reads win,
    then the set nearest the drawn one; each side keeps its drawn order."""
    from itertools import combinations

    target = order[j]
    free = [k for k, w in enumerate(order) if k != j and not fixed(w)]
    before = [k for k in free if k < j]
    if not before or len(before) == len(free):
        return order
    measures = tie_measures(level, order)
    if not measures:
        return order
    index = {w.uuid: k for k, w in enumerate(order)}
    best: tuple[tuple[int, int], list[Seeded]] | None = None
    for chosen in combinations(free, len(before)):
        ahead = [order[k] for k in chosen]
        behind = [order[k] for k in free if k not in chosen]
        trial = list(order)
        for k, w in zip(before, ahead, strict=True):
            trial[k] = w
        for k, w in zip([k for k in free if k > j], behind, strict=True):
            trial[k] = w
        reads = tie_reads(measures, [index[w.uuid] for w in trial], index[target.uuid])
        key = (reads, len(set(chosen) - set(before)))
        if best is None or key < best[0]:
            best = (key, trial)
    return best[1] if best is not None else order


def _other_value(t: ResolvedTarget, key: str, avoid: set[str]) -> Any:
    """An option of the target's parameter `key` that is none of `avoid` (None when it has no other)."""
    return next((v for v in t.widget.options(key) if str(v) not in avoid), None)


def _twin_params(level: Level) -> dict[str, Any] | None:
    s, t0 = level.story, level.first
    twin = dict(t0.params)
    grounded = level.grounded_key
    keys = list(s.seeded_wrong) if s.kind == "repair" else [s.carried_key]
    if grounded is not None and grounded in t0.params:
        keys = [grounded, *(k for k in keys if k != grounded)]
    keys += [k for k in t0.params if k not in keys]
    changed = False
    for key in keys:
        if key not in twin:
            continue
        avoid = {
            str(t.params.get(key)) for t in s.targets if (t.origin, t.widget_id) == (t0.origin, t0.widget_id)
        } | {str(s.seeded_wrong.get(key, t0.params.get(key)))}
        if s.execute_instance and key in s.execute_instance:
            avoid.add(str(s.execute_instance[key]))  # the instance the level repairs shows it (`working`)
        other = _other_value(t0, key, avoid)
        if other is not None:
            twin[key] = other
            changed = True
            if s.kind != "repair":
                break
    return twin if changed else None


def _still_found(level: Level, widget_ids: list[str]) -> bool:
    """Whether the Find rung, ranking the board's widgets by what they serve (BM25 over `served_text`, as
    `certify.agents.request.find_described` does among what is placed), still puts the target first for each
    description the rule author may say: a look-alike or decoy is there to defeat positional and signature rules,
    and one that serves the description as well or better would change the answer instead. Without a description
    (a level that names its target) nothing is ranked."""
    t0 = level.first
    fixture = level.fixture(t0.origin)
    hints = [h for h in (level.story.find_hints or [level.story.find_hint]) if h]
    if fixture is None or not hints or level.story.find_pointer is not None:
        # a level found by a planted pointer ranks nothing by what is served
        return True
    served = [served_text(fixture.catalog.widgets[w].schema()) for w in widget_ids]
    index = BM25(served)
    # the target alone at the top: at a tie the rung takes whichever is placed first, and the draw decides that
    return all(
        (ranked := index.rank(h)) and ranked[0][0] == 0 and (len(ranked) == 1 or ranked[1][1] < ranked[0][1])
        for h in hints
    )


def _fit(level: Level, definition: WidgetDef) -> int:
    """How many of the values the Find prompt states for the first target `definition`'s parameters take (what
    the decoy rule and a signature or catalog-order reader count)."""
    stated = level.said(level.first, level=1)
    return sum(1 for k, v in stated.items() if (p := definition.param(k)) is not None and value_allowed(p, v))


def _open_sides(level: Level, board_ids: list[str]) -> list[Any]:
    """For a Find repair's board (`board_ids`, the target first): a test of a widget id for each side of the target
    in its catalog's listing order on which no placed widget takes as many stated values as the target does — where
    the target would be the first (or the last) such widget listed, which a reader of places takes unread."""
    t0 = level.first
    fixture = level.fixture(t0.origin)
    if fixture is None:
        return []
    order = {wid: i for i, wid in enumerate(fixture.catalog.widgets)}
    catalog = fixture.catalog.widgets
    top = _fit(level, t0.widget)
    fits = [w for w in dict.fromkeys(board_ids[1:]) if w in catalog and _fit(level, catalog[w]) >= top]
    at = order.get(t0.widget_id, 0)
    out: list[Any] = []
    if not any(order.get(w, -1) < at for w in fits):
        out.append(lambda wid: order.get(wid, len(order)) < at)
    if not any(order.get(w, -1) > at for w in fits):
        out.append(lambda wid: order.get(wid, -1) > at)
    return out


def _off_default(definition: WidgetDef, args: dict[str, Any]) -> int:
    """How many of `args` stand off their parameter's schema default (what a reader of "the one left off its
    defaults" counts)."""
    return sum(
        1
        for p in definition.params
        if p.get("paramName") in args and str(args[str(p.get("paramName"))]) != str(p.get("value"))
    )


def _can_stand_off(level: Level, widget_id: str) -> int:
    """How many parameters of `widget_id` could stand off their defaults on a look-alike (`_off_defaults_above`):
    those with an option besides the default that is neither a value Derive hides nor the one the prompt states
    for the target."""
    fixture = level.fixture(level.first.origin)
    definition = fixture.catalog.widgets.get(widget_id) if fixture is not None else None
    if definition is None:
        return 0
    hidden = _derive_hidden(level)
    stated = level.first.params
    return sum(
        1
        for p in definition.option_params
        if any(
            str(v) != str(p.get("value"))
            and said_as_text(v) not in hidden
            and str(v) != str(stated.get(str(p.get("paramName"))))
            for v in option_values(p)
        )
    )


def _off_defaults_above(
    level: Level, placing: _Placing, lookalikes: list[Seeded], target: Seeded, tie: bool = False
) -> bool:
    """A Find repair's target is seeded on its wrong values, off its defaults, and a decoy or look-alike shows
    those values where it takes them (`_shown_wrong`); on the rest of its parameters a look-alike would show its
    defaults, and the target could be the placed widget furthest off its defaults — unique or first of a tie,
    which a reader of values ("the one somebody changed") takes. So unless a placed widget already stands further
    off, the look-alike nearest the target's count (of another widget than the target's) gets parameters that
    stand on their defaults set off them (an option drawn by the task, never the value the prompt states for the
    target) until it stands further off than the target: then no order of breaking ties makes the target the top
    one. In place, in both lists; whether a placed widget now stands further off than the target. With `tie`,
    where none can, look-alikes are raised to the target's count instead."""
    t0 = level.first
    fixture = level.fixture(t0.origin)
    if fixture is None:
        return True
    catalog = fixture.catalog.widgets
    mine = _off_default(catalog[target.widget_id], target.data_args)
    placed = [w for w in placing.widgets if w.uuid != target.uuid and w.widget_id in catalog]
    if any(_off_default(catalog[w.widget_id], w.data_args) > mine for w in placed):
        return True
    hidden = _derive_hidden(level)
    ranked = sorted(
        (w for w in lookalikes if w.widget_id != target.widget_id and w.widget_id in catalog),
        key=lambda w: (-_off_default(catalog[w.widget_id], w.data_args), w.uuid),
    )

    def raised(w: Seeded, upto: int) -> dict[str, Any]:
        definition = catalog[w.widget_id]
        args = dict(w.data_args)
        for p in definition.option_params:
            name = str(p.get("paramName"))
            if _off_default(definition, args) >= upto:
                break
            if name in args and str(args[name]) != str(p.get("value")):
                continue
            # never the default, a value Derive hides, or the value the prompt states for the target
            others = [
                v
                for v in option_values(p)
                if str(v) != str(p.get("value"))
                and said_as_text(v) not in hidden
                and str(v) != str(t0.params.get(name))
            ]
            if others:
                drawn = pick([str(v) for v in others], level.slug, w.uuid, name)
                args[name] = next(v for v in others if str(v) == drawn)
        return args

    def put(w: Seeded, args: dict[str, Any]) -> None:
        now = replace(w, data_args=args)
        placing.widgets[placing.widgets.index(w)] = now
        lookalikes[lookalikes.index(w)] = now

    for w in ranked:
        args = raised(w, mine + 1)
        if _off_default(catalog[w.widget_id], args) > mine:
            put(w, args)
            return True
    if tie:
        # none can stand further off (its widget has too few parameters): as many as can stand as far off as the
        # target, so that a reader breaking the tie by chance takes the target as seldom as the board allows
        for w in ranked:
            args = raised(w, mine)
            if args != w.data_args and _off_default(catalog[w.widget_id], args) == mine:
                put(w, args)
    return False


def _decoy(
    level: Level,
    exclude: frozenset[str] = frozenset(),
    *,
    own_app: bool = False,
    turn: int = 0,
    where: Any = None,
) -> tuple[str, str, dict[str, Any]] | None:
    """A widget whose parameters take the values the Find prompt states (all of them if any does; one of the
    target's app first), seeded on another cut at every level (the graded core stays constant): with it on the
    dashboard, "the one placed widget that accepts the stated values" is no longer the target, so finding the
    target takes the description (or its name). `exclude`: widgets already placed as look-alikes; `own_app`:
    only a widget of the target's app (Find's further look-alikes: a board holds views of the story's own world);
    `turn`: which of the values the target's instances show it takes (`_shown_wrong`), in turn; `where`: a test
    of the widget id (a side of the target in the catalog's order, `_open_sides`), whose widgets must take as many
    stated values as the target. (widget_id, origin, params)."""
    s, t0 = level.story, level.first
    fixture = level.fixture(t0.origin)
    if fixture is None:
        return None
    taken = {t.widget_id for t in s.targets} | set(exclude)
    if s.standing_in is not None:
        # Execute's board does not seat the target its stand-in works in place of (`factcheck.working`)
        taken.add(s.standing_in.widget_id)
    app = t0.widget.definition.get("category")
    # Find's look-alikes are drawn to the request's words: of those that fit as well, the one that leaves the
    # fewest word and character similarity measures preferring the target for what the Find request says
    # (`factcheck.lexical_pull`), so that a player matching the board's names and descriptions against the
    # request picks a look-alike (the decoy, on the board at every level, is chosen as before)
    said = f"{find_said(s.story, t0)} {s.find_hint}" if own_app else ""
    best: tuple[Any, ...] | None = None
    # the stated values asked once, not once per widget of the catalog (each asking of every widget)
    stated = level.said(t0, level=1)
    full = _fit(level, t0.widget) if where is not None else 0
    listed = {w: i for i, w in enumerate(fixture.catalog.widgets)}
    at = listed.get(t0.widget_id, -4)
    beside = sum(1 for w in exclude if abs(listed.get(w, -2) - at) == 1)
    for wid, definition in fixture.catalog.widgets.items():
        if wid in taken or (own_app and definition.definition.get("category") != app):
            continue
        if where is not None and not where(wid):
            continue
        fit = sum(
            1 for k, v in stated.items() if (p := definition.param(k)) is not None and value_allowed(p, v)
        )
        if not fit or fit < full or (best is not None and s.standing_in is None and fit < best[0]):
            continue
        pull = -lexical_pull(said, t0.widget, definition) if own_app else 0
        mine = definition.definition.get("category") == app
        # a look-alike listed right beside the target makes the target the middle of a run of placed widgets in
        # the listing, which a reader of catalog neighbours picks unread: one apart from it first, where any fits
        # (one neighbour is any widget's lot; a second one beside the target is what builds the run, so the
        # request's words come first until one is placed)
        apart = not own_app or beside == 0 or abs(listed.get(wid, -2) - at) != 1
        # (beside Execute's stand-in, whose board keeps the target off, one of its own app first: the widgets
        # taking the most stated values may then be another app's, and a board holds views of its own world)
        candidate = (mine, fit, pull, wid) if s.standing_in is not None else (fit, mine, apart, pull, wid)
        if best is None or candidate > best:
            best = candidate
    if best is None:
        return None
    definition = fixture.catalog.widgets[best[-1]]
    params: dict[str, Any] = {}
    shown_wrong = _shown_wrong(level)
    hidden = _derive_hidden(level)
    for p in definition.option_params:
        name = str(p.get("paramName"))
        if name not in t0.params:
            continue
        values = option_values(p)
        fallback = [s.seeded_wrong.get(name), p.get("value"), *t0.widget.options(name)]
        other = next(
            (
                v
                for v in [*values, *([] if values else fallback)]
                if v is not None and str(v) != str(t0.params[name])
            ),
            None,
        )
        offered = [shown.get(name) for shown in shown_wrong]
        if shown_wrong and name not in s.seeded_wrong:
            offered.append(other)  # the target shows the stated value here: it or another, in turn
        takes = list(
            dict.fromkeys(
                v
                for v in offered
                if v is not None
                and not (name == s.carried_key and str(v) in hidden)
                and (not values or str(v) in {str(o) for o in values})
            )
        )
        if takes:
            params[name] = takes[turn % len(takes)]
        elif other is not None:
            params[name] = other
    return definition.widget_id, t0.origin, params


def _seeded_args(level: Level, i: int) -> dict[str, Any]:
    """What a repair's target `i` is seeded on: its stated values, the story's wrong ones over them (the first
    target's). Derive hides the carried value and the rival rule's, which its second view takes: at Derive the
    widget left wrong shows neither, and a wrong value the story seeds it on that is one of them is replaced at
    every level (it is wrong either way), so that the decoys, the same at each level, may show what it shows
    (`_shown_wrong`) without giving Derive's values away."""
    s = level.story
    t = s.targets[i]
    # (Execute on another instance of the target's widget seats it on a Find twin's values instead)
    wrong = {**t.params, **({**s.seeded_wrong, **(s.execute_instance or {})} if i == 0 else {})}
    key = s.carried_key
    shown = {str(t.params.get(key))} | _derive_hidden(level)
    seeded_off = i == 0 and key in s.seeded_wrong
    if i == s.carried_target and (level.number == 2 or seeded_off) and str(wrong.get(key)) in shown:
        other = _other_value(t, key, shown)
        if other is not None:
            wrong[key] = other
    return wrong


def _derive_hidden(level: Level) -> set[str]:
    """The values Derive hides on the carried parameter — the carried one and its second view's (the rival rule
    `factcheck.second_view` takes) — which no seeded widget shows at any level (the board is seeded the same at
    each, the graded core constant): a widget showing one would give it away."""
    s = level.story
    view = second_view(s.story, s.policy_doc, s.targets[s.carried_target], s.carried_key, s.carried_value)
    return {str(s.carried_value)} | ({str(view[1])} if view is not None else set())


def _shown_wrong(level: Level) -> list[dict[str, Any]]:
    """The values a repair's decoy or look-alike shows where it takes them — one rule for every board.

    Each takes, in turn, what one of the target's own instances shows: the target's seeded wrong values, and
    beside a target its declared options alone single out, each twin instance's (`FindPointer.twins`). On the
    first other option each, the decoys would share the board's common values while the target alone showed
    the story's wrong ones, and "the placed widget showing what no other shows" would be the target; all on the
    target's wrong values beside twins on other values, the target would be "the instance showing what the
    other widgets show". Taken in turn, every instance's values are shown by some other widget as often as the
    next one's, so no value singles an instance out either way, in the original or in the counterfactual copy
    that makes a twin the target. Where the target shows a stated value (a parameter the story does not seed
    wrong) the decoys take it or another option in turn: all on another, the target would be the one placed
    widget already showing it; all on it, the one furthest from the stated values. The instances' seeded
    values (the target's first), which `_decoy` takes in turn among those a widget takes (never one of
    Derive's hidden values)."""
    s = level.story
    if s.kind != "repair":
        return []
    pointer = s.find_pointer if level.number == 1 else None
    target = _seeded_args(level, 0)
    return [target, *({**target, **dict(values)} for values in (pointer.twins if pointer else ()))]


def story_widgets(level: Level) -> list[str]:
    """The catalog widgets of the first target's backend the story itself puts on its board: `facts.board`, in
    its order, then those its prose names (longest name first, so "Cash Ladder by Currency" wins over "Cash
    Ladder"); the targets are not among them."""
    s, t0 = level.story, level.first
    fixture = level.fixture(t0.origin)
    if fixture is None:
        return []
    names = {w.name for w in fixture.catalog.widgets.values()}
    targets = {t.name for t in s.targets}
    listed = [n for n in (s.facts.board or []) if n in names and n not in targets]
    prose = " ".join(s.story.prose.split())
    named, rest = [], prose
    for name in sorted(names - targets, key=len, reverse=True):
        if word_pattern(name).search(rest):
            named.append(name)
            rest = rest.replace(name, " ")
    return list(dict.fromkeys([*listed, *sorted(named, key=prose.find)]))


def _furniture(level: Level, decoy: Seeded | None) -> tuple[str, str, str, dict[str, Any]] | None:
    """A view the story puts on its board (`story_widgets`), else one of the first target's app (another widget
    of its backend when it names no app) — never a view of another desk's app; on the values the first target
    shares with it, else its defaults. (widget_id, name, origin, params)."""
    s, t0 = level.story, level.first
    fixture = level.fixture(t0.origin)
    if fixture is None:
        return None
    catalog = fixture.catalog
    taken = {t.widget_id for t in s.targets} | ({decoy.widget_id} if decoy else set())
    if s.standing_in is not None:
        # a level worked on a stand-in does not seat the target it stands in for (`factcheck.working`)
        taken.add(s.standing_in.widget_id)
    by_name = {w.name: wid for wid, w in catalog.widgets.items()}
    own = [w for n in story_widgets(level) if (w := by_name[n]) not in taken]
    if own:
        return _placed_as(catalog.widgets[own[0]], t0)
    pool = list(catalog.app_widgets(t0.app)) if t0.app else []
    if not pool:
        pool = list(catalog.widgets)
    pool = [w for w in dict.fromkeys(pool) if w not in taken and w in catalog.widgets]
    # the target's own desk within its app (its sub-category: Stress, not Value at Risk, on a stress board)
    desk = t0.widget.definition.get("subCategory")
    pool = [w for w in pool if catalog.widgets[w].definition.get("subCategory") == desk] or pool
    if not pool:
        return None
    if s.governance.sets:
        # the furniture gets a real repair at Ground: prefer a view with a parameter Ground does not decide
        fixable = [
            w
            for w in pool
            if any(
                str(q.get("paramName")) not in (level.grounded_key, s.carried_key)
                for q in catalog.widgets[w].option_params
            )
        ]
        pool = fixable or pool
    return _placed_as(catalog.widgets[pick(sorted(pool), level.slug, "furniture")], t0)


def _placed_as(widget: WidgetDef, t0: ResolvedTarget) -> tuple[str, str, str, dict[str, Any]]:
    """The furniture on the values the first target shares with it, else its defaults."""
    params: dict[str, Any] = {}
    for p in widget.option_params:
        name = p.get("paramName")
        if name in t0.params and any(str(v) == str(t0.params[name]) for v in option_values(p)):
            params[str(name)] = t0.params[name]
        elif p.get("value") is not None:
            params[str(name)] = p["value"]
    return widget.widget_id, widget.name, t0.origin, params


def _furniture_fix(level: Level, widget_id: str, origin: str, params: dict[str, Any]) -> Fix | None:
    """The real repair of a lived-in board: the furniture left on a wrong value of one of its parameters (never
    the one the level grounds, and never saying a hidden value). The wrong value is one of the desk's own when
    it can be (a value the story's prose or the persona names, or one of the persona's counterparts): the slip
    reads like one made on this desk, not a fund of another."""
    definition = level.widget_def(origin, widget_id)
    hidden = level.hidden_values()
    persona = level.ctx.persona
    desk = " ".join([level.story.story.prose, persona.text, *persona.voice.aliases])

    def of_desk(v: Any) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(said_as_text(v))}(?![\w-])", desk) is not None

    for p in definition.option_params:
        key = str(p.get("paramName"))
        right = params.get(key, p.get("value"))
        if (
            key in (level.grounded_key, level.story.carried_key)
            or right is None
            or said_as_text(right) in hidden
        ):
            continue
        options = [
            v
            for v in option_values(p)
            if v is not None and str(v) != str(right) and said_as_text(v) not in hidden
        ]
        wrong = next((v for v in sorted(options, key=lambda v: not of_desk(v))), None)
        if wrong is not None:
            return Fix({key: wrong}, {key: right})
    return None
