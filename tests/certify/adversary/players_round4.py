"""Frozen outside-auditor players, round 4 (issue 20): eight more cheap cheaters of kinds players.py lacks.

Written from README, the tool surface `taskforge serve` lists and the shipped prompts only — before reading the
rule author or the gates — and FROZEN before they were measured: a change here is a new audit, not a fix. Like
the first rounds' players they see only the prompt, the episode's rules and the envelopes (one exception,
`taskset_majority`, also remembers every prompt of the published taskset, as an agent tuned on it would), and
they reuse players.py's executor (snapshot, catalog, one schema read, the write, a final answer). What is new
is how they guess what a level hides:

- second_placed: the board's second placed widget (or the app's second catalog entry) — a positional guess
  the first/last/top-left players miss when a target is kept off the board's ends
- param_matcher: the app's widget whose parameters can take the most of the option values the prompt names
  (Find by "which widget has a fund and a severity filter", not by what it serves)
- board_namer: the app's widget whose name and description share most words with the open board's name and
  tabs; unstated parameters take the option whose label shares a word or stem with the board's name, its tabs
  or its notes' names
- source_skimmer: reads every note on the board and every document the prompt names (skills, resources, the
  workspace prompts) without following any step or row: the widget the notes name, each unstated parameter the
  option those texts mention most, a tab the prompt asks to title gets the first quoted or title-case phrase a
  document gives next to the word "tab"
- synonym_guesser: unstated parameters take the option whose label, or a finance synonym of it (a small
  lexicon: currencies, regions, periods, statuses, scenarios, cases), shares a stem with the words of the
  clause that asks for that parameter (what an agent that never opens the policy would guess from its name)
- board_copier: unstated parameters take the value the same parameter has on the other widgets already on the
  board (the most common one), as an agent that "matches the rest of the board" would
- taskset_majority: unstated parameters take the option mentioned most often across all the taskset's prompts
- option_sweeper: never decides — a read's note holds the first served row under every option of each
  unstated parameter, an add places one instance per option, a repair takes the option most often named in the
  prompt's other sentences
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


def stems(text: str) -> set[str]:
    """Crude stems: the first five letters of every content word (sterling/sterl, cancelled/cance)."""
    return {w[:5] for w in words(text) if len(w) >= 3}


# A small curated finance lexicon, written from general desk usage (not from any task): each option word on the
# left is guessed from any word on the right.
LEXICON: dict[str, tuple[str, ...]] = {
    "gbp": ("sterling", "pound", "pounds", "uk", "british", "london", "cable"),
    "usd": ("dollar", "dollars", "us", "american", "greenback", "new york"),
    "eur": ("euro", "euros", "eurozone", "continental", "single currency"),
    "jpy": ("yen", "japan", "japanese", "tokyo"),
    "chf": ("franc", "swiss", "switzerland"),
    "europe": ("european", "eurozone", "continental", "emea", "london", "eu", "europe"),
    "north america": ("us", "american", "americas", "usa", "canada", "new york", "domestic"),
    "asia pacific": ("apac", "asian", "asia", "pacific", "hong kong", "tokyo", "singapore", "branch"),
    "1d": ("day", "daily", "overnight", "today", "session", "pre-open", "intraday"),
    "mtd": ("month", "monthly", "month-to-date", "month-end"),
    "qtd": ("quarter", "quarterly", "quarter-to-date"),
    "ytd": ("year-to-date", "calendar", "annual"),
    "1y": ("year", "yearly", "rolling", "twelve", "annual", "trailing", "look-back"),
    "3y": ("three-year", "long", "longer"),
    "cancelled": ("pulled", "withdrawn", "cancel", "killed", "tidy-up", "removed", "left"),
    "denied": ("refused", "refusal", "refusals", "rejected", "declined", "blocked"),
    "rejected": ("refused", "refusal", "denied", "declined"),
    "approved": ("green-light", "cleared", "granted", "allowed", "accepted", "signed"),
    "paid": ("money-already-out", "settled", "out", "disbursed", "completed", "done"),
    "pending confirm": ("awaiting", "affirmation", "confirmation", "unconfirmed", "affirm"),
    "escalated": ("handed-to-legal", "legal", "raised", "escalation", "referred"),
    "draft": ("before-review", "preparation", "drafting", "worked", "unfinished", "first"),
    "in review": ("under review", "reviewing", "checked", "review", "interim"),
    "sent": ("after-review", "published", "delivered", "dispatched", "released", "final"),
    "open": ("still-digging", "outstanding", "unresolved", "new", "live"),
    "closed": ("resolved", "cured", "done", "finished", "archived"),
    "working": ("live", "resting", "active", "open"),
    "critical": ("top-down", "worst", "severe", "urgent", "red", "highest"),
    "high": ("elevated", "top", "significant"),
    "low": ("minor", "bottom-up", "trivial"),
    "medium": ("moderate", "mid"),
    "oil +40%": ("oil", "energy", "energy-shock", "crude", "red-folder"),
    "rates +150bp": ("rates", "rate", "hike", "tightening", "blue-folder"),
    "equities -15%": ("equity", "crash", "selloff", "sell-off"),
    "bear": ("downside", "conservative", "pessimistic", "new-position", "worst", "stress"),
    "bull": ("upside", "optimistic", "best"),
    "base": ("central", "expected", "standard", "provisional"),
    "board pack": ("trustees", "trustee", "board", "meeting"),
    "monthly factsheet": ("factsheet", "monthly", "provisional"),
    "liquidity": ("exit-horizon", "exit", "horizon", "liquid"),
    "leverage": ("gross-book", "gross", "levered"),
    "credit": ("bond", "evaluated-bond", "fixed income", "debt"),
    "equity": ("stock", "share", "shares"),
    "rights issue": ("anti-dilution", "dilution", "rights", "subscription"),
    "program trading": ("portfolio-trade", "basket", "program", "programme"),
}


def option_score(clause: str, label: str) -> float:
    """How strongly a clause's words suggest an option label: shared stems, then lexicon synonyms."""
    cl_words = set(words(clause)) | set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+", clause.lower()))
    cl_stems = stems(clause)
    lab = label.lower()
    score = float(len(stems(lab) & cl_stems))
    for key, syns in LEXICON.items():
        if key == lab or key in lab.split() or lab in key.split():
            for s in syns:
                if s in cl_words or (" " in s and s in clause.lower()):
                    score += 1.0
    return score


