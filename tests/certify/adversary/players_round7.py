"""Frozen outside-auditor players, round 7 (issue 20): thirteen more cheap cheaters of kinds rounds 1-6 lack.

Written from README, the tool results `taskforge serve` returns and the shipped prompts only — not from the rule
author, the gates or the battery — and FROZEN (committed) before they were run: a change here is a new audit,
not a fix. Like the earlier rounds they see the prompt, the episode's rules and the envelopes (`cross_story_copier`
also remembers the published taskset's prompts by task id, as an agent tuned on it would), and play round 6's
executor (snapshot, catalog, schema reads, the writes, the comparison copy, a final answer). What is new is the
guess (see ROUND7.md for why an auditor tries each):

Find (which widget):
- second_best_overlap: the candidate whose catalog name + description shares the SECOND-most words with the
  request (asides and stay-as-it-is sentences out) — the gate may refuse only the clear top match
- shortest_name: the candidate with the shortest catalog name (round 1 took the longest)
- board_letters: the candidate whose name shares the most letters (as a multiset) with the open board's name
- sample_mentions: the candidate whose served rows, read with its defaults, mention most of the request's words
- most_params: the candidate whose schema has the most parameters (the "richest" view)
- cross_story_copier: the candidate the most similar prompts of OTHER stories name
Hidden values (Derive / Ground):
- rule_nearest: the option the request itself mentions nearest its rule / source phrase ("… rule", "step N",
  "the row for", "comes from"); the copy the next-nearest
- longest_label / shortest_label: the option with the longest / shortest label; the copy the next one
- recent_period: a period takes the most recent-looking (shortest) window, its copy the longest; a status the
  option that reads most "live" (open / working / pending before closed / cancelled)
- workspace_named: the option whose label (or its first word) appears in a dashboard, tab or widget name of the
  workspace (every dashboard the snapshot lists)
- cross_story_copier: the value the most similar prompts of other stories state for the same parameter
Free text:
- caps_titler: a tab the request asks to title gets the request's capitalised phrase nearest the word "tab"
  that names nothing in the workspace (not a widget, board, app, backend, skill or tab)
- rounded_notes: a read's note holds every row the widget serves under each option of the first unstated
  parameter, every number rounded to one decimal (a note stuffed with every candidate value)
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .players import (
    PROTECT,
    Ctx,
    Player,
    by_order,
    is_protected,
    mentions,
    note_name,
    sentences,
    stated,
    words,
)
from .players_round4 import COMPARE, _catalog_entry, kind, unstated
from .players_round6 import Round6, first_pos, labels_of

# --- helpers over what the tools return ---


def request_words(ctx: Ctx) -> set[str]:
    """The request's content words, asides (parentheses) and stay-as-it-is sentences taken out."""
    text = " ".join(s for s in sentences(ctx.prompt) if not PROTECT.search(s))
    return set(words(re.sub(r"\([^)]*\)", " ", text)))


def entry_words(ctx: Ctx, w: dict[str, Any]) -> set[str]:
    cat = _catalog_entry(ctx, w)
    return set(words(f"{cat.get('name', '')} {cat.get('description', '')}"))


def entry_name(ctx: Ctx, w: dict[str, Any]) -> str:
    return str(_catalog_entry(ctx, w).get("name") or w.get("name") or "")


