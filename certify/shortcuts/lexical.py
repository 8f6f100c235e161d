"""An ensemble of the word and character similarity measures a player that does not understand a request may rank
catalog entries by, to find the widget a request only describes.

The battery's own word readers (bag of words, description matcher) are two points of a wide space: a player
written by someone else may count character trigrams instead of stems, weigh by IDF, normalise by the length of
the description, compare with the name alone, or drop the request's asides first. Each such choice picks the
described widget differently, and whichever one an outside player made, a Find task it wins is one where the
target is its top pick. So a Find request is measured against the whole product of choices — tokens (words,
stems, character 3- and 4-grams, padded trigrams) × fields (name, description, both) × scores (shared count,
Jaccard, coverage of the entry, set cosine, count cosine, TF-IDF cosine, IDF sum, BM25) × query (the prompt,
the prompt less its asides) — and `exposure` names every measure under which the target is the top pick, or
tied at the top (an outside player's tie-break is unknown). No single measure is privileged, so a wording that
leaves all of them picking something else holds against players nobody here wrote; the rule author prefers,
among the wordings it may say, the one fewest measures find (`authoring.roles.author.rules`).

Pure functions of text, cheap: a catalog of a dozen entries is scored under every measure in about a
millisecond."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..agents.retrieval import STOPWORDS, stem

if TYPE_CHECKING:
    from simulator import World

    from ..task import Task

_RUN = re.compile(r"[a-z0-9]+")
# words a request says of any widget ("add", "show", "set"), besides the usual stop words
_STOP = STOPWORDS | frozenset({"every", "set", "fix", "add", "put", "show", "view", "widget", "dashboard"})

Tokens = tuple[str, ...]


def _words(text: str) -> Tokens:
    return tuple(w for w in _RUN.findall(text.lower()) if w not in _STOP and len(w) > 1)


def _stems(text: str) -> Tokens:
    return tuple(stem(w) for w in _words(text))


# the tokens the measures compare, for the rule author's own tie measures (`seeding.tie_measures`)
words = _words
stems = _stems


def _grams(text: str, n: int, pad: bool) -> Tokens:
    out: list[str] = []
    for w in _RUN.findall(text.lower()):
        s = f" {w} " if pad else w
        out += [s[i : i + n] for i in range(len(s) - n + 1)]
    return tuple(out)


TOKENIZERS: dict[str, Callable[[str], Tokens]] = {
    "words": _words,
    "stems": _stems,
    "trigrams": lambda t: _grams(t, 3, False),
    "padded_trigrams": lambda t: _grams(t, 3, True),
    "quadgrams": lambda t: _grams(t, 4, False),
}

FIELDS: dict[str, Callable[[dict[str, Any]], str]] = {
    "name": lambda e: str(e.get("name") or ""),
    "description": lambda e: str(e.get("description") or ""),
    "name+description": lambda e: f"{e.get('name') or ''} {e.get('description') or ''}",
}

# The ensemble's scores, in the order `_scored` yields them (BM25 last, from `_bm25_side`). Their definitions
# live once, in `_scored`/`_bm25_side` (the entry side worked out once per catalog); the plain one-entry formulas
# they equal float for float are kept in tests/certify/test_lexical.py as the reference it compares against.
SCORE_NAMES = (
    "shared",
    "jaccard",
    "coverage",
    "set_cosine",
    "count_cosine",
    "tfidf_cosine",
    "idf_sum",
    "bm25",
)


def strip_asides(text: str) -> str:
    """The text less its parenthesised asides (nested ones too): a player may read an exclusion as noise."""
    while (cut := re.sub(r"\([^()]*\)", " ", text)) != text:
        text = cut
    return text


QUERIES: dict[str, Callable[[str], str]] = {"prompt": lambda p: p, "prompt less asides": strip_asides}


class _Docs:
    """The entry side of one (field, tokens) pair, worked out once per catalog: the rule author scores dozens of
    wordings against the same entries, and each score used to rebuild every entry's sets and counts."""

    __slots__ = ("avg", "bm25_idf", "counts", "docs", "idf", "sets", "sq", "tfidf_sq")

    def __init__(self, docs: list[Tokens]) -> None:
        self.docs = docs
        self.sets = [set(d) for d in docs]
        self.counts = [Counter(d) for d in docs]
        n = len(docs)
        df = Counter(t for d in docs for t in set(d))
        self.idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}
        self.sq = [sum(v * v for v in dc.values()) for dc in self.counts]
        idf = self.idf
        self.tfidf_sq = [sum((v * idf.get(t, 0.0)) ** 2 for t, v in dc.items()) for dc in self.counts]
        self.bm25_idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.avg = sum(map(len, docs)) / n if n else 0.0


