"""The Derive level's policy: facts an author would misread, the document that defines the phrase (a workspace
resource, or a note the pipeline plants), its distractor and the rival rule Derive's second view asks for, and
the value-free phrase coined when the story's own gives the value away."""

from __future__ import annotations

import hashlib
import re
from typing import Any, cast

from certify import option_mentions, policy_value, states_value, words
from simulator import World, option_values, value_allowed

from ..sources import Facts, SourceError, Story
from ..suggest import did_you_mean
from .governance import _find_resource
from .model import PolicyDocument, ResolvedTarget
from .said import param_label, value_text
from .targets import _options_hint

NOTE_NEEDS_DISTRACTOR = "a policy defined in a note needs a distractor: {phrase, value} of a rival policy"


def _policy_errors(
    file: str,
    facts: Facts,
    targets: list[ResolvedTarget],
    carried_key: str,
    carried_value: Any,
    carried: ResolvedTarget,
) -> list[SourceError]:
    """Policy facts the author would misread: a meaning that is about another parameter than the one carried,
    and a carried value already stated by a name the Derive prompt says (the leak gate masks those names)."""
    errors = []
    hidden = value_text(carried_value)
    meaning = facts.policy.meaning
    if not states_value(meaning, hidden, any_case=True):
        for target in [carried, *(t for t in targets if t is not carried)]:
            other = next(
                (
                    (p["paramName"], v)
                    for p in target.widget.params
                    if p.get("paramName") != carried_key
                    for v in [*option_values(p), target.params.get(cast(str, p.get("paramName")))]
                    if isinstance(v, str) and re.search(r"[A-Za-z]", v) and states_value(meaning, v)
                ),
                None,
            )
            if other is not None:
                errors.append(
                    SourceError(
                        file,
                        "facts.policy.carries",
                        f"the policy carries '{carried_key}' "
                        f"({hidden!r}) but its meaning names {other[1]!r}, a value of '{other[0]}'; "
                        f"carry '{other[0]}', or say the {carried_key} in the meaning",
                    )
                )
                break
    for key, name in (("facts.dashboard", facts.dashboard), ("facts.note", facts.note)):
        if name and states_value(name, hidden):
            errors.append(
                SourceError(
                    file,
                    key,
                    f"'{name}' states {hidden!r}, the value the policy carries, which "
                    "the Derive level must not say; rename it",
                )
            )
    return errors


def policy_line(phrase: str, label: str, value: Any) -> str:
    """How a note defines a policy: the same sentence shape the world's glossaries use."""
    return f"{phrase[:1].upper()}{phrase[1:]} sets the {label} to {value_text(value)}."


def policy_note_text(story: Story, label: str, value: Any) -> str:
    """The text of the note that defines a story's policy next to its distractor (in phrase order, so the
    story's own rule is not always first)."""
    policy = story.facts.policy
    if policy.distractor is None:
        raise SourceError(story.file, "facts.policy.distractor", NOTE_NEEDS_DISTRACTOR)
    lines = sorted(
        [(policy.phrase, value), (policy.distractor.phrase, policy.distractor.value)],
        key=lambda p: p[0].casefold().removeprefix("the "),
    )
    return "\n".join(policy_line(p, label, v) for p, v in lines)


# The rules a policy note the pipeline writes defines (every option of the parameter when it declares fewer).
# Derive asks for two of them (the story's rule and the rival's view): with only those two in the note, an
# agent that takes the note's first option for the first view and its second for the other is right whenever
# the order happens to match, half the time; among k drawn-order rules an ordered pair is right once in k(k-1).
NOTE_RULES = 4


