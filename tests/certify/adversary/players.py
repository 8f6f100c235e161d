"""Frozen outside-auditor players (issue 20): cheap scripted agents written from the public surface only.

They were written before they were run, from README, the tool schemas and the shipped prompts as an agent sees
them — not from the gates, the rule author or the battery — and are FROZEN: a change here is a new audit, not a
fix. Each plays one episode through the in-process OpenEnv environment (the same EpisodeHost `serve` uses), sees
only the prompt, the rules and the envelopes, and understands nothing: it guesses the target from where widgets
sit or from names, and the values from the words of the prompt. The regression test asserts every player passes
at most 10% of each level's tasks (levels 1-4; level 0 states everything).

The players share one cheap executor (snapshot, one schema read, one write, final answer) and differ only in how
they pick the widget and the values:

- first_placed: the first widget of the board (or the named app's first catalog entry)
- last_placed: the last one
- top_left: the widget nearest the grid's origin by coordinates
- trigram_matcher: the app's widget whose name + description shares most character trigrams with the prompt
- longest_name: the app's most specific (longest) catalog name
- stuffer: every value the prompt names onto every candidate; a note holding every candidate's first row
- label_guesser: unstated parameters take the option whose label shares most characters with a prompt word
- title_copier: tabs and notes titled with the whole text of the document or sentence the prompt points to
- lower_level_copier: the values and names the same story's lower-level prompts state (a player that saw them)
- option_0, option_1, option_2, option_last, option_first_changed: every unstated parameter takes a fixed option
  of its list (the first, second, third, last, or the first that differs from the parameter's default) — a
  player that knows a Derive level hides one categorical value and guesses it the same way every time (added
  after the first audit, frozen before the rule author changed: a Derive that hides one of k options is won by
  such a guess about 1/k of the time)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openenv.core.env_server.mcp_types import CallToolAction

PROTECT = re.compile(
    r"\b(stays?|untouched|as it is|alone|already right|must not change|must stay|is correct|is right|"
    r"belongs to|serves another|own purpose)\b",
    re.I,
)
NOTE_WORDS = ("note", "jotting", "summary", "memo", "log", "record", "capture", "write-up", "entry")
STOP = set(
    [
        "the",
        "a",
        "an",
        "of",
        "and",
        "or",
        "to",
        "for",
        "on",
        "in",
        "with",
        "by",
        "from",
        "at",
        "as",
        "is",
        "it",
        "its",
        "this",
        "that",
        "their",
        "our",
        "my",
        "your",
        "be",
        "are",
        "was",
        "each",
        "every",
        "what",
        "which",
        "who",
        "when",
        "where",
        "how",
        "set",
        "fix",
        "add",
        "put",
        "show",
    ]
)


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


def mentions(text: str, phrase: str) -> list[int]:
    if not phrase:
        return []
    return [m.start() for m in re.finditer(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", text, re.I)]


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 1]


def trigrams(text: str) -> set[str]:
    t = re.sub(r"[^a-z0-9]+", " ", text.lower())
    return {t[i : i + 3] for i in range(len(t) - 2) if " " not in t[i : i + 3]}


@dataclass
class Ctx:
    """One episode as the player sees it."""

    env: Any
    prompt: str
    lower_prompts: list[str]
    turns: int = 0
    budget: int = 8
    snapshot: dict[str, Any] = field(default_factory=dict)
    catalog: list[dict[str, Any]] = field(default_factory=list)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        self.turns += 1
        obs = self.env.step(CallToolAction(tool_name=tool, arguments=args))
        return obs.result or {}

    @property
    def left(self) -> int:
        return self.budget - self.turns

    def schema(self, origin: str, widget_id: str) -> dict[str, Any]:
        if widget_id not in self.schemas:
            got = self.call("get_widget_schema", origin=origin, widget_id=widget_id)
            self.schemas[widget_id] = ((got.get("data") or {}).get("schema")) or {}
        return self.schemas[widget_id]

    # --- what the snapshot says ---
    def board(self) -> dict[str, Any]:
        return (self.snapshot.get("data") or {}).get("dashboard_composition") or {}

    def placed(self) -> list[dict[str, Any]]:
        return [w for w in self.board().get("widgets", []) if not w.get("generated")]

    def apps_named(self) -> list[str]:
        cats = {w.get("category", "") for w in self.catalog}
        return sorted((c for c in cats if c and mentions(self.prompt, c)), key=len, reverse=True)

    def origin_named(self) -> str:
        backends = (self.snapshot.get("data") or {}).get("backends") or []
        named = [b["name"] for b in backends if mentions(self.prompt, b["name"])]
        return named[0] if named else (backends[0]["name"] if backends else "")

    def app_widgets(self) -> list[dict[str, Any]]:
        apps = self.apps_named()
        origin = self.origin_named()
        if not apps:
            return [w for w in self.catalog if w.get("origin") == origin]
        return [w for w in self.catalog if w.get("category") == apps[0] and w.get("origin") == origin]


def kind_of(prompt: str) -> str:
    low = prompt.lower()
    if re.search(r"\b(first|top) row\b|\bexactly as (served|shown|returned)\b|\bas returned\b", low):
        return "read"
    if re.search(r"\b(fix|restore|repair|wrong|put right|set right|back on|correct it|needs work)\b", low):
        return "repair"
    return "add"


def protected_text(prompt: str) -> str:
    return " ".join(s for s in sentences(prompt) if PROTECT.search(s))


def is_protected(prompt: str, widget: dict[str, Any]) -> bool:
    """A placed widget whose current values the prompt's stay-as-it-is sentence names."""
    text = protected_text(prompt)
    vals = [str(v) for v in (widget.get("data_args") or {}).values()]
    if not text or not vals:
        return False
    # the sentence names the instance by its values, often shortened ("fund Driftwood"): first word suffices
    return all(mentions(text, v) or mentions(text, v.split()[0]) for v in vals)


