"""`taskforge new`: a persona or story file to fill in, with a comment on every field.

Every decision is left as a FILL-ME placeholder, which the loader refuses by name, so a half-filled scaffold
can never be authored by accident; once they are filled the file passes the facts check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment

from .sources import SourceError, check_name
from .templating import environment

TEMPLATES = Path(__file__).parent / "templates" / "scaffold"


def _env() -> Environment:
    env = environment(TEMPLATES, keep_trailing_newline=True)
    env.filters["yaml"] = lambda value: json.dumps(str(value), ensure_ascii=False)
    return env


def _title(slug: str) -> str:
    return slug.replace("_", " ").replace("-", " ").capitalize()


def persona_text(slug: str) -> str:
    return _env().get_template("persona.md.j2").render(slug=slug, title=_title(slug))


def story_text(persona: str, story: str, widget: dict[str, Any] | None = None) -> str:
    """`widget` is worldinfo.widget_info(...): the target is prefilled and its parameters listed."""
    prefill = None
    if widget is not None:
        prefill = {
            "name": widget["name"],
            "app": widget["target"].get("app", "FILL-ME its app"),
            "origin": widget["origin"],
            "params": [
                {
                    "name": p["name"],
                    "default": json.dumps(p["default"], ensure_ascii=False),
                    "options": p["options"],
                }
                for p in widget["params"]
            ],
        }
    return (
        _env()
        .get_template("story.md.j2")
        .render(persona=persona, story=story, title=_title(story), widget=prefill)
    )


def persona_path(root: Path, slug: str) -> Path:
    return root / "personas" / f"{check_name(slug, 'persona', 'persona')}.md"


def story_path(root: Path, persona: str, story: str) -> Path:
    check_name(persona, "persona", "persona")
    return root / "stories" / persona / f"{check_name(story, 'story', 'story')}.md"


def write_new(path: Path, text: str) -> Path:
    """Create `path` with `text`; never overwrite someone's work."""
    if path.exists():
        raise SourceError(str(path), "(file)", "already exists; edit it, or pick another name")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
