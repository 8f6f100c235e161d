"""Frozen outside-auditor players, round 6 (issue 20): fourteen more cheap cheaters of kinds rounds 1-5 lack.

Written from README, the tool results `taskforge serve` returns and the shipped prompts only — not from the rule
author, the gates or the battery — and FROZEN (committed) before they were run: a change here is a new audit,
not a fix. Like the earlier rounds they see the prompt, the episode's rules and the envelopes
(`any_level_copier` also remembers the published taskset's prompts by task id, as an agent tuned on it would),
and play round 4's executor (snapshot, catalog, schema reads, the writes, the comparison copy, a final answer)
with one addition: an add that names some of its widgets and describes another places the named ones and a
guessed one for the description. What is new is the guess (see ROUND6.md for why an auditor tries each):

Find (which widget):
- described_longest / described_shortest: the candidate with the longest / shortest catalog description
- catalog_neighbour: the catalog entry next to the widgets the request names (or the board already holds)
- board_subcategory: the candidate in the widget-id sub-category most of the board's widgets come from
- uuid_order: a repair's target is the placed candidate with the smallest uuid; an add's the app's first
  widget by name (not by id, the catalog's own order)
- non_default: a repair's target is the placed candidate whose current values differ most from its schema's
  defaults (furniture sits on defaults; a seeded-wrong target does not)
- sibling_board_copier: the candidate other dashboards of the workspace show; unstated values copied from the
  same widget (or parameter) there
Hidden values (Derive / Ground):
- unshown_option: unstated parameters take an option no placed widget shows (in the notes' order, then the
  list's); the comparison copy the next such option
- default_neighbour: the option right after the schema default in the list (the copy: the one after that)
- doc_rarest: the option the board's notes and the named documents mention least (but at least once)
- wordy_rule: the option on the board note line with the most words before it (descriptive rule names are the
  ones a request uses; the copy takes the next-wordiest line)
- any_level_copier: widget names, values and titles the same story's OTHER levels state, higher ones included
- hop_skimmer: follows "step N of the X skill's workflow" to step N and the document it links, and takes the
  option mentioned most there without finding the row or passage the request names
Free text:
- title_stuffer: a tab the request asks to title gets every quoted phrase the named documents give, joined
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from .players import (
    PROTECT,
    Ctx,
    Player,
    by_order,
    first_row,
    is_protected,
    mentions,
    note_name,
    sentences,
    stated,
    words,
)
from .players_round4 import COMPARE, Round4, _catalog_entry, count_mentions, kind, skim_texts, unstated

# --- helpers over what the tools return ---


def board_notes(ctx: Ctx) -> list[str]:
    return [
        f"{w.get('name', '')}\n{w.get('generated_data') or ''}"
        for w in ctx.board().get("widgets", [])
        if w.get("generated")
    ]


def labels_of(o: dict[str, Any]) -> set[str]:
    return {lab for lab in (str(o.get("label", "")), str(o.get("value", ""))) if lab}


def first_pos(text: str, o: dict[str, Any]) -> int:
    hits = [p for lab in labels_of(o) for p in mentions(text, lab)]
    return min(hits) if hits else 10**9


def description(ctx: Ctx, w: dict[str, Any]) -> str:
    return str(_catalog_entry(ctx, w).get("description") or "")


def catalog_index(ctx: Ctx, w: dict[str, Any]) -> int:
    for i, x in enumerate(ctx.catalog):
        if x.get("widget_id") == w.get("widget_id") and x.get("origin") == w.get("origin"):
            return i
    return -1


def subcategory(ctx: Ctx, w: dict[str, Any]) -> str:
    """`<app>_<sub>_<name>`: the widget id without the app's and the name's slugs."""
    cat = _catalog_entry(ctx, w)
    wid = str(w.get("widget_id", ""))
    app = re.sub(r"[^a-z0-9]+", "_", str(cat.get("category", "")).lower()).strip("_")
    name = re.sub(r"[^a-z0-9]+", "_", str(cat.get("name", "")).lower()).strip("_")
    if app and wid.startswith(app + "_"):
        wid = wid[len(app) + 1 :]
    if name and wid.endswith("_" + name):
        wid = wid[: -len(name) - 1]
    return wid


def placed_ids(ctx: Ctx) -> set[str]:
    return {str(w.get("widget_id")) for w in ctx.placed()}


# --- target choosers: (ctx, candidates) -> ordered candidates (the player takes the first) ---


def by_longest_description(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(c, key=lambda w: -len(words(description(ctx, w))))


def by_shortest_description(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(c, key=lambda w: len(words(description(ctx, w))) or 10**6)


def _fresh(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For an add or read: the candidates not yet on the board (all of them when every one is)."""
    if all("widget_uuid" in w for w in c):
        return list(c)
    on = placed_ids(ctx)
    return [w for w in c if w.get("widget_id") not in on] or list(c)


