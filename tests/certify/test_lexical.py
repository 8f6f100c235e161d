"""The lexical ensemble (certify/shortcuts/lexical.py): the word and character similarity measures an outside
player may pick a described widget by, and `exposure`, the ones under which a Find target is a top pick."""

from __future__ import annotations

import math
from collections import Counter

from certify import lexical_exposure, lexical_picks
from certify.shortcuts.lexical import SCORE_NAMES, measures, top_share

CATALOG = [
    {"name": "Commentary Drafts", "description": "Draft commentary by section with author and length."},
    {
        "name": "Factsheet Builds",
        "description": "Reports being built for each fund, their stage and who prepares and reviews them.",
    },
    {"name": "Chart Pack Status", "description": "Charts used in reports and when each was last refreshed."},
    {"name": "Holdings Disclosure", "description": "Which holdings may be shown and which are withheld."},
]
BUILDS = 1


def test_a_paraphrase_of_the_description_is_found_by_characters_though_no_word_is_shared():
    # "preparer and reviewer" shares no word with "who prepares and reviews them": the battery's own word
    # readers miss the target, character n-grams do not
    prompt = "Fix the preparer and the reviewer, with the as-of date."
    assert BUILDS not in lexical_picks(prompt, CATALOG).values()
    found = lexical_exposure(prompt, CATALOG, BUILDS)
    assert any("/trigrams/" in m for m in found)
    assert not any("/words/" in m for m in found)


def test_a_request_sharing_nothing_with_the_catalog_exposes_nothing():
    assert lexical_exposure("Zebu quokka?", CATALOG, BUILDS) == []


def test_a_tie_at_the_top_counts_an_outside_player_may_break_it_either_way():
    tied = [{"name": "Alpha Ledger", "description": ""}, {"name": "Alpha Ledger", "description": ""}]
    found = lexical_exposure("the alpha ledger", tied, 1)
    assert found and found == lexical_exposure("the alpha ledger", tied, 0)


def test_an_aside_is_read_both_ways():
    # an exclusion quoting the rival's description pulls the whole-prompt matchers to the rival; a player
    # that drops asides matches what is left
    prompt = "the stage it is at (not the charts used in reports and when each was last refreshed)"
    target = lexical_exposure(prompt, CATALOG, BUILDS)
    rival = lexical_exposure(prompt, CATALOG, 2)
    assert target and all(m.startswith("prompt less asides: ") for m in target)
    assert any(m.startswith("prompt: ") for m in rival)


def test_every_measure_named_is_one_of_the_ensemble_and_the_ensemble_spans_tokens_fields_and_scores():
    every = measures()
    assert len(every) == len(set(every))
    prompt = "who prepares and reviews each fund's factsheet builds"
    found = lexical_exposure(prompt, CATALOG, BUILDS)
    assert found and set(found) <= set(every)
    parts = [m.split(": ", 1)[1].split("/") for m in every]
    assert {p[1] for p in parts} >= {"words", "stems", "trigrams"}
    assert {p[2] for p in parts} == {"name", "description", "name+description"}
    assert {p[0] for p in parts} >= {"shared", "jaccard", "tfidf_cosine", "bm25"}


def test_a_pool_of_one_or_an_index_outside_it_exposes_nothing():
    assert lexical_exposure("factsheet builds", CATALOG[1:2], 0) == []
    assert lexical_exposure("factsheet builds", CATALOG, 9) == []


# The plain formulas of the ensemble's scores, one query against one entry (BM25 against the whole catalog): the
# reference the fast form in certify/shortcuts/lexical.py (`_scored`, `_bm25_side`) is held to, float for float.
def _shared(q, d, idf):
    return float(len(set(q) & set(d)))


def _jaccard(q, d, idf):
    union = set(q) | set(d)
    return len(set(q) & set(d)) / len(union) if union else 0.0


def _coverage(q, d, idf):
    return len(set(q) & set(d)) / len(set(d)) if d else 0.0


def _set_cosine(q, d, idf):
    return len(set(q) & set(d)) / math.sqrt(1 + len(set(d)))


def _count_cosine(q, d, idf):
    qc, dc = Counter(q), Counter(d)
    num = sum(v * dc[t] for t, v in qc.items())
    den = math.sqrt(sum(v * v for v in qc.values()) * sum(v * v for v in dc.values()))
    return num / den if den else 0.0


