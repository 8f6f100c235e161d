"""The grader's own judge: the embedded rubric's verdict on a graded answer when no other judge was asked.

Kept apart from `grading` (which grades through the grader) so that the grader can ask it without importing
itself back."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from ..episode import ByObject
from .case import DataBlock, _content_key, build_case, data_blocks
from .registry import default_judge
from .verdict import Judgment, Verdict

if TYPE_CHECKING:
    from ..grader.core import GradeContext


def embedded_judgment(ctx: GradeContext) -> Judgment:
    """The rubric's verdict on the answer in `ctx`."""
    case = build_case(ctx.workspace.world, ctx.task, ctx.events, ctx.final_answer)
    return default_judge().judge_now(case)


# The rubric's verdicts by what it reads of a case: the world and the task (the ask, the skill, the key points,
# the reference and the data it makes available), the answer, and the content of the data the agent retrieved.
# The agent's calls are shown to a model judge but never read by the rubric, so runs that retrieved the same rows
# and answered the same (a task's variants, mutants and shortcut agents along its calls) share one verdict;
# building the case and assessing it cost a judged task's grades a fifth of their time.
_VERDICTS: OrderedDict[tuple[object, ...], tuple[str, Verdict, str]] = OrderedDict()
_VERDICTS_SIZE = 2048
_LOCK = threading.Lock()
# A retrieved block's content as text, by the block (`ByObject`: a block is never changed once cut).
_BLOCK_TEXT = ByObject(1024)


def _block_text(block: DataBlock) -> str:
    return block.model_dump_json()


def embedded_verdict(ctx: GradeContext) -> tuple[str, Verdict, str]:
    """(the judge's identity, its verdict, its summary) on the answer in `ctx`: what the grader reports of
    `embedded_judgment`, without digesting the case for a record nobody keeps."""
    judge = default_judge()
    world = ctx.workspace.world
    retrieved = tuple(_BLOCK_TEXT.get(b, _block_text) for b in data_blocks(ctx.events))
    key = (judge.identity, world.fingerprint, _content_key(ctx.task, "whole"), ctx.final_answer, retrieved)
    with _LOCK:
        held = _VERDICTS.get(key)
    if held is not None:
        return held
    case = build_case(world, ctx.task, ctx.events, ctx.final_answer)
    verdict, _, summary = judge.assess(case)
    out = (judge.identity, verdict, summary)
    with _LOCK:
        _VERDICTS[key] = out
        if len(_VERDICTS) > _VERDICTS_SIZE:
            _VERDICTS.popitem(last=False)
    return out
