"""Checks that close shortcuts: what must not be on the judged dashboard or in what the agent wrote.

A required widget or note says what must be there; it cannot tell a solver from an agent that hedges by placing
every candidate or writing every candidate value. These checks can: a cap on widgets no requirement accounts for
(the over-builder, the enumerator, a repair done by adding a second copy next to the stale one), and values a note
or an answer must not contain (the other options' figures, a decoy policy's value, another period).
"""

from __future__ import annotations

from collections.abc import Iterable

from .core import CheckResult, GradeContext, check
from .match import json_blob, numbers_in, text_contains
from .state_checks import generated_blob, generated_matches, widget_matches


@check("unrequested_widget", when=("max_unrequested_widgets",))
def unrequested_widgets(ctx: GradeContext) -> Iterable[CheckResult]:
    limit = ctx.eval.max_unrequested_widgets
    if limit is None:
        return
    extra = []
    for w in ctx.judged.widgets:
        if w.generated:
            accounted = any(
                generated_matches(w, req, ctx.eval) for req in ctx.eval.required_generated_widgets
            )
        else:
            accounted = any(widget_matches(w, req) for req in ctx.eval.required_widgets)
        if not accounted:
            extra.append(
                f"{w.uuid} {w.name or w.widget_id} {json_blob(w.data_args) if not w.generated else ''}".strip()
            )
    yield CheckResult(
        "unrequested_widget",
        len(extra) <= limit,
        f"at most {limit} widget(s) on '{ctx.judged.name}' that nothing asked for",
        f"{len(extra)}: {'; '.join(extra[:4])}" if extra else "none",
    )


def _present(blob: str, values: list[str]) -> list[str]:
    nums = numbers_in(blob)
    return [v for v in values if text_contains(blob, v, blob_numbers=nums)]


@check("forbidden_value", when=("required_generated_widgets.must_not_contain", "answer_must_not_contain"))
def forbidden_values(ctx: GradeContext) -> Iterable[CheckResult]:
    initial = ctx.initial_uuids(ctx.judged)
    for req in ctx.eval.required_generated_widgets:
        if not req.must_not_contain:
            continue
        found: list[str] = []
        for w in ctx.judged.widgets:
            if w.uuid not in initial and generated_matches(w, req, ctx.eval):
                found += [v for v in _present(generated_blob(w), req.must_not_contain) if v not in found]
        yield CheckResult(
            "forbidden_value",
            not found,
            f"no {req.widget_type} named like '{req.name_contains or ''}' states a distractor "
            f"({len(req.must_not_contain)} listed)",
            f"states {found[:5]}" if found else "none stated",
        )
    if ctx.eval.answer_must_not_contain:
        found = _present(ctx.final_answer or "", ctx.eval.answer_must_not_contain)
        yield CheckResult(
            "forbidden_value",
            not found,
            f"the answer states no distractor ({len(ctx.eval.answer_must_not_contain)} listed)",
            f"states {found[:5]}" if found else "none stated",
            "answer",
        )