def stated(prompt: str, params: list[dict[str, Any]], current: dict[str, Any]) -> dict[str, Any]:
    """Per parameter, the option the prompt names last outside stay-as-it-is sentences, the current value
    excluded when another is named."""
    keep = " ".join(s for s in sentences(prompt) if not PROTECT.search(s))
    out: dict[str, Any] = {}
    for p in params:
        hits: list[tuple[int, Any]] = []
        for o in p.get("options") or []:
            for lab in {str(o.get("label", "")), str(o.get("value", ""))}:
                for pos in mentions(keep, lab):
                    hits.append((pos, o.get("value")))
        if not hits:
            continue
        cur = current.get(p["paramName"])
        others = [h for h in hits if h[1] != cur] or hits
        out[p["paramName"]] = max(others, key=lambda h: h[0])[1]
    return out


def lexical_guess(prompt: str, params: list[dict[str, Any]], given: dict[str, Any]) -> dict[str, Any]:
    """Unstated parameters: the option whose label shares most character trigrams with a single prompt word."""
    toks = [w for w in words(prompt) if len(w) >= 3]
    out = dict(given)
    for p in params:
        if p["paramName"] in out or not p.get("options"):
            continue
        best, score = None, 0.0
        for o in p["options"]:
            lab = trigrams(str(o.get("label", "")))
            if not lab:
                continue
            s = max((len(lab & trigrams(t)) / len(lab) for t in toks), default=0.0)
            if s > score:
                best, score = o.get("value"), s
        if best is not None:
            out[p["paramName"]] = best
    return out


def fixed_guess(params: list[dict[str, Any]], given: dict[str, Any], pick: str) -> dict[str, Any]:
    """Unstated parameters: a fixed place in the option list, whatever the prompt says."""
    out = dict(given)
    for p in params:
        opts = [o.get("value") for o in p.get("options") or []]
        if p["paramName"] in out or not opts:
            continue
        if pick == "last":
            out[p["paramName"]] = opts[-1]
        elif pick == "first_changed":
            changed = [v for v in opts if str(v) != str(p.get("value"))]
            out[p["paramName"]] = (changed or opts)[0]
        else:
            out[p["paramName"]] = opts[min(int(pick), len(opts) - 1)]
    return out


def note_name(prompt: str) -> str:
    for pat in (
        r"(?:titled|named|called)\s+((?:[A-Z0-9&][\w&'’$%()-]*\s?)+)",
        r",\s+((?:[A-Z][\w&'’-]*\s)+(?:Note|Log|Memo|Summary|Jotting))\b",
        r"((?:[A-Z][\w&'’-]*\s)+(?:Note|Log|Memo|Summary|Jotting))\b",
    ):
        m = re.search(pat, prompt)
        if m:
            return m.group(1).strip().rstrip(",.")
    return "Note"


