"""A grammar and coherence lint for requests: the slips a composed prompt makes that a person would not.

Each rule is a pattern with the message it reports; the validator flags every match. They catch what clause
assembly produces when a variant meets the wrong neighbour ("switch it, back to", "bring up it", "; is correct"),
not style: a rule that fires on a sentence a careful writer would keep is a bad rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    message: str


_ABBREVIATIONS = r"(?<!\bSt)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bNo)"
RULES = (
    Rule("repeated_word", re.compile(r"\b(\w+)\s+\1\b", re.I), "a word is repeated"),
    Rule("space_before_punctuation", re.compile(r"\s[,.;:!?)]"), "a space before punctuation"),
    Rule(
        "doubled_punctuation",
        re.compile(r"[,;:]\s*[,;:.]|\.\s*[,;:]|(?<!\.)\.\.(?!\.)"),
        "doubled punctuation",
    ),
    Rule(
        "lowercase_sentence", re.compile(_ABBREVIATIONS + r"[.!?]\s+[a-z]"), "a sentence starts in lower case"
    ),
    Rule(
        "article",
        re.compile(r"\ba\s+(?=[aeioAEIO][a-z])|\ban\s+(?=[b-df-gj-np-tv-z][a-z])"),
        "'a' before a vowel or 'an' before a consonant",
    ),
    Rule(
        "comma_in_phrasal_verb",
        re.compile(r"\b(?:it|them),\s+(?:back|up|down|out|off|over)\b"),
        "a comma splits a verb from its particle",
    ),
    Rule(
        "particle_after_pronoun",
        re.compile(r"\b(?:bring|put|pull|look|read|set)\s+(?:up|in|off|out)\s+(?:it|them)\b", re.I),
        "the pronoun belongs before the particle ('bring it up')",
    ),
    Rule(
        "dangling_predicate",
        re.compile(r"[;:]\s+(?:is|are|was|were|must|belongs|serves|stays|should)\b"),
        "a clause has no subject",
    ),
    Rule("empty_brackets", re.compile(r"\(\s*\)|—\s*—"), "an empty aside"),
)


def _unbalanced(text: str) -> list[str]:
    out = []
    if text.count("(") != text.count(")"):
        out.append("unbalanced parentheses")
    if text.count('"') % 2:
        out.append("an unclosed quotation mark")
    return out


def problems(text: str) -> list[str]:
    """Every slip in `text`, as "<rule>: <message> ('<where>')"."""
    out = []
    for rule in RULES:
        for m in rule.pattern.finditer(text):
            start, end = max(0, m.start() - 12), min(len(text), m.end() + 12)
            out.append(f"{rule.name}: {rule.message} ('{text[start:end].strip()}')")
    out += [f"balance: {p}" for p in _unbalanced(text)]
    return out
