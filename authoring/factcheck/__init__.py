"""Validating a story's facts against the world before any authoring, and resolving them.

A fact that does not hold (a widget that is not in the named app, a value outside the declared options, a
governance source that does not exist, a policy carrying a key that is not a parameter) stops authoring for that
story with an error naming the file and the key: authoring on top of it would only produce tasks that cannot
certify. So does a fact the author would misread (a policy whose meaning is about another parameter, a carried
value already stated by the dashboard's or the note's name, a recorded column the served rows lack, two targets
of one widget that nothing tells apart): it would give tasks that certify as something the story did not mean,
or that never certify.

One concept per module, imported in one direction: `model` (the records) and `said` (how the requests say a
value, a label, the purpose) below all; `targets`, `governance`, `reads`, `findability`, `pointer` and
`giveaway` on them; `policy` and `ground` on `governance`; `story` (`resolve`) on everything. This module is
the package's front door: it re-exports what the rest of the project imports.
"""

from .findability import find_prompt_errors, source_format
from .governance import STEP
from .model import FactErrors, FindPointer, ResolvedStory, ResolvedTarget
from .pointer import (
    POINTER_LABELS,
    POINTER_NOTES,
    find_pointer,
    find_pointers,
    find_said,
    lexical_pull,
    said_exposure_warnings,
)
from .policy import OWN_QUALIFIERS, _gives_away
from .said import owned_sentences, param_label, purpose, rival_said, second_view, value_text
from .story import resolve
from .targets import between, fitting_listed, listed_fits
from .working import execute_stories

__all__ = [
    "OWN_QUALIFIERS",
    "POINTER_LABELS",
    "POINTER_NOTES",
    "STEP",
    "FactErrors",
    "FindPointer",
    "ResolvedStory",
    "ResolvedTarget",
    "_gives_away",
    "between",
    "execute_stories",
    "find_pointer",
    "find_pointers",
    "find_prompt_errors",
    "find_said",
    "fitting_listed",
    "lexical_pull",
    "listed_fits",
    "owned_sentences",
    "param_label",
    "purpose",
    "resolve",
    "rival_said",
    "said_exposure_warnings",
    "second_view",
    "source_format",
    "value_text",
]
