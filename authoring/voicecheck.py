"""A persona's declared verbs checked against what the agents that read its prompts act on.

The rule author writes a persona's own verbs into its prompts ("put right the Cash Ladder"), and every role
that reads a prompt — the ladder agents of calibration, the heuristic, the oracle's reading — decides from the
verb whether a widget is added, repaired or read (`certify.agents.request.verb_kind`). A repair verb that reads
as an addition ("put right" → "put") makes the ladder create a second widget instead of fixing the stale one;
a verb nothing understands ("take down") leaves the request without an action. Both are errors before
authoring, naming the verb and the list it is in, with the verbs that do work.
"""

from __future__ import annotations

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