def ruled_note(world: World, story: Story, param: dict[str, Any], rules: list[tuple[str, Any]]) -> str:
    """A policy note defining `rules` (phrase, value) and, up to NOTE_RULES, further rules setting the
    parameter's other options (coined under a qualifier on the story phrase's noun that names no option and
    shares no word with the rules already there), in an order drawn by the story — so that where a rule stands
    in the note says nothing of which one the request asks for. The agents read a rule by its phrase; the
    further ones are never graded.

    A parameter with too few options to fill the note gets further rules on the options already there, the
    least set first (so no value is the note's odd one out, which a reader of the rarest or the commonest
    option would take). The story's rule stands on an inner line drawn by the story (a reader of the first or
    the last mention, the source and tail skimmers, would take it at an end; the seeded board rotates the note
    further where a shortcut still passes), and on the task where it stands at a reader's fixed line, the
    counterfactual copy moves it to another line (`certify.counterfactual.moved_rule`), so a reader of a fixed
    line is wrong in one of the two copies."""
    from certify import load_lexicon, phrase_pattern, reads_as_policy

    label = param_label(param, str(param.get("paramName") or ""))
    out = list(rules)
    noun = rules[0][0].split()[-1]
    lexicon = load_lexicon(world.path)
    taken = {w for p, v in rules for w in words(p) | words(value_text(v))}
    values = [v for v in option_values(param) if all(str(v) != str(r) for _, r in rules)]
    qualifiers = [*RIVAL_QUALIFIERS, *OWN_QUALIFIERS]
    start = sum(map(ord, story.slug))
    options = [v for v in option_values(param) if any(str(v) == str(r) for _, r in rules)]
    for i in range(len(values) + NOTE_RULES):  # every other option first, then repeats of those defined
        if len(out) >= NOTE_RULES:
            break
        if i < len(values):
            value = values[(start + i) % len(values)]
        elif options:
            # too few options left: the least set of those already defined (the story's own last on a tie)
            count = {str(o): sum(str(r) == str(o) for _, r in out) for o in options}
            value = min(options, key=lambda o: (count[str(o)], str(o) == str(rules[0][1])))
        else:
            break
        for j in range(len(qualifiers)):
            qualifier = qualifiers[(start + j) % len(qualifiers)]
            phrase = f"the {qualifier} {noun}"
            if (
                set(words(qualifier)) & taken
                or any(phrase_pattern(phrase).search(p) or phrase_pattern(p).search(phrase) for p, _ in out)
                or not reads_as_policy(phrase)
                or _gives_away(phrase, param, lexicon)
            ):
                continue
            out.append((phrase, value))
            taken |= set(words(qualifier))
            break

    def drawn(rule: tuple[str, Any]) -> str:
        return hashlib.sha256(f"{story.slug}|{rule[0]}".encode()).hexdigest()

    rest = sorted(out[1:], key=drawn)
    at = 1 + int(drawn(out[0]), 16) % (len(rest) - 1) if len(rest) >= 2 else int(drawn(out[0]), 16) % 2
    ordered = [*rest[:at], out[0], *rest[at:]]
    return "\n".join(policy_line(p, label, v) for p, v in ordered)


# How a rival rule is told apart from the story's own when the story names none (the source benchmark's format
# gives a policy as {phrase, carries, meaning} only): a qualifier on the same policy noun.
RIVAL_QUALIFIERS = ("interim", "legacy", "fallback", "provisional", "superseded", "trial")


def _rival_value(param: dict[str, Any], carried: Any, avoid: set[str], draw: str = "") -> Any | None:
    """Another declared option of the carried parameter for the rival rule: not the carried value, not the
    parameter's default when another option exists (a rival set to the default would be right for an agent that
    ignores both rules), and none of the story's other stated values. With `draw` (a story's slug) the option is
    drawn among those by a hash of it, not the first: Derive's second view takes it, and a rival always first in
    the option list would be a place a fixed guess learns."""
    options = [v for v in option_values(param) if str(v) != str(carried)]
    if not options:
        return None
    preferred = [v for v in options if str(v) != str(param.get("value")) and str(v) not in avoid] or options
    if not draw:
        return preferred[0]
    return preferred[int(hashlib.sha256(draw.encode()).hexdigest()[:8], 16) % len(preferred)]


# The names the pipeline coins for a source-format rule whose phrase names its value: qualifiers that say nothing
# of any option, as plausible for the right rule as RIVAL_QUALIFIERS are for the rival.
OWN_QUALIFIERS = ("standing", "house", "desk", "current", "agreed", "working")


