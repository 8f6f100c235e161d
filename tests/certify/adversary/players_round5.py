"""Frozen outside-auditor players, round 5 (issue 20): thirteen more cheap cheaters of kinds rounds 1-4 lack.

Written from README, the tool results `taskforge serve` returns and the shipped prompts only — not from the rule
author or the gates — and FROZEN before they were measured: a change here is a new audit, not a fix. Like the
earlier rounds they see the prompt, the episode's rules and the envelopes (`rarest_option` also remembers every
prompt of the published taskset), and play round 4's executor (snapshot, catalog, schema reads, the writes, the
comparison copy, a final answer), with one addition: an add that names some of its widgets and describes another
places the named ones and a guessed one for the description. What is new is the guess (see ROUND5.md):

- trigram_overlap / trigram_jaccard: Find by character trigrams shared between the request — its asides, the
  stay-as-it-is sentences, the values, board, backend and app names taken out — and each candidate's catalog
  name + description (raw count / Jaccard)
- pointer_first / pointer_last / pointer_wordshare: a board note that names two or more candidates (a
  "Shortlist"): its first, its last, or the one whose name shares most stems with the request — never the entry
  label the request names
- odd_one_out: a repair's target is the placed candidate showing values no other placed widget shows; an add or
  read's is the app's first widget not yet on the board whose schema takes the stated values
- mismatch_repair: a repair's target is the placed candidate whose current values differ from the stated ones on
  most parameters (a view already showing them needs no fix)
- subcategory_matcher: the candidate whose sub-category (the middle of its widget id) and name share most stems
  with the request, the board's name and its tabs
- schema_default: unstated parameters take the schema's default; a copy takes the first other option
- rarest_option: unstated parameters take the option the published taskset's prompts mention least
- note_value_copier: unstated parameters take the option the board's notes mention first (a copy the next one)
- doc_last_option: unstated parameters take the option the notes and named documents mention last, and a tab
  gets the last quoted title those documents give next to the word "tab"
- title_builder: a tab is titled from the request alone: the entity of "the row for X", else a quoted phrase,
  else the board's name
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
    first_row,
    is_protected,
    mentions,
    note_name,
    sentences,
    stated,
)
from .players_round4 import (
    COMPARE,
    Round4,
    _catalog_entry,
    count_mentions,
    kind,
    skim_texts,
    stems,
    unstated,
)


def trigrams(text: str) -> set[str]:
    t = re.sub(r"[^a-z0-9]+", " ", text.lower())
    return {t[i : i + 3] for i in range(len(t) - 2) if " " not in t[i : i + 3]}


def hint_text(ctx: Ctx) -> str:
    """The request without asides, stay-as-it-is sentences, option values, or board/backend/app names."""
    text = " ".join(s for s in sentences(ctx.prompt) if not PROTECT.search(s))
    text = re.sub(r"\([^)]*\)", " ", text)
    drop = {str(ctx.board().get("name") or "")}
    drop |= {str(w.get("origin", "")) for w in ctx.catalog} | {
        str(w.get("category", "")) for w in ctx.catalog
    }
    for sch in ctx.schemas.values():
        for p in sch.get("params") or []:
            drop |= {str(o.get("label", "")) for o in p.get("options") or []}
    for d in sorted((d for d in drop if d), key=len, reverse=True):
        text = re.sub(r"(?<![\w])" + re.escape(d) + r"(?![\w])", " ", text, flags=re.I)
    return text


def entry_text(ctx: Ctx, w: dict[str, Any]) -> str:
    cat = _catalog_entry(ctx, w)
    return f"{cat.get('name', '')} {cat.get('description', '')}"


def by_trigram_overlap(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    h = trigrams(hint_text(ctx))
    return sorted(c, key=lambda w: -len(trigrams(entry_text(ctx, w)) & h))


def by_trigram_jaccard(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    h = trigrams(hint_text(ctx))

    def score(w: dict[str, Any]) -> float:
        t = trigrams(entry_text(ctx, w))
        return len(t & h) / max(1, len(t | h))

    return sorted(c, key=lambda w: -score(w))


def note_listed(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidates a board note names, in the note's order (the first note that names two or more)."""
    for w in ctx.board().get("widgets", []):
        if not w.get("generated"):
            continue
        text = str(w.get("generated_data") or "")
        hits = []
        for cand in c:
            pos = mentions(text, str(cand.get("name", "")))
            if pos:
                hits.append((pos[0], cand))
        if len(hits) >= 2:
            return [cand for _, cand in sorted(hits, key=lambda h: h[0])]
    return []


