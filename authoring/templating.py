"""How authoring builds a jinja environment: templates from one folder, StrictUndefined (a variable a template
names but the caller did not pass is an error, not an empty string), and escaping only for HTML.

The roles' prompts (`roles/prompts`), the run report (`report.py`, HTML) and the scaffold's source files
(`scaffold.py`) each keep their own environment, since their filters and whitespace rules differ; this is what
they share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2


def environment(folder: Path, *, html: bool = False, **layout: Any) -> jinja2.Environment:
    """An environment over the templates of `folder`; `layout` takes jinja's whitespace options."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        autoescape=html,
        **layout,
    )