def _gives_away(text: str, param: dict[str, Any], lexicon: Any, only: Any = None) -> bool:
    """Whether `text` gives away an option of `param` (`only` that one, when given): a word, a stem or a
    lexicon synonym of its value or of the label its option shows — the battery's phrase guesser would take
    that option without reading."""
    from certify import giveaways
    from simulator import param_options

    for option in param_options(param):
        if only is not None and str(option.value) != str(only):
            continue
        shown = option.label if option.label and option.label != str(option.value) else None
        if giveaways(text, value_text(option.value), shown, lexicon):
            return True
    return False


def value_free_phrase(world: World, story: Story, param: dict[str, Any], carried: Any) -> str:
    """The phrase a source-format policy ({phrase, carries, meaning}, defined by the note the pipeline plants)
    is said and defined by. The template's wording is the user's and stays when it names no option of the
    carried parameter; when it does ("the same-day fails policy" for 1D), the words that give an option away
    are left out ("the fails policy"), and when nothing telling is left the rule gets a coined, value-free name
    ("the standing policy") — the note defines that name, so the level stays derivable and the phrase guesser
    has nothing to go on."""
    from certify import load_lexicon, reads_as_policy

    lexicon = load_lexicon(world.path)
    phrase = story.facts.policy.phrase
    if not _gives_away(phrase, param, lexicon, only=carried):
        return phrase
    tokens = re.sub(r"^(?:the|a|an)\s+", "", phrase.strip(), flags=re.I).split()
    noun = tokens[-1]
    kept = [t for t in tokens[:-1] if not _gives_away(t, param, lexicon)]
    trimmed = " ".join(["the", *kept, noun])
    if kept and reads_as_policy(trimmed) and not _gives_away(trimmed, param, lexicon):
        return trimmed
    start = sum(map(ord, story.slug)) % len(OWN_QUALIFIERS)
    for i in range(len(OWN_QUALIFIERS)):
        coined = f"the {OWN_QUALIFIERS[(start + i) % len(OWN_QUALIFIERS)]} {noun}"
        if reads_as_policy(coined) and not _gives_away(coined, param, lexicon):
            return coined
    return phrase


def _rival_phrase(story: Story, hidden: str, rival: Any, phrase: str | None = None) -> str:
    """The rival rule's phrase: the story phrase's policy noun under a qualifier, sharing no word with the
    story's phrase or either value (a reader tells the two rules apart by the qualifier alone)."""
    phrase = phrase or story.facts.policy.phrase
    noun = phrase.split()[-1]
    taken = set(words(phrase)) | set(words(hidden)) | set(words(value_text(rival)))
    start = sum(map(ord, story.slug)) % len(RIVAL_QUALIFIERS)
    for i in range(len(RIVAL_QUALIFIERS)):
        qualifier = RIVAL_QUALIFIERS[(start + i) % len(RIVAL_QUALIFIERS)]
        if not set(words(qualifier)) & taken:
            return f"the {qualifier} {noun}"
    return f"the other {noun}"


def _planted_policy_note(
    world: World, story: Story, param: dict[str, Any], carried_value: Any
) -> tuple[PolicyDocument | None, list[SourceError]]:
    """A policy given only by phrase, carried parameter and meaning (no resource, no note) is defined nowhere
    an agent can read, so the Derive level would be unsolvable. Its definition is planted where an agent reads
    it: a note on the Derive board that defines the phrase with the carried value beside a rival rule setting the
    same parameter to another option — the same document a story that names `policy.note` gets."""
    hidden = value_text(carried_value)
    others = {value_text(v) for t in story.facts.targets for v in (t.params or {}).values()}
    others |= {value_text(v) for v in story.facts.params.values()}
    rival = _rival_value(param, carried_value, others, draw=story.slug)
    if rival is None:
        return None, [
            SourceError(
                story.file,
                "facts.policy",
                f"'{param.get('paramName')}' declares no option besides {hidden!r}, so no rival rule can "
                "stand beside the policy; carry a parameter with options",
            )
        ]
    name = f"{story.facts.dashboard} Rulebook"
    said = value_free_phrase(world, story, param, carried_value)
    phrase = _rival_phrase(story, hidden, rival, said)
    text = ruled_note(world, story, param, [(said, carried_value), (phrase, rival)])
    coined = said if said != story.facts.policy.phrase else None
    return PolicyDocument("note", name, name, text, phrase, coined, rival=(phrase, rival)), []


