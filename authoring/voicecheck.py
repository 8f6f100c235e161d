"""A persona's declared verbs checked against what the agents that read its prompts act on.

The rule author writes a persona's own verbs into its prompts ("put right the Cash Ladder"), and every role
that reads a prompt — the ladder agents of calibration, the heuristic, the oracle's reading — decides from the
verb whether a widget is added, repaired or read (`certify.agents.request.verb_kind`). A repair verb that reads
as an addition ("put right" → "put") makes the ladder create a second widget instead of fixing the stale one;
a verb nothing understands ("take down") leaves the request without an action. Both are errors before
authoring, naming the verb and the list it is in, with the verbs that do work.

The voice's set phrases are checked the other way round, against the requests the rule author drafts from the
persona's stories (`unsaid_phrases`): a declared phrase none of the twenty requests says (an alias for a name no
request mentions twice, a period name for a period no story sets) is a `check` warning naming the voice field.
"""

from __future__ import annotations

import re
from typing import Any

from certify import verb_kind

# voice field -> the action its verbs must mean, and how a message names it
FIELDS = {
    "add_verbs": ("create", "an addition"),
    "read_verbs": ("read", "a read"),
    "repair_verbs": ("update", "a repair"),
}
MEANS = {"create": "an addition", "read": "a read", "update": "a repair", None: "no action"}
WORKING = {
    "create": "add, place, pin, bring up, put up, stand up, drop",
    "read": "read, look up, pull, check, inspect, consult",
    "update": "repair, fix, correct, reset, re-point, restore, switch",
}


def voice_errors(voice: Any) -> list[tuple[str, str]]:
    """(key, message) of every declared verb of a `sources.Voice` the agents would take for another action,
    or for none."""
    errors = []
    for name, (wanted, meaning) in FIELDS.items():
        for i, verb in enumerate(getattr(voice, name)):
            kind = verb_kind(verb)
            if kind != wanted:
                errors.append(
                    (
                        f"voice.{name}[{i}]",
                        f"'{verb}' reads as {MEANS[kind]} to the agents that act on the prompts, not as "
                        f"{meaning}; use a verb they act on ({WORKING[wanted]}) or drop it",
                    )
                )
    return errors


def said_alone(phrase: str, name: str, text: str) -> bool:
    """Whether `text` says the alias `phrase` on its own — not as a piece of the full `name` it stands for
    ("Keel" inside "Keel Core Equity" is the name, not its alias)."""
    rest = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", text)
    # as written, but for its first letter (an alias opening a sentence): "Flow Credit Limits", a dashboard's
    # name, does not say the alias "flow credit"
    head, tail = phrase[:1], phrase[1:]
    pattern = rf"(?<![\w-])(?:{re.escape(head.lower())}|{re.escape(head.upper())}){re.escape(tail)}(?![\w-])"
    return re.search(pattern, rest) is not None


def unsaid_phrases(voice: Any, prompts: list[str]) -> list[tuple[str, str]]:
    """(key, message) of every phrase the persona declares that none of its requests says: an opener, deadline or
    sign-off; an alias said on its own (the rule author says it at a later mention of its name in a request — a
    value a twin or a stale view shows again, the app a twin comes from — so a name every request mentions once
    never gets it); a period name (said beside a period a story sets, at its Execute level). Nothing when the
    persona opted out of saying every phrase (`every_phrase: false`)."""
    if not voice.every_phrase:
        return []
    said = " ".join(prompts)
    out = []
    for kind in ("openers", "deadlines", "signoffs"):
        for i, phrase in enumerate(getattr(voice, kind)):
            if phrase.strip() and phrase not in said:
                out.append((f"voice.{kind}[{i}]", f"'{phrase}' is never said in the persona's requests"))
    for name, alias in voice.aliases.items():
        if said_alone(alias, name, said):
            continue
        mentions = [len(re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", p)) for p in prompts]
        why = (
            "no request names it"
            if not any(mentions)
            else "no request mentions it a second time"
            if max(mentions) < 2
            else "its later mentions are values the request states (said in full)"
        )
        out.append(
            (
                f"voice.aliases.{name}",
                f"'{alias}' is never said: an alias stands for its name at a later mention in a request (a value "
                f"a twin or stale view shows again, the app a twin comes from), and {why}; alias a name your "
                "stories repeat, drop it, or set every_phrase: false",
            )
        )
    for period, gloss in voice.period_names.items():
        if f"{period} ({gloss})" not in said:
            stated = any(re.search(rf"(?<![\w-]){re.escape(period)}(?![\w-])", p) for p in prompts)
            why = (
                "it is only ever hidden or described" if stated else f"no story of the persona sets {period}"
            )
            out.append(
                (
                    f"voice.period_names.{period}",
                    f"'{gloss}' is never said: a period name glosses a period a story sets, and {why}; drop it "
                    "or set every_phrase: false",
                )
            )
    return out