def _tfidf_cosine(q, d, idf):
    qc, dc = Counter(q), Counter(d)
    num = sum(v * dc[t] * idf.get(t, 0.0) ** 2 for t, v in qc.items())
    den = math.sqrt(
        sum((v * idf.get(t, 0.0)) ** 2 for t, v in qc.items())
        * sum((v * idf.get(t, 0.0)) ** 2 for t, v in dc.items())
    )
    return num / den if den else 0.0


def _idf_sum(q, d, idf):
    return sum(idf.get(t, 0.0) for t in set(q) & set(d))


PLAIN_SCORES = {
    "shared": _shared,
    "jaccard": _jaccard,
    "coverage": _coverage,
    "set_cosine": _set_cosine,
    "count_cosine": _count_cosine,
    "tfidf_cosine": _tfidf_cosine,
    "idf_sum": _idf_sum,
}


def _bm25(q, docs, k1=1.2, b=0.75):
    n = len(docs)
    avg = sum(map(len, docs)) / n if n else 0.0
    df = Counter(t for d in docs for t in set(d))
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    out = []
    for d in docs:
        counts = Counter(d)
        norm = k1 * (1 - b + b * (len(d) / avg if avg else 0.0))
        out.append(
            sum(idf[t] * counts[t] * (k1 + 1) / (counts[t] + norm) for t in dict.fromkeys(q) if t in counts)
        )
    return out


def test_the_plain_formulas_name_every_score_of_the_ensemble():
    assert [*PLAIN_SCORES, "bm25"] == list(SCORE_NAMES)


def test_the_ensembles_fast_scores_equal_the_formulas_they_stand_for_float_for_float():
    # rankings works the entry side out once per catalog and adds only shared terms; every score must still be
    # the very float its plain formula (PLAIN_SCORES, _bm25 above) gives, or a measure's top pick could move
    import random

    from certify.shortcuts import lexical

    def plain(query, entries):
        for field, get in lexical.FIELDS.items():
            for tokens, tokenize in lexical.TOKENIZERS.items():
                q, docs = tokenize(query), [tokenize(get(e)) for e in entries]
                df = Counter(t for d in docs for t in set(d))
                idf = {t: math.log((len(docs) + 1) / (c + 0.5)) for t, c in df.items()}
                for name, score in PLAIN_SCORES.items():
                    yield f"{name}/{tokens}/{field}", [score(q, d, idf) for d in docs]
                yield f"bm25/{tokens}/{field}", _bm25(q, docs)

    words = [
        "risk",
        "breach",
        "owner",
        "cure",
        "date",
        "fund",
        "exposure",
        "country",
        "limit",
        "loss",
        "stress",
        "grid",
        "price",
        "note",
        "log",
        "review",
        "the",
        "of",
    ]
    rnd = random.Random(7)
    for _ in range(150):
        entries = [
            {
                "name": " ".join(rnd.choices(words, k=rnd.randint(0, 3))).title(),
                "description": " ".join(rnd.choices(words, k=rnd.randint(0, 12))),
            }
            for _ in range(rnd.randint(2, 10))
        ]
        query = " ".join(rnd.choices(words, k=rnd.randint(0, 15))) + (
            " (not the log)" if rnd.random() < 0.5 else ""
        )
        assert list(lexical.rankings(query, entries)) == list(plain(query, entries))


def test_the_whole_prompt_top_overlap_share_counts_a_tie_as_a_share():
    """`top_share`: the entry sharing the most words with the whole prompt wins; alone at the top 1, tied with
    k-1 others 1/k, below the top 0 — an analysis ask naming the target's own column counts like the hint."""
    entries = [
        {"name": "Stale Price Monitor", "description": "Prices that have not changed for several days."},
        {"name": "Price Challenges", "description": "Prices we have challenged with a vendor."},
        {"name": "Feed Health", "description": "Latest delivery of each vendor file."},
    ]
    hint = "Add the widget the Shortlist lists for the lead item."
    assert top_share(hint, entries, 0) == 0.0
    named = hint + " Then answer with an analysis that cites each ticker's stale days."
    assert top_share(named, entries, 0) == 1.0
    tied = hint + " Look at the prices."
    assert top_share(tied, entries, 0) == 0.5 and top_share(tied, entries, 2) == 0.0
    # a fence ("… stays as it is") may be read or dropped by the chooser: the reading that favours the target
    # counts (read, the fence's words win the fenced widget; dropped, they win nothing)
    fenced = hint + " The stale panel stays as it is."
    assert top_share(fenced, entries, 0) == 1.0
    # one word each: a three-way tie
    assert top_share(hint + " Check the vendor's stale panel.", entries, 0) == 1 / 3