@lru_cache(maxsize=1024)
def _docs(token_name: str, docs_text: tuple[str, ...]) -> _Docs:
    tokenize = TOKENIZERS[token_name]
    return _Docs([_tokens(tokenize, t) for t in docs_text])


def _scored(q: Tokens, side: _Docs) -> Iterator[tuple[str, list[float]]]:
    # every score but BM25 of one query against a catalog's entries, the entry side taken from `side`: the
    # intersections once per entry, and the dot products over the shared terms only (the others add zeros), in
    # the query's order (tests/certify/test_lexical.py holds them to the plain formulas, float for float)
    qset, qc = set(q), Counter(q)
    idf = side.idf
    inters = [qset & ds for ds in side.sets]
    yield "shared", [float(len(i)) for i in inters]
    yield (
        "jaccard",
        [len(i) / len(u) if (u := qset | ds) else 0.0 for i, ds in zip(inters, side.sets, strict=True)],
    )
    yield (
        "coverage",
        [len(i) / len(ds) if d else 0.0 for i, ds, d in zip(inters, side.sets, side.docs, strict=True)],
    )
    yield "set_cosine", [len(i) / math.sqrt(1 + len(ds)) for i, ds in zip(inters, side.sets, strict=True)]
    # only the shared terms add to a dot product (the others add zeros), taken in the query's order as before
    qpos = {t: k for k, t in enumerate(qc)}
    shared = [sorted(i, key=qpos.__getitem__) for i in inters]
    q_sq = sum(v * v for v in qc.values())
    out: list[float] = []
    for ts, dc, dsq in zip(shared, side.counts, side.sq, strict=True):
        num = sum(qc[t] * dc[t] for t in ts)
        den = math.sqrt(q_sq * dsq)
        out.append(num / den if den else 0.0)
    yield "count_cosine", out
    q_tf = sum((v * idf.get(t, 0.0)) ** 2 for t, v in qc.items())
    out = []
    for ts, dc, dtf in zip(shared, side.counts, side.tfidf_sq, strict=True):
        dot = sum(qc[t] * dc[t] * idf.get(t, 0.0) ** 2 for t in ts)
        norm = math.sqrt(q_tf * dtf)
        out.append(dot / norm if norm else 0.0)
    yield "tfidf_cosine", out
    yield "idf_sum", [sum(idf.get(t, 0.0) for t in i) for i in inters]


def _bm25_side(q: Tokens, side: _Docs, k1: float = 1.2, b: float = 0.75) -> list[float]:
    idf, avg = side.bm25_idf, side.avg
    out = []
    for d, counts in zip(side.docs, side.counts, strict=True):
        norm = k1 * (1 - b + b * (len(d) / avg if avg else 0.0))
        out.append(
            sum(idf[t] * counts[t] * (k1 + 1) / (counts[t] + norm) for t in dict.fromkeys(q) if t in counts)
        )
    return out


def rankings(query: str, entries: list[dict[str, Any]]) -> Iterator[tuple[str, list[float]]]:
    """(measure, one score per entry) for every measure of the ensemble on one query."""
    texts = {f: tuple(get(e) for e in entries) for f, get in FIELDS.items()}
    for field_name, docs_text in texts.items():
        for token_name, tokenize in TOKENIZERS.items():
            q = _tokens(tokenize, query)
            side = _docs(token_name, docs_text)
            for score_name, scores in _scored(q, side):
                yield f"{score_name}/{token_name}/{field_name}", scores
            yield f"bm25/{token_name}/{field_name}", _bm25_side(q, side)