def first_row(ctx: Ctx, origin: str, wid: str, args: dict[str, Any]) -> dict[str, Any]:
    got = ctx.call("get_widget_data", origin=origin, widget_id=wid, data_args=args)
    data = got.get("data") or {}
    rows = data.get("rows") or data.get("data") or []
    if isinstance(rows, dict):
        rows = rows.get("rows") or []
    return rows[0] if rows and isinstance(rows[0], dict) else {}


# --- target choosers: (ctx, candidates) -> ordered candidates (the player takes the first) ---
Chooser = Callable[[Ctx, list[dict[str, Any]]], list[dict[str, Any]]]


def by_order(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(c)


def by_last(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(reversed(c))


def by_position(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def key(w: dict[str, Any]) -> tuple[int, int]:
        lay = w.get("layout") or {}
        return (int(lay.get("y", 0)), int(lay.get("x", 0)))

    return sorted(c, key=key) if all("layout" in w for w in c) else list(c)


def by_trigrams(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    p = trigrams(ctx.prompt)

    def text(w: dict[str, Any]) -> str:
        cat = next((x for x in ctx.catalog if x.get("widget_id") == w.get("widget_id")), w)
        return f"{cat.get('name', '')} {cat.get('description', '')}"

    return sorted(c, key=lambda w: -len(trigrams(text(w)) & p) / (1 + len(trigrams(text(w)))) ** 0.5)


def by_longest(ctx: Ctx, c: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(c, key=lambda w: -len(str(w.get("name", ""))))


@dataclass(frozen=True)
class Player:
    name: str
    choose: Chooser = by_order
    guess: bool = False  # unstated params by label similarity
    stuff: bool = False  # every candidate, every value
    titles_from_source: bool = False
    lower_levels: bool = False
    fixed: str | None = None  # unstated params take this place of their options ("0", "1", "2", "last", ...)

    def play(self, env: Any, obs: Any, lower_prompts: list[str]) -> None:
        budget = 8
        for rule in obs.rules or []:
            m = re.search(r"at most (\d+) turns", rule)
            if m:
                budget = int(m.group(1))
        ctx = Ctx(env=env, prompt=obs.prompt or "", lower_prompts=lower_prompts, budget=budget)
        try:
            self._play(ctx)
        finally:
            if not env.state.done:
                env.step(CallToolAction(tool_name="final_answer", arguments={"text": "Done."}))

    # the values a player applies to a widget with these params
    def values(self, ctx: Ctx, params: list[dict[str, Any]], current: dict[str, Any]) -> dict[str, Any]:
        vals = stated(ctx.prompt, params, current)
        if self.lower_levels:
            for lower in ctx.lower_prompts:
                for k, v in stated(lower, params, current).items():
                    vals.setdefault(k, v)
        if self.guess:
            vals = lexical_guess(ctx.prompt, params, vals)
        if self.fixed is not None:
            vals = fixed_guess(params, vals, self.fixed)
        return vals

    def _named(self, ctx: Ctx, cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
        texts = [ctx.prompt] + (ctx.lower_prompts if self.lower_levels else [])
        return [w for w in cands if any(mentions(t, str(w.get("name", ""))) for t in texts)]

    def _play(self, ctx: Ctx) -> None:
        ctx.snapshot = ctx.call("get_workspace_snapshot")
        ctx.catalog = (ctx.call("list_available_widgets").get("data") or {}).get("widgets") or []
        kind = kind_of(ctx.prompt)
        board = ctx.board()
        dash = board.get("dashboard_id")
        if kind == "repair":
            cands = [w for w in ctx.placed() if not is_protected(ctx.prompt, w)] or ctx.placed()
            named = self._named(ctx, cands)
            pool = named or cands
            targets = pool if self.stuff else self.choose(ctx, pool)[:1]
            for w in targets:
                if ctx.left <= 2:
                    break
                sch = ctx.schema(w["origin"], w["widget_id"])
                vals = self.values(ctx, sch.get("params") or [], w.get("data_args") or {})
                if vals:
                    ctx.call("update_widget", widget_uuid=w["widget_uuid"], data_args=vals)
        else:
            cands = ctx.app_widgets()
            named = self._named(ctx, cands)
            if named and not self.stuff:
                # the name(s) the prompt gives, in the prompt's order
                pool = sorted(named, key=lambda w: min(mentions(ctx.prompt, w["name"]) or [10**6]))
                targets = pool if kind == "add" else pool[:1]
            else:
                pool = named or cands
                targets = pool if self.stuff else self.choose(ctx, pool)[:1]
            rows: list[dict[str, Any]] = []
            for w in targets:
                if ctx.left <= 3:
                    break
                sch = ctx.schema(w["origin"], w["widget_id"])
                vals = self.values(ctx, sch.get("params") or [], {})
                if kind == "add":
                    ctx.call("create_widget", origin=w["origin"], widget_id=w["widget_id"], data_args=vals)
                else:
                    rows.append(first_row(ctx, w["origin"], w["widget_id"], vals))
            if kind == "read" and ctx.left > 2:
                text = "\n".join("; ".join(f"{k}: {v}" for k, v in r.items()) for r in rows if r)
                name = self._title(ctx, note_name(ctx.prompt))
                ctx.call(
                    "add_generative_widget",
                    widget_type="note",
                    data=text or "-",
                    name=name,
                    dashboard_id=dash,
                )
        self._retitle(ctx, board)

    def _title(self, ctx: Ctx, plain: str) -> str:
        if not self.titles_from_source:
            return plain
        # the whole sentence that names it
        for s in sentences(ctx.prompt):
            if plain in s:
                return s
        return plain

    def _retitle(self, ctx: Ctx, board: dict[str, Any]) -> None:
        """A prompt that asks for a tab title: the tab it names gets one."""
        tabs = board.get("tabs") or []
        ask = next(
            (
                s
                for s in sentences(ctx.prompt)
                if re.search(r"\btab\b", s, re.I) and re.search(r"\b(rename|retitle|title|call)\w*", s, re.I)
            ),
            None,
        )
        if not ask or ctx.left <= 1:
            return
        tab = next((t for t in tabs if mentions(ask, t["name"] + " tab")), tabs[0] if tabs else None)
        if tab is None:
            return
        title: str | None = None
        if self.titles_from_source and ctx.left > 2:
            title = self._source_text(ctx, ask)
        if title is None and self.lower_levels:
            for lower in ctx.lower_prompts:
                m = re.search(r"\b(?:titled|to|as)\s+['\"“]?((?:[A-Z0-9&][\w&'’-]*\s?)+)", lower)
                if m and re.search(r"\btab\b", lower):
                    title = m.group(1).strip()
                    break
        if title is None:
            m = re.search(r"\b(?:titled|to)\s+['\"“]((?:[^'\"”])+)", ask)
            title = m.group(1) if m else ask
        ctx.call(
            "manage_navigation_bar",
            operation="rename_tabs",
            rename_map={tab["id"]: title},
            dashboard_id=board.get("dashboard_id"),
        )

    def _source_text(self, ctx: Ctx, ask: str) -> str | None:
        skills = (ctx.snapshot.get("data") or {}).get("skills") or []
        for sk in skills:
            if mentions(ask, sk["name"]):
                got = ctx.call("get_skill_content", slug=sk["slug"])
                data = got.get("data") or {}
                text = data.get("content") or data.get("markdown") or str(data)
                return " ".join(str(text).split())
        for name in ("workspace_tool_usage", "workspace_session_context"):
            if mentions(ask, name.replace("_", " ")):
                got = ctx.call("get_workspace_prompt", name=name)
                return " ".join(str(got.get("data") or "").split())
        return None


PLAYERS: tuple[Player, ...] = (
    Player("first_placed", by_order),
    Player("last_placed", by_last),
    Player("top_left", by_position),
    Player("trigram_matcher", by_trigrams),
    Player("longest_name", by_longest),
    Player("stuffer", by_order, stuff=True),
    Player("label_guesser", by_trigrams, guess=True),
    Player("title_copier", by_order, titles_from_source=True, guess=True),
    Player("lower_level_copier", by_order, lower_levels=True),
    Player("option_0", by_order, fixed="0"),
    Player("option_1", by_order, fixed="1"),
    Player("option_2", by_order, fixed="2"),
    Player("option_last", by_order, fixed="last"),
    Player("option_first_changed", by_order, fixed="first_changed"),
)
