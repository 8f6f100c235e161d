"""The author role: one story's facts and its persona in, a task for one level out.

Two drivers sit behind the `AuthorDriver` protocol. The rule driver (`RuleAuthor`, the embedded default,
deterministic, no network) compiles the facts into the five levels and builds each level's reference by planning
against the simulator: it performs the reference's calls in a real episode and reads back what they return (the
rows a note must record, the id a new backend receives). The levels go deeper than their prompts: Find seeds a
look-alike a signature cannot tell from the target, Derive resolves in the document that defines the policy (a
seeded note, or a resource), Ground sets a parameter or the tab's title from a fact read in its source (followed
through a reference when the source points elsewhere) on a lived-in board with a twin to leave alone and a second
view to repair, and Compose keys the table it builds on the value Ground found. The LLM driver (`LLMAuthor`)
writes the same contract as one model session per story and hands each level in through `submit_level`, which
runs the gates the pipeline runs. Either way the gates decide, not the author.

The modules, in the order a level is written:
- `context`: the contract (AuthorContext, Draft, AuthorDriver, AuthoringError) and the story's episode setup;
- `level`: one story read at one level — what the request states, what it hides;
- `seeding`: the board the level starts from, as typed records (a Board of Seeded widgets — stale targets, a
  decoy, a twin — Furniture with its Fix, and SeededNotes);
- `plan`: the reference, performed in a planning episode, writing the eval block (`evalblock`, records checked
  against certify's task models);
- `wording` and `phrasebook` (+ phrasebook.yaml): the request, drawn from the phrasebook in the persona's voice;
- `rules`: the rule author putting those together; `llm_author`: the LLM author, its tools and their handlers.
The LLM prompts are template files in authoring/roles/prompts, rendered by the roles' one jinja environment.
GLOSSARY.md (beside this file) defines the domain words: furniture, twin, decoy, stale, carried, planted, hop,
dial, rehearse, draw-ahead.
"""

from .analysis import prompt_word_limit
from .context import (
    AuthorContext,
    AuthorDriver,
    AuthoringError,
    Draft,
    find_order,
    own_deadlines,
    persona_finds,
    story_setup,
)
from .llm_author import AUTHOR_TOOLS, TOOLS, LLMAuthor
from .phrasebook import MAX_PROMPT_WORDS
from .rules import RuleAuthor, compile_level, first_prompt, first_task, rule_drafts

__all__ = [
    "AUTHOR_TOOLS",
    "MAX_PROMPT_WORDS",
    "TOOLS",
    "AuthorContext",
    "AuthorDriver",
    "AuthoringError",
    "Draft",
    "LLMAuthor",
    "RuleAuthor",
    "compile_level",
    "find_order",
    "first_prompt",
    "first_task",
    "own_deadlines",
    "persona_finds",
    "prompt_word_limit",
    "rule_drafts",
    "story_setup",
]
