"""The one jinja environment of the roles, and the roles' LLM prompts as template files beside it.

Everything the roles word goes through this environment: the rule author's phrasebook entries (strings read from
its YAML) and the prompts the LLM drivers send (the `*.md.j2` files here). StrictUndefined makes a variable a
template names but the caller did not pass an error instead of an empty string, so a renamed variable cannot
silently drop a fact from a prompt. Nothing is autoescaped: the output is prompt text, never HTML (the report has
its own escaping environment). Templates are compiled once: the same phrasebook entries and prompts are rendered
for every level and round, and compiling dominated rendering.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

from ...templating import environment

HERE = Path(__file__).parent


def article(noun: str) -> str:
    """The indefinite article a noun phrase takes."""
    return ("an " if noun[:1].lower() in "aeio" or noun[:2].lower() in ("ho", "u.") else "a ") + noun


def cap(text: str) -> str:
    """The text with its first letter upper-cased (the rest left alone, unlike str.capitalize)."""
    return text[:1].upper() + text[1:]


def sep(loop: Any) -> str:
    """The separator after a loop item in a spoken list: ", " then " and " before the last, nothing after it."""
    return ", " if loop.revindex > 2 else (" and " if loop.revindex == 2 else "")


ENV = environment(HERE, keep_trailing_newline=False)
ENV.filters["cap"] = cap
ENV.filters["a"] = article
ENV.globals["sep"] = sep


def render(template: str, **variables: Any) -> str:
    """A template given as text (a phrasebook entry), rendered."""
    return _compiled(template).render(**variables)


@lru_cache(maxsize=512)
def _compiled(template: str) -> jinja2.Template:
    return ENV.from_string(template)


def render_prompt(name: str, **variables: Any) -> str:
    """The role prompt `<name>.md.j2` of this folder, rendered."""
    return ENV.get_template(f"{name}.md.j2").render(**variables)


@lru_cache(maxsize=8)
def prompt_data(name: str) -> Any:
    """A YAML file of this folder (text the prompts quote, such as the author's level dials), read once."""
    return yaml.safe_load((HERE / name).read_text(encoding="utf-8"))
