"""The finance lexicon and what a phrase gives away through it (issue 20 item 3). The phrases below were
written before their outcome was looked at: they are an outsider's guesses at what names a value and what
does not."""

from __future__ import annotations

import pytest

from certify.lexicon import LexiconError, giveaways, guess, load_lexicon, read_file
from certify.shortcuts.battery import strip_asides

LEX = load_lexicon()


@pytest.mark.parametrize(
    ("text", "value", "why"),
    [
        ("the quid-funded class rule", "GBP", "says 'quid'"),
        ("the continental book rule", "Europe", "says 'continental'"),
        ("the cancellation sweep rule", "Cancelled", "stem"),
        ("the Europe overlay rule", "Europe", "shares the word 'europe'"),
        ("the crude-spike case", "Oil +40%", "says 'crude-spike'"),
        ("the trailing year convention", "1Y", "says 'trailing year'"),
    ],
)
def test_a_phrase_that_names_its_value_is_caught(text, value, why):
    reasons = giveaways(text, value, None, LEX)
    assert any(why in r for r in reasons), reasons


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("the Monday overlay rule", "Europe"),
        ("the red-folder case", "Oil +40%"),
        ("the hedged share-class funding rule", "GBP"),
        ("the tidy-up orders rule", "Cancelled"),
        ("the trustee look-back convention", "1Y"),
    ],
)
def test_a_phrase_that_names_nothing_passes(text, value):
    assert giveaways(text, value, None, LEX) == []


def test_the_option_label_counts_like_the_value():
    assert giveaways("the freight read-across rule", "MRWD", "Marrowood Freight", LEX)
    assert not giveaways("the freight read-across rule", "MRWD", None, LEX)


def test_the_guesser_takes_the_option_the_words_give_away():
    assert guess("status per the cable desk convention", ["USD", "EUR", "GBP", "JPY"], LEX) == "GBP"
    assert guess("per the pulled-tickets rule", ["Working", "Filled", "Cancelled"], LEX) == "Cancelled"
    assert guess("per the Thursday rule", ["Working", "Filled", "Cancelled"], LEX) is None


def test_a_world_extends_the_lexicon(tmp_path):
    (tmp_path / "lexicon.yaml").write_text(
        "entries:\n  - {value: GBP, kind: currency, synonyms: [harbour money]}\n"
        "  - {value: Keel Core Equity, kind: fund, synonyms: [flagship]}\n"
    )
    lex = load_lexicon(tmp_path)
    assert giveaways("the harbour money rule", "GBP", None, lex)
    assert giveaways("the flagship mandate standard", "Keel Core Equity", None, lex)
    assert "sterling" in lex.of("GBP")  # the shipped synonyms stay
    assert not giveaways("the flagship mandate standard", "Keel Core Equity", None, LEX)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("entries:\n  - {value: GBP, kind: currency, synonyms: [quid], note: x}\n", "entries.0.note"),
        ("entries:\n  - {value: GBP, kind: currency, synonyms: []}\n", "entries.0.synonyms"),
        ("entries: [1\n", "(file)"),
    ],
)
def test_a_bad_lexicon_file_names_the_file_and_field(tmp_path, text, field):
    path = tmp_path / "lexicon.yaml"
    path.write_text(text)
    with pytest.raises(LexiconError) as info:
        read_file(path)
    assert info.value.file == str(path) and info.value.field == field


def test_the_description_matcher_drops_every_aside():
    said = "Add the rows (not the view of (nested) breaches) from the desk (by fund)."
    assert strip_asides(said).split() == ["Add", "the", "rows", "from", "the", "desk", "."]