def _line_of(text: str, start: int) -> tuple[int, int]:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", start)
    return a, (len(text) if b < 0 else b)


def _resolve_policy_document(
    world: World, story: Story, param: dict[str, Any], carried_value: Any
) -> tuple[PolicyDocument | None, list[SourceError]]:
    """The document that defines the story's policy: the phrase is defined there with the carried value, and
    another line of the same document sets the same parameter to a different value (the distractor)."""
    from certify import phrase_pattern

    policy = story.facts.policy
    file = story.file
    hidden = value_text(carried_value)
    if policy.note is not None:
        key = "facts.policy.note"
        errors = []
        if states_value(policy.note, hidden):
            errors.append(
                SourceError(
                    file,
                    key,
                    f"the note name '{policy.note}' states {hidden!r}, the value the "
                    "policy carries; rename it",
                )
            )
        rival = policy.distractor
        if rival is None:
            return None, [*errors, SourceError(file, "facts.policy.distractor", NOTE_NEEDS_DISTRACTOR)]
        if not value_allowed(param, rival.value):
            errors.append(
                SourceError(
                    file,
                    "facts.policy.distractor.value",
                    f"{rival.value!r} is not among the options{_options_hint(param, rival.value)}",
                )
            )
        elif str(rival.value) == str(carried_value):
            errors.append(
                SourceError(
                    file,
                    "facts.policy.distractor.value",
                    "equals the value the policy carries; a distractor sets another value",
                )
            )
        if errors:
            return None, errors
        label = param_label(param, str(param.get("paramName") or ""))
        text = policy_note_text(story, label, carried_value)
        rules = [(policy.phrase, carried_value), (rival.phrase, rival.value)]
        second: tuple[str, Any] | None = (rival.phrase, rival.value)
        if str(rival.value) == str(param.get("value")):
            # the story's rival sits on the default, which a view added without that parameter shows unread:
            # Derive's second view takes a rule the pipeline coins beside it, in the same note
            second = _coined_rival(world, story, text, param, carried_value, {str(rival.value)})
            if second is not None:
                rules.append(second)
        text = ruled_note(world, story, param, rules)
        return PolicyDocument("note", policy.note, policy.note, text, rival.phrase, rival=second), []
    if policy.resource is None:
        return _planted_policy_note(world, story, param, carried_value)
    key = "facts.policy.resource"
    resource = _find_resource(world, policy.resource)
    if resource is None:
        return None, [
            SourceError(
                file,
                key,
                f"no workspace resource matches '{policy.resource}'"
                f"{did_you_mean(policy.resource, [*world.resources])}",
            )
        ]
    text = resource.text
    match = phrase_pattern(policy.phrase).search(text)
    if match is None:
        return None, [SourceError(file, key, f"'{policy.phrase}' is not defined in {resource.uri}")]
    found = policy_value(text, policy.phrase, param, [])
    if found is None or str(found.value) != str(carried_value):
        said = "no value of" if found is None else f"{found.value!r} for"
        return None, [
            SourceError(
                file,
                key,
                f"{resource.uri} gives {said} '{param.get('paramName')}' under "
                f"'{policy.phrase}', but the story carries {hidden!r}",
            )
        ]
    own = _line_of(text, match.start())
    rivals = []
    ruled: list[tuple[str, Any]] = []
    for mention in option_mentions(text, param, as_written=True):
        line = _line_of(text, mention.start)
        if line != own and str(mention.value) != str(carried_value):
            rivals.append(text[line[0] : line[1]].strip())
            ruled.append((text[line[0] : line[1]], mention.value))
    if not rivals:
        return None, [
            SourceError(
                file,
                key,
                f"{resource.uri} defines '{policy.phrase}' with no rival policy setting "
                f"'{param.get('paramName')}' to another value; the Derive level would need no "
                "reading",
            )
        ]
    return (
        PolicyDocument(
            "resource",
            resource.uri,
            resource.title or resource.uri,
            text,
            rivals[0],
            **_rival_of_document(world, story, text, param, ruled, carried_value),
        ),
        [],
    )


