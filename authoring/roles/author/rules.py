"""The rule author: a story's facts compiled into a level, deterministically (the embedded default, no network).

A level is written in four steps, each its own module: the board it starts from (seeding), the reference planned
against the simulator (plan, which also writes the eval block), the request (wording), and — at Find — the choice
of the contrast and draw that leave no shortcut agent passing.
"""

from __future__ import annotations

from typing import Any

from certify import LEVEL_NAMES, LEVELS, TaskMeta, parse_task, run_battery
from simulator import TOOL_NAMES

from .context import AuthorContext, Draft, story_setup
from .evalblock import record
from .level import Level
from .plan import plan
from .seeding import seed_board
from .wording import Wording, contrasts

FIND_DRAWS = 3


class RuleAuthor:
    """Deterministic compilation of facts into levels (the embedded default)."""

    name = "rules"

    def draft(
        self, ctx: AuthorContext, level: int, feedback: list[str], history: list[dict[str, Any]]
    ) -> Draft:
        history.append({"level": level, "feedback": list(feedback)})
        return Draft(compile_level(ctx, level))


def compile_level(ctx: AuthorContext, number: int) -> dict[str, Any]:
    """The task file of level `number` of the context's story."""
    level = Level(ctx, number)
    board = seed_board(level)
    tab_id = ctx.story.tab_id
    setup = story_setup(
        ctx,
        [w.wire(tab_id) for w in board.widgets],
        [n.wire(tab_id) for n in board.notes],
        allowed_tools=TOOL_NAMES,
    )
    planned = plan(level, board, setup)
    difficulty = LEVELS[number]
    task: dict[str, Any] = {
        "id": f"{level.slug}_level{number}",
        "difficulty": difficulty,
        "prompt": "",
        "setup": setup,
        "eval": planned.eval,
        "meta": record(
            TaskMeta,
            "meta",
            persona=ctx.persona.slug,
            story=level.slug,
            level=number,
            level_name=LEVEL_NAMES[difficulty],
            hidden=level.hidden(),
            authored_by="rules",
        ),
    }
    wording = Wording(level, board, planned)
    # At Find, the description alone comes first (the shortest request); when a shortcut agent passes it, a
    # contrast follows the description — a sibling a word matcher takes for the target; of the candidates (each
    # in a few wordings: the words around the description move a word matcher too), the first that leaves no
    # shortcut agent passing is kept (the gates would refuse the others).
    trials = (
        [(c, d) for c in ["", *contrasts(level, board)] for d in range(FIND_DRAWS)]
        if number == 1
        else [("", 0)]
    )
    for contrast, draw in trials:
        task["prompt"] = wording.phrase(task, contrast, draw)
        if number != 1 or not any(
            r.passed for r in run_battery(ctx.world, parse_task(task, f"{task['id']}.json", ctx.defaults))
        ):
            break
    return task
