"""The authoring graph's nodes, each a function of the state (or of its `Send` payload) and the run's context,
its destinations in its return type when it routes by `Command`."""

from .calibration import calibrate
from .commit import commit, finalize
from .drafting import draft, load, revise
from .fairness import fairness
from .repair import fix, repair
from .review import review
from .validation import after_validation, gather, recertify, rehearse, validate

__all__ = [
    "after_validation",
    "calibrate",
    "commit",
    "draft",
    "fairness",
    "finalize",
    "fix",
    "gather",
    "load",
    "recertify",
    "rehearse",
    "repair",
    "review",
    "revise",
    "validate",
]