@lru_cache(maxsize=8192)
def _tokens(tokenize: Callable[[str], Tokens], text: str) -> Tokens:
    # the same catalog descriptions are tokenized for every wording the rule author tries
    return tokenize(text)


def exposure(prompt: str, entries: list[dict[str, Any]], target: int) -> list[str]:
    """The measures (`query: score/tokens/field`) under which `entries[target]` — catalog entries as listed,
    `{name, description}` — is the top pick for `prompt`, alone or tied at the top. Empty: no word or character
    matcher of the ensemble takes the target from the names and descriptions."""
    if not 0 <= target < len(entries) or len(entries) < 2:
        return []
    out: list[str] = []
    for query_name, reword in QUERIES.items():
        for measure, scores in rankings(reword(prompt), entries):
            top = max(scores)
            if top > 0 and math.isclose(scores[target], top, rel_tol=1e-9, abs_tol=1e-12):
                out.append(f"{query_name}: {measure}")
    return out


def measures() -> list[str]:
    """Every measure of the ensemble, as `exposure` names them."""
    return [f"{q}: {s}/{t}/{f}" for q in QUERIES for f in FIELDS for t in TOKENIZERS for s in SCORE_NAMES]


# A sentence that tells the agent to leave a widget as it is (a fence): a chooser may read it as noise and drop it,
# or count its words like any other; `top_share` takes whichever reading favours the target.
FENCE = re.compile(
    r"\b(stays?|untouched|as it is|alone|already right|must not change|must stay|is correct|is right|"
    r"belongs to|serves another|own purpose|leave)\b",
    re.I,
)


def strip_fences(text: str) -> str:
    """The text less its sentences that fence a widget off ("… stays as it is")."""
    return " ".join(s for s in re.split(r"(?<=[.!?;])\s+", text) if not FENCE.search(s))


def overlap_words(text: str) -> set[str]:
    """The words `top_share` compares (its word reading; stop words and one-letter words out)."""
    return set(_words(text))


def top_share(prompt: str, entries: list[dict[str, Any]], target: int) -> float:
    return _top(prompt, entries, target)[0]


def listed_first(prompt: str, entries: list[dict[str, Any]], target: int) -> bool:
    """Whether the plain top word-overlap chooser of `top_share` takes the target when it breaks a tie by the
    order the entries are listed in (the catalog's or the board's, what every outside player sees first): the
    target at the top, alone or the first listed of the tied, under some reading. A tie of k is 1/k of the
    taskset to a chooser breaking ties at random, but the whole of it to the plainest one (a stable sort, a
    first `max`), so a wording that leaves the target first among the tied is as exposed as one that leaves it
    alone at the top."""
    return _top(prompt, entries, target)[1]


def _top(prompt: str, entries: list[dict[str, Any]], target: int) -> tuple[float, bool]:
    """The share of the Find tasks like this one a plain top word-overlap chooser wins: the entry whose name and
    description share the most words with the WHOLE prompt the agent sees (the find hint, the analysis ask, the
    flavour line, the board's and the note's names …) is its pick, ties broken by a rule nobody here knows — so a
    target tied with k-1 others at the top counts 1/k, alone at the top 1, below the top 0. The prompt is read
    as said, less its asides, and less its asides and fences, by words and by stems; the reading that favours the
    target counts (a chooser nobody here wrote may drop either or neither)."""
    if not 0 <= target < len(entries) or len(entries) < 2:
        return 0.0, False
    best, first = 0.0, False
    for tokenize in (_words, _stems):
        docs = [set(tokenize(f"{e.get('name') or ''} {e.get('description') or ''}")) for e in entries]
        for query in (prompt, strip_asides(prompt), strip_fences(strip_asides(prompt))):
            said = set(tokenize(query))
            scores = [len(said & d) for d in docs]
            top = max(scores)
            if top > 0 and scores[target] == top:
                best = max(best, 1.0 / scores.count(top))
                first = first or scores.index(top) == target
    return best, first


