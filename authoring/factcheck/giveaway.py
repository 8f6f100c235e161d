"""Words a level says that give away what it hides: a policy phrase, dashboard or note name sharing the
carried value's words, a dashboard named after the Find target, a hint with a verb in it, a phrase that is not
read as a policy, and a purpose or deadline that says a hidden option."""

from __future__ import annotations

import re
from typing import Any

from certify import states_value
from simulator import World

from ..sources import SourceError, Story
from .model import Governance, ResolvedTarget
from .said import _option_label, value_text


def _giveaway_errors(
    world: World, story: Story, param: dict[str, Any] | None, value: Any, phrase: str | None = None
) -> list[SourceError]:
    """Derive hides the carried value behind a policy phrase; a phrase — or a dashboard or note name the level
    shows — that shares a word or a stem with the value or the label its option shows, or says a finance-lexicon
    synonym of it
    ("sterling" for GBP, "pulled" for Cancelled), gives the value away to an agent that never reads the policy
    (the battery's phrase guesser). The rival policy's phrase is held to the same rule for its own value, so it
    reads as plausible as the right one."""
    from certify import giveaways, load_lexicon

    lexicon = load_lexicon(world.path)
    facts, policy = story.facts, story.facts.policy
    label = _option_label(param, value)
    said: list[tuple[str, str, Any, str | None]] = [
        ("facts.policy.phrase", phrase or policy.phrase, value, label),
        ("facts.dashboard", facts.dashboard, value, label),
    ]
    if facts.note:
        said.append(("facts.note", facts.note, value, label))
    if policy.note:
        said.append(("facts.policy.note", policy.note, value, label))
    if policy.distractor is not None:
        rival = policy.distractor.value
        said.append(
            ("facts.policy.distractor.phrase", policy.distractor.phrase, rival, _option_label(param, rival))
        )
    errors = []
    for key, text, what, named in said:
        reasons = giveaways(text, what, named, lexicon)
        if reasons:
            errors.append(
                SourceError(
                    story.file,
                    key,
                    f"'{text}' gives away {value_text(what)}: it {'; '.join(reasons)} — an agent guesses the "
                    "value without reading the policy; reword it so that nothing in it names the value",
                )
            )
    return errors


def _dashboard_name_errors(story: Story, target: ResolvedTarget) -> list[SourceError]:
    """Every level names the dashboard; one whose name holds the Find target's name ("Liquidity Coverage
    Board" for "Liquidity Coverage") names the widget the Find level only describes, so an agent matching
    catalog names in the request (the shortcuts battery's enumerator, note stuffer and neighbour copier) finds
    it without reading the description, and the Find level never certifies."""
    said = re.compile(rf"(?<!\w){re.escape(target.name)}(?!\w)", re.I)
    found = [
        (key, name)
        for key, name in (("facts.dashboard", story.facts.dashboard), ("facts.tab", story.facts.tab or ""))
        if name and said.search(name)
    ]
    return [
        SourceError(
            story.file,
            key,
            f"'{name}' holds the name of the Find target '{target.name}': the Find level then names the "
            "widget it should only describe (a name matcher finds it without the description); name the "
            f"{key.rsplit('.', 1)[-1]} by what the board is for, without '{target.name}'",
        )
        for key, name in found
    ]


def _policy_phrase_errors(story: Story) -> list[SourceError]:
    """The Derive level says the policy phrase where the value would be ("desk per the macro desk"); the agents
    take a phrase for a policy only when it ends with a policy noun (`certify.agents.request.reads_as_policy`),
    else they see no policy to look up and the level fails for all of them under some wordings."""
    from certify import POLICY_NOUNS, reads_as_policy

    phrase = story.facts.policy.phrase
    if reads_as_policy(phrase):
        return []
    return [
        SourceError(
            story.file,
            "facts.policy.phrase",
            f"'{phrase}' does not read as a policy to the agents (it must end with one of: "
            f"{', '.join(POLICY_NOUNS[:12])}, …); say e.g. '{phrase} rule' and use that phrase in the story",
        )
    ]


def _hidden_option_errors(story: Story, hidden_params: list[dict[str, Any]]) -> list[SourceError]:
    """The purpose and deadline are said at every level, so they must not say an option of a parameter a level
    hides (`hidden_params`: the policy's at Derive, the fact's at Ground and Compose) as the catalog writes it:
    the agents take such an option for the value to set ("Credit wants …" sets the asset class to Credit before
    any policy is read), and the ladder fails the level. The storyline's first sentence, said when there is no
    why, is left out by the rule author where it says one, so only a story's own why and deadline can."""
    from certify import schema_mentions

    errors = []
    for key, text in (("why", story.facts.why), ("deadline", story.facts.deadline)):
        said = schema_mentions(text or "", {"params": hidden_params})
        option = next(((name, ms[0]) for name, ms in said.items() if ms), None)
        if option is not None:
            name, mention = option
            errors.append(
                SourceError(
                    story.file,
                    f"facts.{key}",
                    f"'{text}' says '{mention.text}', an option of {name}, which a level leaves the agent to find "
                    f"(every level says the {key}): an agent takes it for the {name} to set; say it without the "
                    "option's name",
                )
            )
    return errors


def _purpose_errors(
    world: World, story: Story, carried_value: Any, governance: Governance
) -> list[SourceError]:
    """The purpose and deadline are said at every level, so they must not say what a level hides (the value
    Derive's policy stands for, the value or phrase Ground reads in its source)."""
    errors = []
    hidden = [value_text(carried_value), governance.phrase]
    if governance.sets is not None and governance.value is not None:
        hidden.append(value_text(governance.value))
    first = story.facts.targets[0].widget if story.facts.targets else ""
    if story.facts.why and first and states_value(story.facts.why, first, any_case=True):
        errors.append(
            SourceError(
                story.file,
                "facts.why",
                f"'{story.facts.why}' names '{first}', which the Find level hides (every level says why); "
                "say why without the widget's name",
            )
        )
    # an explicit why or deadline; the storyline's first sentence (said when there is no why) is left out by the
    # rule author at any level it would give away, so it is no error
    for key, text in (("why", story.facts.why), ("deadline", story.facts.deadline)):
        said = next((h for h in hidden if text and h and states_value(text, h, any_case=True)), None)
        if said is not None:
            where = f"facts.{key}" if key == "deadline" or story.facts.why else "facts.why"
            how = (
                ""
                if story.facts.why or key == "deadline"
                else " (the storyline's first sentence, said when facts.why is absent)"
            )
            errors.append(
                SourceError(
                    story.file,
                    where,
                    f"'{text}'{how} says '{said}', which a level hides (every level says it); "
                    "say why without the value",
                )
            )
            continue
        # nor a word, a stem or a finance-lexicon synonym of a hidden value ("crude" for Oil +40%): the phrase
        # guesser's judgement, applied to what every level says
        from certify import giveaways, load_lexicon

        values = [carried_value] + ([governance.value] if governance.value is not None else [])
        for value in values:
            reasons = giveaways(text or "", value_text(value), None, load_lexicon(world.path)) if text else []
            if reasons:
                errors.append(
                    SourceError(
                        story.file,
                        f"facts.{key}",
                        f"'{text}' gives away {value_text(value)}, which a level hides: it {'; '.join(reasons)} "
                        "(every level says it); say why without it",
                    )
                )
                break
    return errors