def clause_for(prompt: str, param: dict[str, Any]) -> str:
    """The prompt's sentences that mention a parameter by its label or name (the whole prompt when none does)."""
    names = {str(param.get("label", "")).lower(), str(param.get("paramName", "")).lower().replace("_", " ")}
    names.discard("")
    got = [s for s in sentences(prompt) if any(mentions(s, n) for n in names)]
    return " ".join(got) or prompt


def unstated(params: list[dict[str, Any]], given: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in params if p.get("paramName") not in given and p.get("options")]


def best_by(params: list[dict[str, Any]], given: dict[str, Any], score: Any) -> dict[str, Any]:
    """Unstated parameters take the option with the highest positive score (ties: list order)."""
    out = dict(given)
    for p in unstated(params, given):
        scored = [(score(p, o), i, o.get("value")) for i, o in enumerate(p["options"])]
        top = max(scored, key=lambda s: (s[0], -s[1]))
        if top[0] > 0:
            out[p["paramName"]] = top[2]
    return out


def count_mentions(texts: list[str], option: dict[str, Any]) -> int:
    labels = {str(option.get("label", "")), str(option.get("value", ""))}
    return sum(len(mentions(t, lab)) for t in texts for lab in labels if lab)


def first_mention(texts: list[str], option: dict[str, Any]) -> int:
    joined = "\n".join(texts)
    labels = {str(option.get("label", "")), str(option.get("value", ""))}
    hits = [pos for lab in labels if lab for pos in mentions(joined, lab)]
    return min(hits) if hits else 10**9