def _rival_of_document(
    world: World, story: Story, text: str, param: dict[str, Any], ruled: list[tuple[str, Any]], carried: Any
) -> dict[str, Any]:
    """The rival rule Derive's second view takes, for a policy a resource defines: one of the resource's own
    rules when one names no option; else a rule the pipeline coins (a qualifier on the story phrase's noun,
    set to another option, like a source-format policy's rival) and defines in a note on the Derive board."""
    policy = story.facts.policy
    found = _document_rival(world, text, param, ruled, policy.phrase)
    if found is not None:
        return {"rival": found}
    coined = _coined_rival(world, story, text, param, carried, set())
    if coined is None:
        return {}
    label = param_label(param, str(param.get("paramName") or ""))
    note = (f"{story.facts.dashboard} Rulebook", policy_line(coined[0], label, coined[1]))
    return {"rival": coined, "rival_note": note}


def _coined_rival(
    world: World, story: Story, text: str, param: dict[str, Any], carried: Any, avoid: set[str]
) -> tuple[str, Any] | None:
    """A rival rule the pipeline coins, as (phrase, value): another option than the carried one, the default,
    the story's other values and `avoid`, under a qualifier on the story phrase's noun that `text` (where the
    rules are defined) does not already use and that names no option."""
    from certify import load_lexicon, phrase_pattern

    others = {value_text(v) for t in story.facts.targets for v in (t.params or {}).values()}
    others |= {value_text(v) for v in story.facts.params.values()} | avoid
    value = _rival_value(param, carried, others, draw=story.slug)
    if value is None or str(value) in avoid:
        return None
    phrase = _rival_phrase(story, value_text(carried), value)
    if phrase_pattern(phrase).search(text) or _gives_away(phrase, param, load_lexicon(world.path)):
        return None
    return phrase, value


def _document_rival(
    world: World, text: str, param: dict[str, Any], ruled: list[tuple[str, Any]], own: str
) -> tuple[str, Any] | None:
    """The rival rule of a defining document the Derive level asks for too: a line that names a policy (its bold
    phrase, else the words before "sets") which the document defines with that line's option — read the way
    the agents read it — whose phrase gives no option of the parameter away; one not set to the parameter's
    default first (a view left on its default would be right for an agent that read nothing)."""
    from certify import load_lexicon, phrase_pattern, reads_as_policy

    lexicon = load_lexicon(world.path)
    named: list[tuple[str, Any]] = []
    for line, value in ruled:
        bold = re.search(r"\*\*([^*]+)\*\*", line)
        head = bold.group(1) if bold else re.split(r"\s+sets\b", line.strip(" -*"), maxsplit=1)[0]
        phrase = re.sub(r"^(?:the|a|an)\s+", "", head.strip(" .:"), flags=re.I)
        phrase = f"the {phrase[:1].lower()}{phrase[1:]}" if phrase else ""
        if phrase and reads_as_policy(phrase) and phrase_pattern(phrase).search(text) is not None:
            named.append((phrase, value))
    others = [own, *(p for p, _ in named)]
    found: list[tuple[str, Any]] = []
    for phrase, value in named:
        read = policy_value(text, phrase, param, others)
        if read is None or str(read.value) != str(value) or _gives_away(phrase, param, lexicon, only=value):
            continue
        if all(str(v) != str(value) for _, v in found):
            found.append((phrase, value))
    # never one set to the parameter's default: a second view added without that parameter would be right; among
    # the others one drawn by the document's text and the carried option, so no place in the list is favoured
    found = [r for r in found if str(r[1]) != str(param.get("value"))]
    if not found:
        return None
    return found[int(hashlib.sha256(f"{own}|{text}".encode()).hexdigest()[:8], 16) % len(found)]