def by_pointer_first(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    listed = note_listed(ctx, c)
    return listed + [w for w in c if w not in listed]


def by_pointer_last(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    listed = list(reversed(note_listed(ctx, c)))
    return listed + [w for w in c if w not in listed]


def by_pointer_wordshare(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    listed = note_listed(ctx, c)
    p = stems(hint_text(ctx))
    ranked = sorted(listed, key=lambda w: -len(stems(entry_text(ctx, w)) & p))
    return ranked + [w for w in c if w not in listed]


def _takes(ctx: Ctx, w: dict[str, Any]) -> int:
    """How many of the request's stated values the candidate's schema takes (read while the budget allows)."""
    if ctx.left <= 5 and w["widget_id"] not in ctx.schemas:
        return 0
    params = ctx.schema(w["origin"], w["widget_id"]).get("params") or []
    return len(stated(ctx.prompt, params, {}))


def by_odd_one_out(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    placed = ctx.placed()
    if c and all(any(w.get("widget_uuid") == x.get("widget_uuid") for x in placed) for w in c):
        seen: Counter[str] = Counter(
            f"{k}={v}" for x in placed for k, v in (x.get("data_args") or {}).items()
        )

        def rare(w: dict[str, Any]) -> int:
            return sum(1 for k, v in (w.get("data_args") or {}).items() if seen[f"{k}={v}"] == 1)

        return sorted(c, key=lambda w: -rare(w))
    on_board = {x.get("widget_id") for x in placed}
    fresh = [w for w in c if w.get("widget_id") not in on_board]
    best = max((_takes(ctx, w) for w in fresh[:6]), default=0)
    first = [w for w in fresh[:6] if best and w["widget_id"] in ctx.schemas and _takes(ctx, w) == best]
    return first + [w for w in c if w not in first]


def by_mismatch(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def score(w: dict[str, Any]) -> float:
        if "widget_uuid" not in w or (ctx.left <= 5 and w["widget_id"] not in ctx.schemas):
            return 0.0
        params = ctx.schema(w["origin"], w["widget_id"]).get("params") or []
        want = stated(ctx.prompt, params, {})
        cur = w.get("data_args") or {}
        return sum(1 for k, v in want.items() if str(cur.get(k)) != str(v)) + 0.1 * len(want)

    return sorted(c, key=lambda w: -score(w))


def subcategory(w: dict[str, Any]) -> str:
    """The middle of a widget id: `<app>_<sub-category>_<name>` (the app and name slugs taken off)."""
    wid = str(w.get("widget_id", ""))
    app = re.sub(r"[^a-z0-9]+", "_", str(w.get("category", "")).lower()).strip("_")
    name = re.sub(r"[^a-z0-9]+", "_", str(w.get("name", "")).lower()).strip("_")
    mid = wid
    if app and mid.startswith(app + "_"):
        mid = mid[len(app) + 1 :]
    if name and mid.endswith("_" + name):
        mid = mid[: -len(name) - 1]
    return mid.replace("_", " ")


def by_subcategory(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    board = ctx.board()
    text = " ".join(
        [hint_text(ctx), str(board.get("name") or "")]
        + [str(t.get("name", "")) for t in board.get("tabs") or []]
    )
    want = stems(text)

    def score(w: dict[str, Any]) -> float:
        cat = _catalog_entry(ctx, w)
        return len(stems(subcategory(cat)) & want) + 0.1 * len(stems(str(cat.get("name", ""))) & want)

    return sorted(c, key=lambda w: -score(w))


@dataclass(frozen=True)
class Round5(Round4):
    """Round 4's executor with round 5's fills, and an add that names some targets and describes another."""

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
            pick = self.pick(ctx, p, opts)
            if pick is not None:
                out[p["paramName"]] = pick
        return out

    def pick(self, ctx: Ctx, p: dict[str, Any], opts: list[dict[str, Any]]) -> Any:
        if self.fill == "default":
            default = [o for o in opts if str(o.get("value")) == str(p.get("value"))]
            return (default or opts)[0].get("value")
        if self.fill == "rarest":
            return min(
                enumerate(opts), key=lambda io: (count_mentions(list(self.taskset_prompts), io[1]), io[0])
            )[1].get("value")
        if self.fill in ("note_first", "doc_last"):
            texts = board_notes(ctx) if self.fill == "note_first" else skim_texts(ctx)
            joined = "\n".join(texts)
            hits = []
            for i, o in enumerate(opts):
                pos = [
                    q
                    for lab in {str(o.get("label", "")), str(o.get("value", ""))}
                    if lab
                    for q in mentions(joined, lab)
                ]
                if pos:
                    hits.append((min(pos) if self.fill == "note_first" else -max(pos), i, o.get("value")))
            return min(hits)[2] if hits else None
        return None

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
                key=lambda w: min(mentions(main, w["name"])),
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
                if re.search(r"\btab\b", s, re.I) and re.search(r"\b(rename|retitle|title|call)\w*", s, re.I)
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


def board_notes(ctx: Ctx) -> list[str]:
    return [
        f"{w.get('name', '')}\n{w.get('generated_data') or ''}"
        for w in ctx.board().get("widgets", [])
        if w.get("generated")
    ]


QUOTED = re.compile(r"[\"“'‘*]{1,2}([^\"”'’*]{2,60})[\"”'’*]{1,2}")


@dataclass(frozen=True)
class LastDoc(Round5):
    """doc_last_option also titles a tab with the last quoted phrase the documents give next to "tab"."""

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        ask = self.tab_ask(ctx)
        if not ask or ctx.left <= 1 or not board.get("tabs"):
            return
        found = [
            m.group(1).strip().rstrip(".,")
            for text in skim_texts(ctx)
            for s in sentences(" ".join(text.split()))
            if re.search(r"\btab\b", s, re.I)
            for m in QUOTED.finditer(s)
        ]
        if found:
            self.rename(ctx, board, ask, found[-1])
        else:
            super()._retitle(ctx, board)


@dataclass(frozen=True)
class TitleBuilder(Round5):
    """title_builder titles a tab from the request's own words."""

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        ask = self.tab_ask(ctx)
        if not ask or ctx.left <= 1 or not board.get("tabs"):
            return
        row = re.search(r"\brow for ((?:[A-Z0-9][\w&'’.-]*\s?)+)", ask)
        quoted = QUOTED.search(ask)
        if row:
            title = row.group(1).strip()
        elif quoted:
            title = quoted.group(1).strip()
        else:
            title = str(board.get("name") or "")
        self.rename(ctx, board, ask, title)


PLAYERS: tuple[Player, ...] = (
    Round5("trigram_overlap", by_trigram_overlap),
    Round5("trigram_jaccard", by_trigram_jaccard),
    Round5("pointer_first", by_pointer_first),
    Round5("pointer_last", by_pointer_last),
    Round5("pointer_wordshare", by_pointer_wordshare),
    Round5("odd_one_out", by_odd_one_out),
    Round5("mismatch_repair", by_mismatch),
    Round5("subcategory_matcher", by_subcategory),
    Round5("schema_default", by_order, fill="default"),
    Round5("rarest_option", by_order, fill="rarest"),
    Round5("note_value_copier", by_order, fill="note_first"),
    LastDoc("doc_last_option", by_order, fill="doc_last"),
    TitleBuilder("title_builder", by_order),
)

__all__ = ["PLAYERS", "Round5"]
