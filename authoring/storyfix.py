"""Which field of a story a blocking review item comes back to, and how to change it.

A blocked run's items speak the pipeline's language (grader codes, rung names). The story writer needs the
facts field to edit: this maps an item (its kind, check, level and reason) to that field and a concrete
change, printed under the item by `taskforge author`, `check --draft` and `review show`.
"""

from __future__ import annotations

import re
from typing import Any

LEVEL_WORDS = {"Execute": 0, "Find": 1, "Derive": 2, "Ground": 3, "Compose": 4}

# (level, the rung that should pass failed) -> field, how
FAILED = {
    0: ("facts.targets", "the request states everything and still fails: check the targets and params"),
    1: (
        "facts.find_hint",
        "the Find rung ranks the app's widgets by what they serve (their schemas' columns and filters) "
        "against the request: describe the columns that set the widget apart, in your own words, not its "
        "catalog description (taskforge world show '<widget>')",
    ),
    2: (
        "facts.policy",
        "the Derive rung did not resolve the policy: its phrase must end with a policy noun (rule, "
        "convention, case, …) and be defined, with the carried value, in the note or resource the story names",
    ),
    3: (
        "facts.governance.fact",
        "the Ground rung did not find the fact where the request points: ground it in a piece "
        "`taskforge world show --facts <source>` lists (a resource must be in the resource index)",
    ),
    4: (
        "facts.build",
        "the Compose rung could not build, place or key what facts.build names: check the backend, table, "
        "app and tab names, and that the grounded value is one the built table can be keyed on",
    ),
}
# (level, the rung below solved it) -> field, how
SOLVED = {
    1: (
        "facts.targets[0]",
        "the request picks the widget without its description: choose a first target whose parameters "
        "another widget of its app (and of the board) also takes",
    ),
    2: (
        "facts.policy.carries",
        "the carried value is reachable without the policy: carry a value that is not the parameter's "
        "default and that no name in the request states",
    ),
    3: (
        "facts.governance.sets",
        "the grounded value is reachable without reading the source: ground a parameter whose right value "
        "is neither its default nor stated elsewhere (a repair: seed it wrong)",
    ),
    4: ("facts.build", "the built part is not needed to pass: key the table on the grounded parameter"),
}


def _level(item: dict[str, Any]) -> int | None:
    if item.get("level") is not None:
        return int(item["level"])
    match = re.search(r"_level(\d)$", str(item.get("task_id") or ""))
    return int(match.group(1)) if match else None


def story_fix(item: dict[str, Any]) -> tuple[str, str] | None:
    """(facts field, the change) for a review item, or None when it is not about the story's facts."""
    kind, reason = str(item.get("kind") or ""), str(item.get("reason") or "")
    level = _level(item)
    if "only widget of its app" in reason or "only widget on the dashboard" in reason:
        return SOLVED[1]
    if kind in ("ladder", "defect", "dead_rung") and level is not None:
        if re.search(r"\bsolved this \w+ task\b", reason) and level in SOLVED:
            return SOLVED[level]
        return FAILED.get(level)
    if kind == "gate_failure":
        evidence = " ".join(str(item.get("evidence") or "").split())[:300]
        return (
            "facts",
            f"the gates failed on what the author made of these facts ({evidence or 'no evidence'}); "
            "`taskforge check --draft` reproduces it in seconds",
        )
    if kind == "staircase":
        return ("facts", "an inverted staircase follows from the level items above: fix those first")
    return None