REPAIR = re.compile(
    r"\b(fix|restore|repair|wrong|put right|set right|back on|correct|needs work|repoint|rectify|reset|re-cut|"
    r"switch|misconfigured|set up wrong)\w*",
    re.I,
)
READ = re.compile(
    r"\b(first|top)( served)? row\b|\bexactly as (served|shown|returned|displayed)\b|\bas returned\b", re.I
)
COMPARE = re.compile(r"\b(one more|another|an extra|a second)\b.*\b(compar|beside|next to)", re.I)


def kind(prompt: str) -> str:
    if READ.search(prompt):
        return "read"
    return "repair" if REPAIR.search(prompt) else "add"


@dataclass(frozen=True)
class Round4(Player):
    """Round 4's executor (its own, frozen with the players): players.py's calls, plus the repair verbs and the
    second, comparison view a request may ask for (its hidden value guessed the same way, but not the first
    view's), the catalog name matched over every app of the named backend, and the rows read in the answer."""

    fill: str = ""  # "namer", "skim", "synonym", "copy", "majority", "sweep"
    taskset_prompts: ClassVar[list[str]] = []

    @classmethod
    def remember(cls, prompts: list[str]) -> None:
        """What taskset_majority knows: every prompt of the published taskset."""
        cls.taskset_prompts[:] = prompts

    def fill_in(
        self,
        ctx: Ctx,
        text: str,
        params: list[dict[str, Any]],
        current: dict[str, Any],
        exclude: dict[str, Any],
    ) -> dict[str, Any]:
        """The stated values of `text`, then this player's guess for the rest (never an excluded value)."""
        vals = stated(text, params, current)

        def guess(score: Any) -> dict[str, Any]:
            return best_by(
                params,
                vals,
                lambda p, o: -1e9 if exclude.get(p["paramName"]) == o.get("value") else score(p, o),
            )

        if self.fill == "namer":
            names = " ".join(board_names(ctx))
            return guess(lambda p, o: option_score(names, str(o.get("label", ""))))
        if self.fill == "skim":
            texts = skim_texts(ctx)
            return guess(lambda p, o: count_mentions(texts, o) + 0.5 - first_mention(texts, o) * 1e-9)
        if self.fill == "synonym":
            return guess(lambda p, o: option_score(clause_for(text, p), str(o.get("label", ""))))
        if self.fill == "majority":
            return guess(lambda p, o: count_mentions(list(self.taskset_prompts), o))
        if self.fill == "copy":
            seen: dict[str, Counter[str]] = {}
            for w in ctx.placed():
                for k, v in (w.get("data_args") or {}).items():
                    seen.setdefault(k, Counter())[str(v)] += 1
            return guess(lambda p, o: seen.get(p["paramName"], Counter())[str(o.get("value"))])
        if self.fill == "sweep":  # a repair keeps one value: the option the whole prompt names most
            return guess(lambda p, o: count_mentions([ctx.prompt], o))
        return vals

    def variants(self, ctx: Ctx, text: str, params: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The value sets to place or read: the sweeper's every option of the first unstated parameter."""
        vals = self.fill_in(ctx, text, params, {}, {})
        open_params = unstated(params, stated(text, params, {}))
        if self.fill != "sweep" or not open_params:
            return [vals]
        p = open_params[0]
        return [{**vals, p["paramName"]: o.get("value")} for o in p["options"]]

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
            targets = (named if how == "add" else named[:1]) if named else self.choose(ctx, cands)[:1]
            for w in targets:
                if ctx.left <= 3:
                    break
                sch = ctx.schema(w["origin"], w["widget_id"])
                for vals in self.variants(ctx, main, sch.get("params") or []):
                    if ctx.left <= 3:
                        break
                    if widget is None:
                        widget, first = w, vals
                    if how == "add":
                        ctx.call(
                            "create_widget", origin=w["origin"], widget_id=w["widget_id"], data_args=vals
                        )
                    else:
                        r = first_row(ctx, w["origin"], w["widget_id"], vals)
                        rows.append("; ".join(f"{k}: {v}" for k, v in r.items()))
            if how == "read" and ctx.left > 2:
                name = note_name(ctx.prompt)
                ctx.call(
                    "add_generative_widget",
                    widget_type="note",
                    data="\n".join(rows) or "-",
                    name=name,
                    dashboard_id=dash,
                )
        if compare and widget is not None and ctx.left > 2 and self.fill != "sweep":
            sch = ctx.schema(widget["origin"], widget["widget_id"])
            params = sch.get("params") or []
            hidden = {k: v for k, v in first.items() if k not in stated(main, params, {})}
            vals = self.fill_in(ctx, compare, params, {}, hidden)
            ctx.call("create_widget", origin=widget["origin"], widget_id=widget["widget_id"], data_args=vals)
        self._retitle(ctx, board)
        if ctx.left >= 1 and not ctx.env.state.done:
            ctx.call("final_answer", text="Done. " + " | ".join(rows))

    def catalog_pool(self, ctx: Ctx) -> list[dict[str, Any]]:
        """The named backend's widgets of the named app (every app of the backend when none is named)."""
        origins = sorted({str(w.get("origin", "")) for w in ctx.catalog}, key=len, reverse=True)
        origin = next((o for o in origins if o and o in ctx.prompt), "")
        ofo = [w for w in ctx.catalog if not origin or w.get("origin") == origin]
        apps = sorted({str(w.get("category", "")) for w in ofo}, key=len, reverse=True)
        after = [a for a in apps if a and f"{origin}'s {a}" in ctx.prompt]
        app = next(iter(after), "") or next((a for a in apps if a and a != origin and a in ctx.prompt), "")
        return [w for w in ofo if not app or w.get("category") == app] or ofo


def board_names(ctx: Ctx) -> list[str]:
    """The open board's name, its tabs' names and its notes' names (what a board-name guesser reads)."""
    board = ctx.board()
    out = [str(board.get("name") or board.get("dashboard_name") or "")]
    out += [str(t.get("name", "")) for t in board.get("tabs") or []]
    out += [str(w.get("name", "")) for w in board.get("widgets", []) if w.get("generated")]
    return [t for t in out if t]


def skim_texts(ctx: Ctx) -> list[str]:
    """Every note on the board and every document the prompt names, read once (cached on the context).

    Skills are found by name in the snapshot; a resource by the title the prompt gives, at the URI its title
    makes under each openbb:// folder the texts already read mention (the surface lists no resources)."""
    if SKIMMED.get("ctx") is ctx:
        return list(SKIMMED["texts"])
    texts: list[str] = []
    for w in ctx.board().get("widgets", []):
        if w.get("generated"):
            texts.append(f"{w.get('name', '')}\n{w.get('generated_data') or ''}")
    snap = ctx.snapshot.get("data") or {}
    for sk in snap.get("skills") or []:
        if ctx.left > 3 and mentions(ctx.prompt, str(sk.get("name", ""))):
            got = ctx.call("get_skill_content", slug=sk["slug"])
            texts.append(str((got.get("data") or {}).get("content") or ""))
    for name in ("workspace_tool_usage", "workspace_session_context"):
        if ctx.left > 3 and mentions(ctx.prompt, name.replace("_", " ")):
            got = ctx.call("get_workspace_prompt", name=name)
            texts.append(str((got.get("data") or {}).get("text") or ""))
    titled = re.findall(r"((?:[A-Z][\w&'-]*\s)+)workspace resource", ctx.prompt)
    folders = sorted(
        {m for t in texts for m in re.findall(r"openbb://workspace/([a-z-]+)/", t)} | {"handbooks"}
    )
    for title in titled:
        slug = re.sub(r"[^a-z0-9]+", "-", title.strip().lower()).strip("-")
        for folder in folders:
            if ctx.left <= 3:
                break
            got = ctx.call("read_workspace_resource", uri=f"openbb://workspace/{folder}/{slug}")
            if got.get("ok"):
                data = got.get("data") or {}
                texts.append(str(data.get("text") or data.get("content") or data))
                break
    SKIMMED.update(ctx=ctx, texts=texts)
    return texts


SKIMMED: dict[str, Any] = {}  # the current episode's skimmed texts (episodes are played one at a time)


# --- target choosers (players.py's Chooser: (ctx, candidates) -> ordered candidates) ---


def by_second(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(c[1:2]) + list(c[:1]) + list(c[2:])


def _catalog_entry(ctx: Ctx, w: dict[str, Any]) -> dict[str, Any]:
    return next((x for x in ctx.catalog if x.get("widget_id") == w.get("widget_id")), w)


def by_params(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The candidate whose parameters can take most of the option values the prompt names (reads schemas while
    the budget allows; a candidate not read scores nothing)."""

    def score(w: dict[str, Any]) -> float:
        if ctx.left <= 4 and w["widget_id"] not in ctx.schemas:
            return 0.0
        params = ctx.schema(w["origin"], w["widget_id"]).get("params") or []
        named = stated(ctx.prompt, params, {})
        labels = sum(1 for p in params if mentions(ctx.prompt, str(p.get("label", ""))))
        return len(named) + 0.5 * labels - 0.01 * len(params)

    scored = [(score(w), i, w) for i, w in enumerate(c)]
    return [w for _, _, w in sorted(scored, key=lambda s: (-s[0], s[1]))]


def by_board_name(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = " ".join(board_names(ctx))

    def score(w: dict[str, Any]) -> int:
        cat = _catalog_entry(ctx, w)
        return len(stems(f"{cat.get('name', '')} {cat.get('description', '')}") & stems(text))

    return sorted(c, key=lambda w: -score(w))


def by_notes(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    texts = skim_texts(ctx)

    def score(w: dict[str, Any]) -> int:
        return sum(len(mentions(t, str(_catalog_entry(ctx, w).get("name", "")))) for t in texts)

    return sorted(c, key=lambda w: -score(w))


@dataclass(frozen=True)
class Skimmer(Round4):
    """source_skimmer also titles a tab from the documents it skimmed."""

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        tabs = board.get("tabs") or []
        ask = next(
            (
                s
                for s in sentences(ctx.prompt)
                if re.search(r"\btab\b", s, re.I) and re.search(r"\b(rename|retitle|title|call)\w*", s, re.I)
            ),
            None,
        )
        if not ask or ctx.left <= 1 or not tabs:
            return
        tab = next((t for t in tabs if mentions(ask, t["name"] + " tab")), tabs[0])
        title = None
        for text in skim_texts(ctx):
            for s in sentences(" ".join(text.split())):
                if not re.search(r"\btab\b", s, re.I):
                    continue
                m = re.search(r"[\"“'‘*]{1,2}([^\"”'’*]{2,60})[\"”'’*]{1,2}", s) or re.search(
                    r"\b(?:titled|called|named|title)\s+((?:[A-Z0-9&][\w&'’-]*\s?)+)", s
                )
                if m:
                    title = m.group(1).strip().rstrip(".,")
                    break
            if title:
                break
        if title is None:
            return super()._retitle(ctx, board)
        ctx.call(
            "manage_navigation_bar",
            operation="rename_tabs",
            rename_map={tab["id"]: title},
            dashboard_id=board.get("dashboard_id"),
        )


PLAYERS: tuple[Player, ...] = (
    Round4("second_placed", by_second),
    Round4("param_matcher", by_params),
    Round4("board_namer", by_board_name, fill="namer"),
    Skimmer("source_skimmer", by_notes, fill="skim"),
    Round4("synonym_guesser", by_order, fill="synonym"),
    Round4("board_copier", by_order, fill="copy"),
    Round4("taskset_majority", by_order, fill="majority"),
    Round4("option_sweeper", by_order, fill="sweep"),
)

__all__ = ["LEXICON", "PLAYERS", "Round4", "Skimmer"]