def _fresh(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For an add or read: the candidates not yet on the board (all of them when every one is)."""
    if all("widget_uuid" in w for w in c):
        return list(c)
    on = {str(w.get("widget_id")) for w in ctx.placed()}
    return [w for w in c if w.get("widget_id") not in on] or list(c)


def _rank(c: list[dict[str, Any]], score: Any) -> list[dict[str, Any]]:
    """Highest score first, ties in the given order."""
    scored = [(score(w), i, w) for i, w in enumerate(c)]
    return [w for _, _, w in sorted(scored, key=lambda s: (-s[0], s[1]))]


# --- target choosers: (ctx, candidates) -> ordered candidates (the player takes the first) ---


def by_second_overlap(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    req = request_words(ctx)
    pool = _fresh(ctx, c)
    ranked = _rank(pool, lambda w: len(entry_words(ctx, w) & req))
    ranked = ranked[1:2] + ranked[:1] + ranked[2:] if len(ranked) > 1 else ranked
    return ranked + [w for w in c if w not in ranked]


def by_shortest_name(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pool = _fresh(ctx, c)
    return sorted(pool, key=lambda w: len(entry_name(ctx, w)) or 10**6) + [w for w in c if w not in pool]


def letters(text: str) -> Counter[str]:
    return Counter(ch for ch in text.lower() if ch.isalpha())


def by_board_letters(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    board = letters(str(ctx.board().get("name") or ""))
    pool = _fresh(ctx, c)
    ranked = _rank(pool, lambda w: sum((letters(entry_name(ctx, w)) & board).values()))
    return ranked + [w for w in c if w not in ranked]


def served_text(ctx: Ctx, w: dict[str, Any]) -> str:
    """The first rows the widget serves with its defaults (read once per widget; nothing when the budget is low)."""
    key = f"rows:{w.get('origin')}:{w.get('widget_id')}"
    if key in ctx.schemas:
        return str(ctx.schemas[key].get("text", ""))
    if ctx.left <= 5:
        return ""
    got = ctx.call("get_widget_data", origin=w["origin"], widget_id=w["widget_id"], data_args={})
    data = got.get("data") or {}
    rows = data.get("rows") or data.get("data") or []
    if isinstance(rows, dict):
        rows = rows.get("rows") or []
    text = " ".join(" ".join(str(v) for v in r.values()) for r in rows[:5] if isinstance(r, dict))
    ctx.schemas[key] = {"text": text}
    return text


def by_sample_mentions(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    req = {x for x in request_words(ctx) if len(x) >= 4}
    pool = _fresh(ctx, c)
    ranked = _rank(pool, lambda w: len(set(words(served_text(ctx, w))) & req))
    return ranked + [w for w in c if w not in ranked]


def by_most_params(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def score(w: dict[str, Any]) -> int:
        if ctx.left <= 5 and w["widget_id"] not in ctx.schemas:
            return 0
        return len(ctx.schema(w["origin"], w["widget_id"]).get("params") or [])

    pool = _fresh(ctx, c)
    ranked = _rank(pool, score)
    return ranked + [w for w in c if w not in ranked]


def by_named_elsewhere(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidate the remembered similar prompts (ctx.lower_prompts, most similar first) name."""
    pool = _fresh(ctx, c)

    def score(w: dict[str, Any]) -> float:
        name = entry_name(ctx, w)
        return sum(len(mentions(p, name)) / (1 + i) for i, p in enumerate(ctx.lower_prompts))

    ranked = _rank(pool, score)
    return ranked + [w for w in c if w not in ranked]


# --- value guesses ---

ANCHOR = re.compile(
    r"\b(rule|convention|policy|comes from|step \d+|the (?:first|second|third|fourth|fifth|last) step|"
    r"the row for|prompt|resource|skill's)\b",
    re.I,
)
PERIODS = ("1d", "wtd", "mtd", "qtd", "ytd", "1y", "3y", "5y")
LIVE = ("open", "working", "pending", "new", "draft", "in review", "sent", "approved", "paid")


def period_rank(o: dict[str, Any]) -> int:
    for lab in labels_of(o):
        if lab.lower() in PERIODS:
            return PERIODS.index(lab.lower())
    return -1


def live_rank(o: dict[str, Any]) -> int:
    for lab in labels_of(o):
        for i, x in enumerate(LIVE):
            if lab.lower().startswith(x):
                return i
    return len(LIVE)


def workspace_names(ctx: Ctx) -> str:
    snap = ctx.snapshot.get("data") or {}
    names = [str(d.get("name", "")) for d in snap.get("dashboards") or []]
    board = ctx.board()
    names += [str(t.get("name", "")) for t in board.get("tabs") or []]
    names += [str(w.get("name", "")) for w in board.get("widgets") or []]
    return "\n".join(n for n in names if n)


def similar_prompts(story_prompts: dict[str, str], prompt: str, k: int = 3) -> list[str]:
    """The k prompts of OTHER stories whose words overlap this one's most (Jaccard), most similar first."""
    me = next((t for t, p in story_prompts.items() if p == prompt), "")
    stem = re.sub(r"_level\d$", "", me)
    mine = set(words(prompt))
    scored = []
    for t, p in story_prompts.items():
        if re.sub(r"_level\d$", "", t) == stem:
            continue
        theirs = set(words(p))
        scored.append((len(mine & theirs) / (1 + len(mine | theirs)), t, p))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [p for _, _, p in scored[:k]]


@dataclass(frozen=True)
class Round7(Round6):
    """Round 6's executor with round 7's fills, and a hook for what a read writes in its note."""

    def play(self, env: Any, obs: Any, lower_prompts: list[str]) -> None:
        if self.fill == "cross":
            lower_prompts = similar_prompts(self.story_prompts, obs.prompt or "")
        super().play(env, obs, lower_prompts)

    def pick(self, ctx: Ctx, p: dict[str, Any], opts: list[dict[str, Any]], current: dict[str, Any]) -> Any:
        if self.fill == "nearest":
            anchors = [m.start() for m in ANCHOR.finditer(ctx.prompt)]
            cur = str(current.get(p["paramName"]))
            hits = [
                (min(abs(pos - a) for a in anchors), pos, o.get("value"))
                for o in opts
                if str(o.get("value")) != cur
                for lab in labels_of(o)
                for pos in mentions(ctx.prompt, lab)
            ]
            return min(hits)[2] if hits and anchors else None
        if self.fill in ("longest", "shortest"):
            sign = -1 if self.fill == "longest" else 1
            ranked = sorted(
                enumerate(opts),
                key=lambda io: (sign * len(str(io[1].get("label") or io[1].get("value"))), io[0]),
            )
            return ranked[0][1].get("value") if ranked else None
        if self.fill == "recent":
            periods = [o for o in opts if period_rank(o) >= 0]
            if periods:
                # the first view takes the shortest window; a copy (the first view's value excluded) the longest
                full = [o for o in p["options"] if period_rank(o) >= 0]
                if len(periods) < len(full):
                    return max(periods, key=period_rank).get("value")
                return min(periods, key=period_rank).get("value")
            ranked = sorted(enumerate(opts), key=lambda io: (live_rank(io[1]), io[0]))
            return ranked[0][1].get("value") if ranked and live_rank(ranked[0][1]) < len(LIVE) else None
        if self.fill == "workspace":
            names = workspace_names(ctx)
            hits = []
            for o in opts:
                for lab in labels_of(o):
                    first = lab.split()[0] if lab.split() else lab
                    for cand in {lab, first}:
                        if len(cand) >= 2 and mentions(names, cand):
                            hits.append((-len(cand), first_pos(names, o), o.get("value")))
            return min(hits)[2] if hits else None
        if self.fill == "cross":
            for other in ctx.lower_prompts:
                got = stated(other, [p], {})
                if p["paramName"] in got and any(
                    str(o.get("value")) == str(got[p["paramName"]]) for o in opts
                ):
                    return got[p["paramName"]]
            return None
        return super().pick(ctx, p, opts, current)

    def read_rows(
        self, ctx: Ctx, w: dict[str, Any], vals: dict[str, Any], params: list[dict[str, Any]]
    ) -> str:
        got = ctx.call("get_widget_data", origin=w["origin"], widget_id=w["widget_id"], data_args=vals)
        data = got.get("data") or {}
        rows = data.get("rows") or data.get("data") or []
        if isinstance(rows, dict):
            rows = rows.get("rows") or []
        first = rows[0] if rows and isinstance(rows[0], dict) else {}
        return "; ".join(f"{k}: {v}" for k, v in first.items())

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
                (w for w in cands if mentions(main, str(w.get("name", "")))),
                key=lambda w: min(mentions(main, w["name"]) or [10**6]),
            )
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
                params = sch.get("params") or []
                vals = self.fill_in(ctx, main, params, {}, {})
                if widget is None:
                    widget, first = w, vals
                if how == "add":
                    ctx.call("create_widget", origin=w["origin"], widget_id=w["widget_id"], data_args=vals)
                else:
                    rows.append(self.read_rows(ctx, w, vals, params))
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


