"""The battery: generic agents that do not understand the request. Each must fail every task from level 1 up;
one that passes shows the task can be solved without the capability its level claims to measure."""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from typing import Any

from simulator import option_values, param_options

from ..agents.knowledge import quoted
from ..agents.ladder import TAB_TITLE
from ..agents.reading import blank_names, option_mentions, words
from ..agents.request import _STALE as STALE
from ..agents.request import _TARGET as TARGET
from ..agents.request import note_entries, policies, read_request, shown_by
from ..lexicon import Lexicon, guess, load_lexicon
from .generic import Call, Generic, Plan
from .reading import Intent, option_params, ranked, says, stated_values

SHORTCUTS: dict[str, type[Generic]] = {}
# Agents measured over a taskset rather than gated per task: a fixed rule whose pass share is a property of how
# a taskset is seeded (with two placed widgets, "the first" is right on about half the tasks however they are
# drawn), so a per-task gate could only push the target off that one position — a signal of its own.
PROBES: dict[str, type[Generic]] = {}


def shortcut(
    name: str, registry: dict[str, type[Generic]] = SHORTCUTS
) -> Callable[[type[Generic]], type[Generic]]:
    def register(cls: type[Generic]) -> type[Generic]:
        cls.name = name
        registry[name] = cls
        return cls

    return register