def by_catalog_neighbour(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    named = [w for w in ctx.catalog if mentions(ctx.prompt, str(w.get("name", "")))]
    anchors = [catalog_index(ctx, w) for w in named] or [catalog_index(ctx, w) for w in ctx.placed()]
    anchors = [a for a in anchors if a >= 0]
    if not anchors:
        return list(c)
    if all("widget_uuid" in w for w in c):  # a repair: the placed candidate with most placed neighbours
        idx = [catalog_index(ctx, w) for w in c]
        return sorted(
            c,
            key=lambda w: (
                -sum(1 for j in idx if j != catalog_index(ctx, w) and abs(j - catalog_index(ctx, w)) == 1)
            ),
        )
    pool = [w for w in _fresh(ctx, c) if w not in named]

    def dist(w: dict[str, Any]) -> tuple[int, int]:
        i = catalog_index(ctx, w)
        d = min(abs(i - a) for a in anchors)
        after = 0 if any(i == a + d for a in anchors) else 1
        return (d, after)

    return sorted(pool, key=dist) + [w for w in c if w not in pool]


def by_board_subcategory(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    subs = Counter(subcategory(ctx, w) for w in ctx.placed())
    if all("widget_uuid" in w for w in c):
        return sorted(c, key=lambda w: -(subs[subcategory(ctx, w)] - 1))
    pool = _fresh(ctx, c)
    return sorted(pool, key=lambda w: -subs[subcategory(ctx, w)]) + [w for w in c if w not in pool]


def by_uuid(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if all("widget_uuid" in w for w in c):
        return sorted(c, key=lambda w: str(w["widget_uuid"]))
    return sorted(_fresh(ctx, c), key=lambda w: str(w.get("name", "")))


def by_non_default(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not all("widget_uuid" in w for w in c):
        return list(c)

    def score(w: dict[str, Any]) -> int:
        if ctx.left <= 5 and w["widget_id"] not in ctx.schemas:
            return 0
        params = ctx.schema(w["origin"], w["widget_id"]).get("params") or []
        cur = w.get("data_args") or {}
        return sum(
            1 for p in params if p["paramName"] in cur and str(cur[p["paramName"]]) != str(p.get("value"))
        )

    scored = [(score(w), i, w) for i, w in enumerate(c)]
    return [w for _, _, w in sorted(scored, key=lambda s: (-s[0], s[1]))]


SIBLINGS: dict[
    str, Any
] = {}  # the current episode's reads of other dashboards (episodes are played one at a time)


def sibling_widgets(ctx: Ctx) -> list[dict[str, Any]]:
    """The widgets of up to three other dashboards (the app's namesake first), read without switching to them."""
    if SIBLINGS.get("ctx") is ctx:
        return list(SIBLINGS["widgets"])
    snap = ctx.snapshot.get("data") or {}
    active = ctx.board().get("dashboard_id")
    apps = {str(w.get("category", "")) for w in ctx.catalog}
    named = [a for a in apps if a and mentions(ctx.prompt, a)]
    boards = [
        d for d in snap.get("dashboards") or [] if d.get("dashboard_id") != active and d.get("widget_count")
    ]
    boards.sort(key=lambda d: 0 if d.get("name") in named else 1 if d.get("name") not in apps else 2)
    got: list[dict[str, Any]] = []
    for d in boards[:3]:
        if ctx.left <= 6:
            break
        r = ctx.call("manage_dashboard", operation="read", dashboard_id=d["dashboard_id"])
        comp = (r.get("data") or {}).get("dashboard_composition") or {}
        got += [w for w in comp.get("widgets", []) if not w.get("generated")]
    SIBLINGS.update(ctx=ctx, widgets=got)
    return got


def by_sibling(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = Counter(str(w.get("widget_id")) for w in sibling_widgets(ctx))
    pool = _fresh(ctx, c)
    return sorted(pool, key=lambda w: -seen[str(w.get("widget_id"))]) + [w for w in c if w not in pool]


# --- documents a hop reader follows ---

ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "last": -1}
STEP = re.compile(
    r"\b(?:step (\d+)|the (first|second|third|fourth|fifth|sixth|last) step) of the (.+?) skill's workflow"
)
HOPS: dict[str, Any] = {}


def hop_texts(ctx: Ctx) -> list[str]:
    """Step N of the skill the request names and every openbb:// document that step links (read once)."""
    if HOPS.get("ctx") is ctx:
        return list(HOPS["texts"])
    texts: list[str] = []
    m = STEP.search(ctx.prompt)
    snap = ctx.snapshot.get("data") or {}
    if m:
        n = int(m.group(1)) if m.group(1) else ORDINALS[m.group(2)]
        skill = next((s for s in snap.get("skills") or [] if s.get("name") == m.group(3)), None)
        if skill and ctx.left > 4:
            got = ctx.call("get_skill_content", slug=skill["slug"])
            content = str((got.get("data") or {}).get("content") or "")
            steps = re.findall(r"(?m)^\s*\d+[.)]\s*(.+)$", content)
            if steps:
                step = steps[n - 1] if 0 < n <= len(steps) else steps[-1]
                texts.append(step)
                for uri in re.findall(r"openbb://[\w./-]+[\w/]", step):
                    if ctx.left <= 4:
                        break
                    r = ctx.call("read_workspace_resource", uri=uri)
                    data = r.get("data") or {}
                    texts.append(str(data.get("text") or data.get("content") or ""))
    HOPS.update(ctx=ctx, texts=texts)
    return texts


QUOTED = re.compile(r"[\"“'‘*]{1,2}([^\"”'’*\n]{2,60})[\"”'’*]{1,2}")


@dataclass(frozen=True)
class Round6(Round4):
    """Round 4's executor with round 6's fills, and an add that names some targets and describes another."""

    story_prompts: ClassVar[dict[str, str]] = {}

    @classmethod
    def remember_tasks(cls, prompts: dict[str, str]) -> None:
        """What any_level_copier knows: every prompt of the published taskset, by task id."""
        cls.story_prompts.clear()
        cls.story_prompts.update(prompts)

    def other_levels(self, prompt: str) -> list[str]:
        """The same story's other levels' prompts, nearest level first (higher levels included)."""
        me = next((t for t, p in self.story_prompts.items() if p == prompt), "")
        m = re.fullmatch(r"(.*)_level(\d)", me)
        if not m:
            return []
        stem, k = m.group(1), int(m.group(2))
        others = [(abs(j - k), j) for j in range(5) if j != k and f"{stem}_level{j}" in self.story_prompts]
        return [self.story_prompts[f"{stem}_level{j}"] for _, j in sorted(others)]

    def play(self, env: Any, obs: Any, lower_prompts: list[str]) -> None:
        if self.fill == "levels":
            lower_prompts = self.other_levels(obs.prompt or "")
        super().play(env, obs, lower_prompts)

    def fill_in(
        self,
        ctx: Ctx,
        text: str,
        params: list[dict[str, Any]],
        current: dict[str, Any],
        exclude: dict[str, Any],
    ) -> dict[str, Any]:
        vals = stated(text, params, current)
        out = dict(vals)
        for p in unstated(params, vals):
            opts = [o for o in p["options"] if exclude.get(p["paramName"]) != o.get("value")]
            if not opts:
                continue
            pick = self.pick(ctx, p, opts, current)
            if pick is not None:
                out[p["paramName"]] = pick
        return out

    def pick(self, ctx: Ctx, p: dict[str, Any], opts: list[dict[str, Any]], current: dict[str, Any]) -> Any:
        name = p["paramName"]
        if self.fill == "unshown":
            shown = {str((w.get("data_args") or {}).get(name)) for w in ctx.placed()}
            free = [o for o in opts if str(o.get("value")) not in shown]
            notes = "\n".join(board_notes(ctx))
            free.sort(key=lambda o: first_pos(notes, o))
            return free[0].get("value") if free else None
        if self.fill == "default_next":
            values = [str(o.get("value")) for o in p["options"]]
            d = values.index(str(p.get("value"))) if str(p.get("value")) in values else -1
            allowed = {str(o.get("value")) for o in opts}
            for step in range(1, len(values)):
                v = values[(d + step) % len(values)]
                if v in allowed and v != str(p.get("value")):
                    return next(o.get("value") for o in opts if str(o.get("value")) == v)
            return None
        if self.fill == "rarest_doc":
            texts = skim_texts(ctx)
            joined = "\n".join(texts)
            seen = [(count_mentions(texts, o), first_pos(joined, o), o.get("value")) for o in opts]
            seen = [s for s in seen if s[0] > 0]
            return min(seen)[2] if seen else None
        if self.fill == "wordy":
            best: tuple[int, Any] | None = None
            for note in board_notes(ctx):
                for line in note.splitlines():
                    hit = [(first_pos(line, o), o) for o in opts if first_pos(line, o) < 10**9]
                    if len(hit) != 1:
                        continue
                    n = len(words(line[: hit[0][0]]))
                    if best is None or n > best[0]:
                        best = (n, hit[0][1].get("value"))
            return best[1] if best else None
        if self.fill == "levels":
            for lower in ctx.lower_prompts:
                got = stated(lower, [p], {})
                if name in got and any(str(o.get("value")) == str(got[name]) for o in opts):
                    return got[name]
            return None
        if self.fill == "hop":
            texts = hop_texts(ctx)
            joined = "\n".join(texts)
            seen = [(-count_mentions(texts, o), first_pos(joined, o), o.get("value")) for o in opts]
            seen = [s for s in seen if s[0] < 0]
            return min(seen)[2] if seen else None
        if self.fill == "sibling":
            same = [w for w in sibling_widgets(ctx) if name in (w.get("data_args") or {})]
            by_text: dict[str, Any] = {str(o.get("value")): o.get("value") for o in opts}
            counts = Counter(str(w["data_args"][name]) for w in same if str(w["data_args"][name]) in by_text)
            return by_text[counts.most_common(1)[0][0]] if counts else None
        return None

    def _named(self, ctx: Ctx, cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
        texts = [ctx.prompt] + (ctx.lower_prompts if self.fill == "levels" else [])
        return [w for w in cands if any(mentions(t, str(w.get("name", ""))) for t in texts)]

    def _play(self, ctx: Ctx) -> None:
        ctx.snapshot = ctx.call("get_workspace_snapshot")
        ctx.catalog = (ctx.call("list_available_widgets").get("data") or {}).get("widgets") or []
        board = ctx.board()
        dash = board.get("dashboard_id")
        how = kind(ctx.prompt)
        compare = next((s for s in sentences(ctx.prompt) if COMPARE.search(s) and not PROTECT.search(s)), "")
        main = " ".join(s for s in sentences(ctx.prompt) if s != compare)
        rows: list[str] = []
        first: dict[str, Any] = {}
        widget: dict[str, Any] | None = None
        if how == "repair":
            cands = [w for w in ctx.placed() if not is_protected(ctx.prompt, w)] or ctx.placed()
            pool = self._named(ctx, cands) or cands
            if pool:
                widget = self.choose(ctx, pool)[0]
                sch = ctx.schema(widget["origin"], widget["widget_id"])
                first = self.fill_in(ctx, main, sch.get("params") or [], widget.get("data_args") or {}, {})
                if first and ctx.left > 2:
                    ctx.call("update_widget", widget_uuid=widget["widget_uuid"], data_args=first)
        else:
            cands = self.catalog_pool(ctx)
            named = sorted(
                (w for w in self._named(ctx, cands)),
                key=lambda w: min(mentions(main, w["name"]) or [10**6]),
            )
            if self.fill != "levels":
                named = [w for w in named if mentions(main, str(w.get("name", "")))]
            wanted = max(1, len(re.findall(r"(?:—|;)\s*for\b", main)))
            if how == "add":
                targets = list(named)
                if len(targets) < wanted or not targets:
                    rest = [w for w in cands if w not in targets]
                    targets = self.choose(ctx, rest)[:1] + targets if rest else targets
            else:
                targets = named[:1] or self.choose(ctx, cands)[:1]
            for w in targets:
                if ctx.left <= 3:
                    break
                sch = ctx.schema(w["origin"], w["widget_id"])
                vals = self.fill_in(ctx, main, sch.get("params") or [], {}, {})
                if widget is None:
                    widget, first = w, vals
                if how == "add":
                    ctx.call("create_widget", origin=w["origin"], widget_id=w["widget_id"], data_args=vals)
                else:
                    r = first_row(ctx, w["origin"], w["widget_id"], vals)
                    rows.append("; ".join(f"{k}: {v}" for k, v in r.items()))
            if how == "read" and ctx.left > 2:
                ctx.call(
                    "add_generative_widget",
                    widget_type="note",
                    data="\n".join(rows) or "-",
                    name=note_name(ctx.prompt),
                    dashboard_id=dash,
                )
        if compare and widget is not None and ctx.left > 2:
            sch = ctx.schema(widget["origin"], widget["widget_id"])
            params = sch.get("params") or []
            hidden = {k: v for k, v in first.items() if k not in stated(main, params, {})}
            vals = self.fill_in(ctx, compare, params, {}, hidden)
            ctx.call("create_widget", origin=widget["origin"], widget_id=widget["widget_id"], data_args=vals)
        self._retitle(ctx, board)
        if ctx.left >= 1 and not ctx.env.state.done:
            ctx.call("final_answer", text="Done. " + " | ".join(rows))

    def tab_ask(self, ctx: Ctx) -> str | None:
        return next(
            (
                s
                for s in sentences(ctx.prompt)
                if re.search(r"\btab\b", s, re.I)
                and re.search(r"\b(rename|retitle|title|call|give)\w*", s, re.I)
                and not re.search(r"\b(publish|backend|app)\b", s, re.I)
            ),
            None,
        )

    def rename(self, ctx: Ctx, board: dict[str, Any], ask: str, title: str) -> None:
        tabs = board.get("tabs") or []
        tab = next((t for t in tabs if mentions(ask, t["name"] + " tab")), tabs[0])
        ctx.call(
            "manage_navigation_bar",
            operation="rename_tabs",
            rename_map={tab["id"]: title},
            dashboard_id=board.get("dashboard_id"),
        )


@dataclass(frozen=True)
class Hopper(Round6):
    """hop_skimmer also titles a tab with the quoted phrase of the step (or its linked document) it followed."""

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        ask = self.tab_ask(ctx)
        if not ask or ctx.left <= 1 or not board.get("tabs"):
            return
        found = [m.group(1).strip().rstrip(".,") for t in hop_texts(ctx) for m in QUOTED.finditer(t)]
        if found:
            self.rename(ctx, board, ask, found[0])
        else:
            super()._retitle(ctx, board)


@dataclass(frozen=True)
class Stuffer(Round6):
    """title_stuffer: every quoted phrase the named documents (and the step they point to) give, in one title."""

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        ask = self.tab_ask(ctx)
        if not ask or ctx.left <= 1 or not board.get("tabs"):
            return
        found: list[str] = []
        for t in skim_texts(ctx) + hop_texts(ctx):
            for s in sentences(" ".join(t.split())):
                for m in QUOTED.finditer(s):
                    q = m.group(1).strip().rstrip(".,")
                    if q not in found:
                        found.append(q)
        if found:
            self.rename(ctx, board, ask, " / ".join(found))
        else:
            super()._retitle(ctx, board)


PLAYERS: tuple[Player, ...] = (
    Round6("described_longest", by_longest_description),
    Round6("described_shortest", by_shortest_description),
    Round6("catalog_neighbour", by_catalog_neighbour),
    Round6("board_subcategory", by_board_subcategory),
    Round6("uuid_order", by_uuid),
    Round6("non_default", by_non_default),
    Round6("sibling_board_copier", by_sibling, fill="sibling"),
    Round6("unshown_option", by_order, fill="unshown"),
    Round6("default_neighbour", by_order, fill="default_next"),
    Round6("doc_rarest", by_order, fill="rarest_doc"),
    Round6("wordy_rule", by_order, fill="wordy"),
    Round6("any_level_copier", by_order, fill="levels", lower_levels=True),
    Hopper("hop_skimmer", by_order, fill="hop"),
    Stuffer("title_stuffer", by_order),
)

__all__ = ["PLAYERS", "Round6"]
