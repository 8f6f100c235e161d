"""How the requests say a story's pieces: a parameter value, a parameter's label, an option's label, the
story's purpose, and which facts field says a rival rule's value. The wording the fact checks compare against
is the wording the rule author writes, so both read it from here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from certify import states_value

from ..sources import Story
from .model import PolicyDocument, ResolvedStory, ResolvedTarget, value_said


def value_text(value: Any) -> str:
    """A parameter value as a prompt states it (and as a level's hidden value records it)."""
    return value_said(value)


def param_label(param: dict[str, Any] | None, key: str) -> str:
    """How a person names a parameter or column: its declared label when it has one ("Event Type" → "event
    type"), else the key with underscores read as spaces; acronyms keep their case."""
    label = (
        str((param or {}).get("label") or (param or {}).get("headerName") or key).replace("_", " ").strip()
    )
    return " ".join(w if (w.isupper() and len(w) > 1) else w.lower() for w in label.split())


def _option_label(param: dict[str, Any] | None, value: Any) -> str | None:
    """The label the parameter's options show for `value` (None when it is the value itself)."""
    from simulator import param_options

    for option in param_options(param or {}):
        if str(option.value) == str(value):
            shown = option.label or ""
            return shown if shown and shown != str(value) else None
    return None


def purpose(story: Story) -> str:
    """Why the story's work is wanted, as every level says it: `facts.why`, else the storyline's first
    sentence."""
    if story.facts.why:
        return story.facts.why
    prose = " ".join(
        line.strip() for line in story.prose.splitlines() if line.strip() and not line.startswith("#")
    )
    match = re.match(r"(.+?[.!?])(?:\s|$)", prose)
    return match.group(1) if match else ""


def rival_said(story: Story, value: Any, carried_key: str) -> str | None:
    """The facts field that says a Derive rival rule's value where every request says it (`facts.why`, the
    deadline, the dashboard, a value another parameter is stated on: "The credit PM wants …", the fund
    "Breakwater Credit" beside the asset class Credit), or None. A second view on that value would be a hidden
    value the request states anyway: the leak gate refuses it and a reader that takes an option word from the
    request sets it unread, so Derive asks for no second view then (`Level.compare`)."""
    text = value_text(value)
    stated = {
        f"facts.params.{k}": value_text(v)
        for t in story.facts.targets
        for k, v in {**story.facts.params, **(t.params or {})}.items()
        if k != carried_key
    }
    fields = {
        "facts.why": purpose(story),
        "facts.deadline": story.facts.deadline or "",
        "facts.dashboard": story.facts.dashboard or "",
        **stated,
    }
    return next((k for k, said in fields.items() if said and states_value(said, text, any_case=True)), None)


def second_view(
    story: Story, doc: PolicyDocument | None, carried: ResolvedTarget, key: str, value: Any
) -> tuple[str, Any] | None:
    """The rival rule Derive also asks for, as (phrase, value): a second view of the carried target on the
    value that rule of the policy's document sets. One hidden option among the 3-8 a parameter declares is won
    by a fixed guess ("always the third option") about once in k tasks; two distinct options read from the same
    document make k·(k-1) equally plausible outcomes, and a guess that puts both views on one value never
    passes — so a carried value on the parameter's default, or rows that ignore it, still leave Derive
    something to read. None where the document offers no rival rule, where the parameter declares fewer than
    three options (the two views would take them both: one of each passes unread), and where every request
    says the rival's value anyway (`rival_said`)."""
    if doc is None or doc.rival is None:
        return None
    phrase, rival = doc.rival
    if (
        str(rival) == str(value)
        or len(carried.widget.options(key)) < 3
        or rival_said(story, rival, key) is not None
    ):
        return None
    return phrase, rival


def owned_sentences(resolved: Iterable[ResolvedStory]) -> list[str]:
    """The stories' own sentences, said at each of their levels by design — each story's purpose and its own
    deadline: the rotation-aware variety measure leaves them out of the skeletons (`variety.Masks.owned`)."""
    return [t for r in resolved for t in (purpose(r.story), r.story.facts.deadline) if t]