def _name_words(text: str) -> list[str]:
    return [w for w in _RUN.findall(text.lower()) if w not in _STOP and len(w) > 2]


def naming(text: str, entries: list[dict[str, Any]], target: int) -> list[str]:
    """The parts of the target's catalog name `text` says: the whole name (as a phrase, any case), or a word of
    it that no other entry's name has and that names nothing the target serves. At Find the agent must tell
    the target by what it serves (its columns, `entries[i]["columns"]`: "active weight" is the figure an
    analysis of Sector Tilt vs Benchmark cites, fair to say) or by the source the level hides it in; a word
    only its name has ("tilt") hands a name matcher the widget whatever the rest says. Empty: the text names
    no part of the target that way."""
    if not 0 <= target < len(entries):
        return []
    said = text.lower()
    name = str(entries[target].get("name") or "")
    out: list[str] = []
    if name and re.search(rf"(?<![a-z0-9]){re.escape(name.lower())}(?![a-z0-9])", said):
        out.append(name)
    others = {
        stem(w) for i, e in enumerate(entries) if i != target for w in _name_words(str(e.get("name") or ""))
    }
    served = {stem(w) for w in _name_words(str(entries[target].get("columns") or ""))}
    words = {stem(w) for w in _name_words(text)}
    for w in dict.fromkeys(_name_words(name)):
        if stem(w) not in others and stem(w) not in served and stem(w) in words and w not in out:
            out.append(w)
    return out


def first_named(text: str, entries: list[dict[str, Any]]) -> int | None:
    """The entry whose whole catalog name `text` says first (None: it names none): the pick of a reader of a
    source (a skill the request cites) who takes the first widget of the candidates it names."""
    said = text.lower()
    found = [
        (m.start(), i)
        for i, e in enumerate(entries)
        if e.get("name")
        and (m := re.search(rf"(?<![a-z0-9]){re.escape(str(e['name']).lower())}(?![a-z0-9])", said))
    ]
    return min(found)[1] if found else None


def served_words(definition: dict[str, Any]) -> str:
    """What a widget serves and takes, as words: its table's column keys and headers and its parameters' names
    and labels (what it can be filtered by)."""
    params = [p for p in definition.get("params") or [] if isinstance(p, dict)]
    defs = (definition.get("schema_data") or {}).get("table", {}).get("columnsDefs") or []
    return " ".join(
        [
            *(
                f"{str(c.get('field') or '').replace('_', ' ')} {c.get('headerName') or ''}"
                for c in defs
                if isinstance(c, dict)
            ),
            *(f"{str(p.get('paramName') or '').replace('_', ' ')} {p.get('label') or ''}" for p in params),
        ]
    )


def find_pool(world: World, task: Task, name: str) -> tuple[list[dict[str, str]], int] | None:
    """The catalog entries an outside player ranks for a Find task's described target `name` (the board's
    placed widgets for a repair, the app's catalog otherwise), and the target's index (None: not found)."""
    from ..counterfactual import _target_widget

    found = _target_widget(world, task, name)
    if found is None:
        return None
    origin, wid = found
    fixture = world.fixture_of(origin, task.setup.workspace_backends or None)
    if fixture is None:
        return None
    widgets = fixture.catalog.widgets
    app = widgets[wid].definition.get("category") or origin
    board = task.setup.initial_state.dashboard if task.setup.initial_state else None
    placed = [
        w.widget_id for w in (board.widgets if board else []) if w.origin == origin and w.widget_id in widgets
    ]
    pool = (
        list(dict.fromkeys(placed))
        if wid in placed
        else [w for w, d in widgets.items() if (d.definition.get("category") or origin) == app]
    )
    entries = [
        {
            "name": widgets[w].name,
            "description": widgets[w].definition.get("description") or "",
            "columns": served_words(widgets[w].definition),
        }
        for w in pool
    ]
    return entries, pool.index(wid)