@shortcut("enumerator")
class Enumerator(Generic):
    """Tries every option of each parameter the prompt does not state, as far as the turn budget lets it: one
    widget per option when adding, a repair plus one widget per other option, every option's rows in its note."""

    def values(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        return self.variations(schema, self.stated(schema))


@shortcut("signature_matcher")
class SignatureMatcher(Generic):
    """Ignores names and descriptions: reads schemas and picks the widgets whose parameters accept the most of
    the values the prompt states (all of them when several tie). The widgets already placed on the dashboard
    are tried first; when one of them fits, the catalog is not searched."""

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        placed = self.placed_entries()
        best = yield from self.best_fits(placed)
        if not best:
            keys = {id(w) for w in placed}
            best = yield from self.best_fits([w for w in self.scope() if id(w) not in keys])
        plans = yield from self.plans_for(best[:4])
        return plans

    def best_fits(self, pool: list[dict[str, Any]]) -> Generator[Call, dict[str, Any], list[dict[str, Any]]]:
        fits: list[tuple[int, dict[str, Any]]] = []
        for entry in pool:
            schema = yield from self.schema(entry)
            if schema is None:
                break
            fits.append((len(self.stated(schema)), entry))
        top = max((n for n, _ in fits), default=0)
        return [e for n, e in fits if n == top and top > 0]


@shortcut("bag_of_words")
class BagOfWords(Generic):
    """Takes the widgets the prompt names and, for the one it may describe, the catalog entry whose name and
    description share the most words with the prompt (BM25), with the values the prompt states."""

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        plans = yield from self.plans_for(self.named() + self.ranked(1))
        return plans


@shortcut("note_stuffer")
class NoteStuffer(Generic):
    """Does the work a keyword agent would, reads every option's rows and every source the prompt points at
    (skills, workspace resources), and writes all of it — rows, option values, source text — into its note."""

    def values(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        return self.variations(schema, self.stated(schema))

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        writes = Intent(add=how.add, repair=how.repair, read=False, note=False, answer=False)
        if how.add or how.repair or not how.read:
            yield from super().act([Plan(p.entry, p.choices[:1]) for p in plans], writes)
        if how.read or how.note or how.answer:
            for plan in plans:
                origin, wid = plan.key
                for args in plan.choices:
                    data = yield from self.call(
                        "get_widget_data", {"origin": origin, "widget_id": wid, "data_args": args}
                    )
                    if data is not None:
                        self.rows.append(list(data.get("data") or []))

    def read_sources(self) -> Generator[Call, dict[str, Any], None]:
        yield from super().read_sources()
        skills = self.snapshot.get("skills") or []
        if not self.texts and skills:
            docs = tuple(f"{s.get('name')} {s.get('description')}" for s in skills)
            order = self.recall("skills ranked", docs, compute=lambda: ranked(self.prompt, list(docs)))
            for i in order[:2]:
                data = yield from self.call("get_skill_content", {"slug": skills[i].get("slug")})
                if data is not None:
                    self.texts.append(str(data.get("content") or ""))
        if "resource" in self.prompt.lower():
            envelope_uris = yield from self.resource_uris()
            # the resource the request names is ranked by the sentences that speak of a resource (its title is
            # there), not by the whole request, whose parameter and widget words favour another document
            pointing = " ".join(
                p for p in re.split(r"(?<=[.!?;:])\s+", self.prompt) if re.search(r"\bresources?\b", p, re.I)
            )
            for i in ranked(
                pointing or self.prompt,
                [u.rsplit("/", 2)[-2] + " " + u.rsplit("/", 1)[-1].replace("-", " ") for u in envelope_uris],
            )[:1]:
                data = yield from self.call("read_workspace_resource", {"uri": envelope_uris[i]})
                if data is not None:
                    self.texts.append(str(data.get("text") or ""))

    def resource_uris(self) -> Generator[Call, dict[str, Any], list[str]]:
        """The resource URIs, learnt the way an agent can: the error for an unknown URI lists the valid ones."""
        if self.refused or "read_workspace_resource" not in self.tools:
            return []
        envelope = yield "read_workspace_resource", {"uri": "openbb://workspace/"}
        message = str((envelope.get("error") or {}).get("message") or "")
        _, _, listed = message.partition("Valid URIs:")
        return [
            u.strip().rstrip(".")
            for u in listed.split(",")
            if u.strip().startswith("openbb://") and "/skills/" not in u
        ]

    def note_text(self, plans: list[Plan]) -> str:
        parts = [super().note_text(plans)]
        for rows in self.rows:
            parts += [
                " ".join(str(v) for v in row.values()) if isinstance(row, dict) else str(row) for row in rows
            ]
        for plan in plans:
            schema = self.schemas.get(plan.key) or {}
            parts += [
                f"{p['paramName']}: " + ", ".join(str(v) for v in option_values(p))
                for p in option_params(schema)
            ]
        parts += self.texts
        return "\n".join(p for p in parts if p)


@shortcut("over_builder")
class OverBuilder(Generic):
    """Does the work a keyword agent would, then adds the next best matches and their app siblings as well."""

    def extras(self, plans: list[Plan]) -> Generator[Call, dict[str, Any], list[Plan]]:
        chosen = [p.entry for p in plans]
        more = self.ranked(3, exclude=chosen)
        cats = {p.entry.get("category") for p in plans}
        keys = {(w.get("origin"), w.get("widget_id")) for w in chosen + more}
        siblings = [
            w
            for w in self.catalog
            if w.get("category") in cats and (w.get("origin"), w.get("widget_id")) not in keys
        ]
        return [
            Plan(
                w,
                [
                    self.stated(self.schemas[k])
                    if (k := (str(w.get("origin")), str(w.get("widget_id")))) in self.schemas
                    else {}
                ],
            )
            for w in (more + siblings)[:4]
        ]
        yield  # pragma: no cover - makes this a generator


@shortcut("neighbour_copier")
class NeighbourCopier(Generic):
    """Copies the configuration of the same widget placed elsewhere in the workspace (other dashboards whose
    names look like the prompt first, then another instance on the open one) for what the prompt leaves
    unstated."""

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        plans = yield from super().choose()
        current = (self.snapshot.get("workspace_state") or {}).get("current_dashboard_uuid")
        others = [d for d in self.snapshot.get("dashboards") or [] if d.get("dashboard_id") != current]
        neighbours: list[dict[str, Any]] = []
        for i in ranked(self.prompt, [str(d.get("name")) for d in others])[:3]:
            data = yield from self.call(
                "manage_dashboard", {"operation": "read", "dashboard_id": others[i].get("dashboard_id")}
            )
            comp = (data or {}).get("dashboard_composition") or {}
            neighbours += [w for w in comp.get("widgets") or [] if not w.get("generated")]
        neighbours += self.placed()
        for plan in plans:
            origin, wid = plan.key
            schema = self.schemas.get(plan.key) or {}
            stated = self.stated(schema)
            for w in [w for w in neighbours if w.get("origin") == origin and w.get("widget_id") == wid]:
                copied = {k: v for k, v in (w.get("data_args") or {}).items() if k not in stated}
                if copied:
                    plan.choices = [{**copied, **stated}]
                    break
        return plans


@shortcut("title_stuffer")
class TitleStuffer(NoteStuffer):
    """Reads what the note stuffer reads, then retitles the open board's tabs with all of it — the sources'
    text and the prompt — and names its note with every title the prompt says: a grader that accepts any title
    containing the right phrase passes it."""

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        if how.add or how.repair or how.read:
            yield from super().act(plans, how)

    def read_sources(self) -> Generator[Call, dict[str, Any], None]:
        yield from super().read_sources()
        comp = self.snapshot.get("dashboard_composition") or {}
        tabs = [str(t.get("id")) for t in comp.get("tabs") or [] if isinstance(t, dict) and t.get("id")]
        if tabs and "manage_navigation_bar" in self.tools:
            everything = " / ".join([*self.texts, self.prompt])
            yield from self.call(
                "manage_navigation_bar",
                {"operation": "rename_tabs", "rename_map": dict.fromkeys(tabs, everything)},
            )

    def note_title(self) -> str:
        return self.prompt


@shortcut("description_matcher")
class DescriptionMatcher(Generic):
    """Drops every parenthesised aside (the exclusion "(not the view of …)" among them) and takes, besides the
    widgets the prompt names, the app's catalog entry whose name and description share the most words with
    what is left, with the values the prompt states. A find hint that paraphrases the catalog passes it."""

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        named = self.named()
        said = {(w.get("origin"), w.get("widget_id")) for w in named}
        pool = [w for w in self.scope() if (w.get("origin"), w.get("widget_id")) not in said]
        pick = description_pick(self.prompt, pool)
        plans = yield from self.plans_for(named + ([pool[pick]] if pick is not None else []))
        return plans


def description_pick(prompt: str, entries: list[dict[str, Any]]) -> int | None:
    """The entry (`{name, description}`) the description matcher takes for a prompt: the most words shared
    with its name and description once the prompt's asides are dropped (the first of a tie), None when none
    shares a word. One home: `taskforge check` asks it of the text a Find prompt will carry."""
    plain = words(strip_asides(prompt))
    scores = [len(plain & words(f"{w.get('name')} {w.get('description')}")) for w in entries]
    return scores.index(max(scores)) if scores and max(scores) > 0 else None


def bag_of_words_pick(prompt: str, entries: list[dict[str, Any]]) -> int | None:
    """The entry the bag-of-words shortcut takes for the widget a prompt describes: the best BM25 score of the
    whole prompt over names and descriptions (the first of a tie), None when none shares a word."""
    order = ranked(prompt, [f"{w.get('name')} {w.get('description')}" for w in entries])
    return order[0] if order else None


def lexical_picks(prompt: str, entries: list[dict[str, Any]]) -> dict[str, int]:
    """Which catalog entry each shortcut that reads words (not schemas) would take for the described widget."""
    picks = {
        "bag_of_words": bag_of_words_pick(prompt, entries),
        "description_matcher": description_pick(prompt, entries),
    }
    return {name: i for name, i in picks.items() if i is not None}


def strip_asides(text: str) -> str:
    """The text less its parenthesised asides (nested ones too)."""
    while (cut := re.sub(r"\([^()]*\)", " ", text)) != text:
        text = cut
    return text


@shortcut("phrase_guesser")
class PhraseGuesser(Generic):
    """Knows the jargon, not the policy: for each parameter the prompt leaves unstated it takes the option that
    the names standing in for values give away — the policy phrases the prompt says ("the pulled-orders rule"),
    the open dashboard's name and the names of the notes on it or asked for — through a finance-lexicon
    synonym ("sterling" for GBP, "pulled" for Cancelled) or a shared word or stem, and keeps the default where
    nothing does. A Derive phrase or a name that carries its value passes it without the policy being read."""

    lexicon: Lexicon | None = None

    def names_said(self) -> str:
        comp = self.snapshot.get("dashboard_composition") or {}
        notes = [str(w.get("name") or "") for w in comp.get("widgets") or [] if w.get("generated")]
        asked = self.asked_note()
        return " / ".join(
            [
                *(p.phrase for p in policies(self.prompt)),
                str(comp.get("name") or ""),
                *notes,
                *([asked] if asked else []),
            ]
        )

    def values(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        # widget names blanked: "Working Orders" states no status
        text = self.recall(
            "unnamed",
            compute=lambda: blank_names(self.prompt, [str(w.get("name") or "") for w in self.catalog]),
        )
        stated = stated_values(text, schema)
        said = self.names_said()
        lexicon = self.lexicon or load_lexicon()
        for param in option_params(schema):
            name = str(param["paramName"])
            if name in stated:
                continue
            shown = param_options(param)
            picked = guess(said, [o.value for o in shown], lexicon, [o.label for o in shown])
            if picked is not None:
                stated[name] = picked
        return [stated]


@shortcut("source_skimmer")
class SourceSkimmer(NoteStuffer):
    """Reads every source the prompt points at — the skills and workspace prompts it names, the resource its
    words rank first, the notes on the open board — but never the passage it points to (the step, the row, the
    point): each parameter the prompt leaves unsaid takes the option those texts mention most (the first
    mentioned of a tie; the two best when the prompt says two policies, one view each), and a tab the prompt
    asks to title gets the first quoted name of a sentence of theirs that speaks of a tab. A source that names
    no rival of its value in another passage (a handbook with one quoted tab title, a prompt whose two
    conventions carry the same severity) passes it without the pointer being followed."""

    tail = False  # the tail skimmer's ranking: the last mentioned option, the last quoted tab title

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        yield from self.skim()
        plans = yield from Generic.choose(self)
        return plans

    def skim(self) -> Generator[Call, dict[str, Any], None]:
        comp = self.snapshot.get("dashboard_composition") or {}
        self.texts += [
            str(w.get("generated_data") or "") for w in comp.get("widgets") or [] if w.get("generated")
        ]
        yield from NoteStuffer.read_sources(self)
        for name in ("workspace_tool_usage", "workspace_session_context"):
            if says(self.prompt, name.removeprefix("workspace_").replace("_", " ")):
                data = yield from self.call("get_workspace_prompt", {"name": name})
                if data is not None:
                    self.texts.append(str(data.get("text") or ""))

    def read_sources(self) -> Generator[Call, dict[str, Any], None]:
        return  # read before choosing
        yield  # pragma: no cover - makes this a generator

    def live_prompt(self) -> str:
        """The prompt less what it says of other instances: the sentences fencing a twin off and the values
        said as what a widget currently shows ("left at …", up to the next "so that it reads …")."""

        def compute() -> str:
            request = read_request(self.prompt)
            cut = [*request.twins, *request.contrasts]
            for a, b in request.spans:
                sentence = self.prompt[a:b]
                for m in STALE.finditer(sentence):
                    nxt = TARGET.search(sentence, m.end())
                    cut.append((a + m.start(), a + (nxt.start() if nxt else len(sentence))))
            chars = list(self.prompt)
            for a, b in cut:
                chars[a:b] = " " * (b - a)
            return "".join(chars)

        return str(self.recall("live prompt", compute=compute))

    def values(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        stated = stated_values(self.live_prompt(), schema)
        text = "\n".join(self.texts)
        views = 2 if len(policies(self.prompt)) >= 2 else 1
        picks = {
            str(param["paramName"]): order[:views]
            for param in option_params(schema)
            if str(param["paramName"]) not in stated
            and (order := skimmed_options(text, param, tail=self.tail and views == 1))
        }
        out = [{**stated, **{k: v[0] for k, v in picks.items()}}]
        if views == 2 and any(len(v) > 1 for v in picks.values()):
            out.append({**stated, **{k: v[-1] for k, v in picks.items()}})
        return out

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        yield from Generic.act(self, plans, how)
        yield from self.retitle()

    def retitle(self) -> Generator[Call, dict[str, Any], None]:
        ask = TAB_TITLE.search(self.prompt)
        comp = self.snapshot.get("dashboard_composition") or {}
        tabs = [t for t in comp.get("tabs") or [] if isinstance(t, dict) and t.get("id")]
        if ask is None or not tabs or "manage_navigation_bar" not in self.tools:
            return
        title = skimmed_title(self.texts, tail=self.tail)
        if title is None:
            return
        tab = next((t for t in tabs if t.get("name") and says(self.prompt, f"{t['name']} tab")), tabs[0])
        yield from self.call(
            "manage_navigation_bar", {"operation": "rename_tabs", "rename_map": {str(tab["id"]): title}}
        )

    def note_text(self, plans: list[Plan]) -> str:
        return Generic.note_text(self, plans)


@shortcut("tail_skimmer")
class TailSkimmer(SourceSkimmer):
    """The source skimmer reading from the end: each unsaid parameter takes the option the sources mention
    last, a tab the last title they quote next to a tab. A document whose rival passages all come before the
    fact (an intro sentence or a house convention, then the fact's own line) ends on the fact's value, which a
    skimmer that ranks by the first mention misses and this one takes without following the pointer. It reads
    from the end for one hidden value only: with two views (Derive's rule and its rival) it ranks as the source
    skimmer does — reading a two-rule glossary backwards is the other of its two orders, a coin no single
    ranking keeps off (left, and said, in tests/certify/adversary/ROUND5.md)."""

    tail = True


def skimmed_options(text: str, param: dict[str, Any], *, tail: bool = False) -> list[Any]:
    """The options of `param` a text names, as the source skimmer ranks them: most mentioned first, the first
    mentioned of a tie first; with `tail`, as the tail skimmer does, the last mentioned first (a document that
    puts its rival passages before the fact ends on the fact's value). One home: `taskforge check` asks both of
    the document a Ground fact is in."""
    counts: dict[str, list[Any]] = {}
    for m in option_mentions(text, param):
        c = counts.setdefault(str(m.value), [0, m.start, m.value, m.start])
        c[0] += 1
        c[3] = m.start
    if tail:
        return [c[2] for c in sorted(counts.values(), key=lambda c: -c[3])]
    return [c[2] for c in sorted(counts.values(), key=lambda c: (-c[0], c[1]))]


def skimmed_title(texts: list[str], *, tail: bool = False) -> str | None:
    """The tab title the source skimmer takes from texts: the first name quoted in a sentence (or table row)
    that speaks of a tab; with `tail`, the last such name (a document whose rival titles all come first)."""
    found = [
        q
        for text in texts
        for piece in re.split(r"(?<=[.!?|])\s+|\n", text)
        if re.search(r"\btabs?\b", piece, re.I) and (q := quoted(piece))
    ]
    return (found[-1] if tail else found[0]) if found else None


@shortcut("positional", PROBES)
class Positional(Generic):
    """Reads where things sit, not what they are: takes the widgets the prompt names and, for the one it only
    describes, the first widget placed on the open board (the first catalog entry of the named app when none is
    placed), with the values the prompt states. It passes wherever the seeding always puts the target first."""

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        named = self.named()
        said = {(w.get("origin"), w.get("widget_id")) for w in named}
        placed = self.placed_entries(skip=said)
        first = (
            placed[:1] or [w for w in self.scope() if (w.get("origin"), w.get("widget_id")) not in said][:1]
        )
        plans = yield from self.plans_for(named + first)
        return plans

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        """A repair goes to the first placed instance of the widget, whatever its values."""
        if not (how.repair and plans):
            yield from super().act(plans, how)
            return
        placed = self.placed()
        for plan in plans:
            origin, wid = plan.key
            first = next((w for w in placed if (w.get("origin"), w.get("widget_id")) == (origin, wid)), None)
            if first is None:
                yield from super().act([plan], how)
                continue
            yield from self.call(
                "update_widget", {"widget_uuid": first["widget_uuid"], "data_args": (plan.choices or [{}])[0]}
            )


class PlacedAt(Positional):
    """Reads a fixed place of the board: takes the widgets the prompt names and, for the one it only describes, the
    widget placed `at` (0 the first) on the open board among those the prompt does not name (that entry of the
    named app's catalog when fewer are placed), with the values the prompt states; a repair goes to that very
    placed widget. One per inner place (`second_placed` … `fifth_placed`; `positional` is the first): a taskset
    whose Find repairs keep the target off the ends but on a few inner places passes the reader of one of them on
    more than its share of the tasks (`certify.shortcuts.positions.place_shares`)."""

    at = 1

    def at_place(self, said: set[tuple[Any, Any]]) -> dict[str, Any] | None:
        placed = [w for w in self.placed() if (w.get("origin"), w.get("widget_id")) not in said]
        return placed[self.at] if len(placed) > self.at else None

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        named = self.named()
        said = {(w.get("origin"), w.get("widget_id")) for w in named}
        there = self.at_place(said)
        by_key = {(w.get("origin"), w.get("widget_id")): w for w in self.catalog}
        key = (there.get("origin"), there.get("widget_id")) if there is not None else None
        pick = (
            [by_key[key]]
            if key in by_key
            else [w for w in self.scope() if (w.get("origin"), w.get("widget_id")) not in said][
                self.at : self.at + 1
            ]
        )
        plans = yield from self.plans_for(named + pick)
        return plans

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        """A repair goes to the widget at the place read (to the first placed instance for a named widget)."""
        if not (how.repair and plans):
            yield from super().act(plans, how)
            return
        named = self.named()
        said = {(w.get("origin"), w.get("widget_id")) for w in named}
        there = self.at_place(said)
        rest = []
        for plan in plans:
            if there is not None and plan.key == (str(there.get("origin")), str(there.get("widget_id"))):
                args = {"widget_uuid": there["widget_uuid"], "data_args": (plan.choices or [{}])[0]}
                yield from self.call("update_widget", args)
            else:
                rest.append(plan)
        if rest:
            yield from super().act(rest, how)


for _at, _name in enumerate(("second_placed", "third_placed", "fourth_placed", "fifth_placed"), start=1):
    shortcut(_name, PROBES)(type(f"Placed{_at + 1}", (PlacedAt,), {"at": _at, "__doc__": PlacedAt.__doc__}))


@shortcut("pointer_first", PROBES)
class PointerFirst(Generic):
    """Reads where a planted pointer lists things, not which entry the request asks for: takes the widgets the
    prompt names and, for the one it describes, the widget on the first line of a board note that lists two or
    more of the app's widgets ("Lead item: Venue Mix"), with the values the prompt states; a repair goes to the
    placed instance that entry names by what it shows, or the first placed one. It passes wherever a pointer's
    entries sit in an order that puts the target at a fixed line (sorted by labels, the target's first)."""

    line = 0
    shows = ""

    def listed(self, pool: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
        """(widget, what the entry says it shows) of each line of the first board note naming two or more of
        `pool`, in the note's order."""
        comp = self.snapshot.get("dashboard_composition") or {}
        by_name = {str(w.get("name") or "").casefold(): w for w in pool}
        for note in comp.get("widgets") or []:
            if not (note.get("generated") and isinstance(note.get("generated_data"), str)):
                continue
            found = []
            for _, said in note_entries(note["generated_data"]):
                head, _, shows = said.partition(" on ")
                widget = by_name.get(said.casefold()) or by_name.get(head.casefold())
                if widget is not None:
                    found.append((widget, shows if widget is not by_name.get(said.casefold()) else ""))
            if len(found) >= 2:
                return found
        return []

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        named = self.named()
        said = {(w.get("origin"), w.get("widget_id")) for w in named}
        listed = self.listed([w for w in self.scope() if (w.get("origin"), w.get("widget_id")) not in said])
        pick = [listed[self.line]] if listed else []
        self.shows = pick[0][1] if pick else ""
        plans = yield from self.plans_for(named + [w for w, _ in pick])
        return plans

    def act(self, plans: list[Plan], how: Intent) -> Generator[Call, dict[str, Any], None]:
        """A repair goes to the placed instance the line names by what it shows (the first placed one else)."""
        if not (how.repair and plans and self.shows):
            yield from super().act(plans, how)
            return
        *rest, plan = plans
        yield from super().act(rest, how)
        origin, wid = plan.key
        placed = [w for w in self.placed() if (w.get("origin"), w.get("widget_id")) == (origin, wid)]
        best = max(placed, key=lambda w: shown_by(self.shows, w.get("data_args") or {}), default=None)
        if best is None:
            yield from super().act([plan], how)
            return
        yield from self.call(
            "update_widget", {"widget_uuid": best["widget_uuid"], "data_args": (plan.choices or [{}])[0]}
        )


@shortcut("pointer_last", PROBES)
class PointerLast(PointerFirst):
    """`pointer_first` reading the note's last line: the other salient place of a list."""

    line = -1


@shortcut("catalog_first", PROBES)
class CatalogFirst(SignatureMatcher):
    """Reads where the catalog lists things, not what they are: takes the widgets the prompt names and, for the
    one it describes, the first entry in the listing's order among those whose parameters take the most of the
    values the prompt states — the placed widgets for a repair (as the signature matcher looks there first),
    else the named app's catalog. A catalog lists an app's widgets in a fixed order (the live product's), so a
    target that is its app's first (or last) fit is found by its place alone; the authoring side keeps a widget
    listed before and one after it plausible (seeding.py), and this agent shows it per task."""

    last = False  # catalog_last: the last such entry

    def choose(self) -> Generator[Call, dict[str, Any], list[Plan]]:
        named = self.named()
        said = {(w.get("origin"), w.get("widget_id")) for w in named}
        placed = self.placed_entries()
        # the schemas read in the signature matcher's order (a battery's common calls are made once), the named
        # widgets set aside after
        best = yield from self.best_fits(placed)
        best = [w for w in best if (w.get("origin"), w.get("widget_id")) not in said]
        if not best:
            keys = {id(w) for w in placed}
            fits = yield from self.best_fits([w for w in self.scope() if id(w) not in keys])
            best = [w for w in fits if (w.get("origin"), w.get("widget_id")) not in said]
        place = {id(w): i for i, w in enumerate(self.catalog)}
        best.sort(key=lambda w: place.get(id(w), len(place)))
        pick = best[-1:] if self.last else best[:1]
        plans = yield from self.plans_for(named + pick)
        return plans


@shortcut("catalog_last", PROBES)
class CatalogLast(CatalogFirst):
    """`catalog_first` taking the last such entry: the other end of the listing."""

    last = True


def rule_lines(text: str, param: dict[str, Any]) -> list[Any]:
    """The option each line of `text` that states exactly one option of `param` states, in the text's order: a
    policy note's rules, or a document's list of them, as a reader of places sees it."""
    out = []
    for line in text.split("\n"):
        found = {str(m.value): m.value for m in option_mentions(line, param)}
        if len(found) == 1:
            out.append(next(iter(found.values())))
    return out


@shortcut("line_first", PROBES)
class LineFirst(SourceSkimmer):
    """Reads where a policy stands, not which rule the request names: reads the sources the source skimmer reads
    (the board's notes, the skills, prompts and resource the request points at) and, for each parameter the
    prompt leaves unsaid, takes the option on a fixed line of the first of them that lists two or more rules
    for it (with two policies asked, the next line's option for the second view). It passes wherever the rule
    a request names stands at that line — a note always written in one order, or a counterfactual copy that
    swaps the values in place and so leaves the rule on its line. A probe: with k rules a fixed line is right on
    about one task in k however they are drawn, so the counterfactual gate, not a per-task gate, establishes it
    (the copy moves the rule to another line)."""

    line = 0

    def values(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        stated = stated_values(self.live_prompt(), schema)
        asked = len(policies(self.prompt))
        views = 2 if asked >= 2 else 1
        picks: dict[str, list[Any]] = {}
        for param in option_params(schema):
            name = str(param["paramName"])
            if name in stated or not asked:
                # only where the request names a policy: a passage the request points at by its place ("the
                # first step of the workflow") is found by that place, which is the reading Ground asks for
                continue
            ruled = next((r for t in self.texts if len(r := rule_lines(t, param)) >= 2), [])
            if -len(ruled) <= self.line < len(ruled):
                at = range(len(ruled))[self.line]
                picks[name] = [ruled[at], ruled[(at + 1) % len(ruled)]]
        out = [{**stated, **{k: v[0] for k, v in picks.items()}}]
        if views == 2 and picks:
            out.append({**stated, **{k: v[1] for k, v in picks.items()}})
        return out


@shortcut("line_second", PROBES)
class LineSecond(LineFirst):
    """`line_first` on the second line."""

    line = 1


@shortcut("line_third", PROBES)
class LineThird(LineFirst):
    """`line_first` on the third line."""

    line = 2


@shortcut("line_last", PROBES)
class LineLast(LineFirst):
    """`line_first` on the last line."""

    line = -1