def rounded(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return f"{float(v):.1f}"


@dataclass(frozen=True)
class RoundedNoter(Round7):
    """rounded_notes: a read's note holds every served row under each option of the first unstated parameter,
    every number rounded to one decimal."""

    def read_rows(
        self, ctx: Ctx, w: dict[str, Any], vals: dict[str, Any], params: list[dict[str, Any]]
    ) -> str:
        said = stated(ctx.prompt, params, {})
        open_params = unstated(params, said)
        sets = [vals]
        if open_params:
            q = open_params[0]
            sets = [{**said, q["paramName"]: o.get("value")} for o in q["options"]]
        lines: list[str] = []
        for args in sets:
            if ctx.left <= 3:
                break
            got = ctx.call("get_widget_data", origin=w["origin"], widget_id=w["widget_id"], data_args=args)
            data = got.get("data") or {}
            rows = data.get("rows") or data.get("data") or []
            if isinstance(rows, dict):
                rows = rows.get("rows") or []
            for r in rows:
                if isinstance(r, dict):
                    lines.append("; ".join(f"{k}: {rounded(v)}" for k, v in r.items()))
        return "\n".join(lines)


CAPS = re.compile(r"(?<![\w'’])((?:[A-Z][\w&'’-]*)(?:\s+(?:of|and|the|&|[A-Z][\w&'’-]*))*)")


@dataclass(frozen=True)
class CapsTitler(Round7):
    """caps_titler: the tab gets the request's capitalised phrase nearest "tab" that names nothing known."""

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        ask = self.tab_ask(ctx)
        if not ask or ctx.left <= 1 or not board.get("tabs"):
            return
        snap = ctx.snapshot.get("data") or {}
        known = {str(w.get(k, "")).lower() for w in ctx.catalog for k in ("name", "category", "origin")}
        known |= {str(d.get("name", "")).lower() for d in snap.get("dashboards") or []}
        known |= {str(s.get("name", "")).lower() for s in snap.get("skills") or []}
        known |= {str(t.get("name", "")).lower() for t in board.get("tabs") or []}
        known |= {str(b.get("name", "")).lower() for b in snap.get("backends") or []}
        at = [m.start() for m in re.finditer(r"\btab\b", ctx.prompt, re.I)]
        starts = {0} | {m.end() for m in re.finditer(r"[.!?]\s+", ctx.prompt)}
        found = []
        for m in CAPS.finditer(ctx.prompt):
            phrase = m.group(1).strip()
            low = phrase.lower()
            if low in known or any(low in k or k in low for k in known if len(k) > 3):
                continue
            if m.start() in starts and " " not in phrase:
                continue  # a sentence's first word
            found.append((min((abs(m.start() - a) for a in at), default=10**6), m.start(), phrase))
        if found:
            self.rename(ctx, board, ask, min(found)[2])
        else:
            super()._retitle(ctx, board)


PLAYERS: tuple[Player, ...] = (
    Round7("second_best_overlap", by_second_overlap),
    Round7("shortest_name", by_shortest_name),
    Round7("board_letters", by_board_letters),
    Round7("sample_mentions", by_sample_mentions),
    Round7("most_params", by_most_params),
    Round7("cross_story_copier", by_named_elsewhere, fill="cross"),
    Round7("rule_nearest", by_order, fill="nearest"),
    Round7("longest_label", by_order, fill="longest"),
    Round7("shortest_label", by_order, fill="shortest"),
    Round7("recent_period", by_order, fill="recent"),
    Round7("workspace_named", by_order, fill="workspace"),
    CapsTitler("caps_titler", by_order),
    RoundedNoter("rounded_notes", by_order),
)

__all__ = ["PLAYERS", "Round7"]
