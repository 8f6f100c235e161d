"""Platform skills, workspace resources and workspace prompts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from ._common import SpecError, dump_json


def _planted(entry: Mapping[str, Any], text: str, where: str) -> None:
    for item in entry.get("planted", []):
        phrase = item["phrase"] if isinstance(item, dict) else item
        if phrase not in text:
            raise SpecError(f"{where}: planted phrase {phrase!r} does not occur in its text")


def skill_files(skills: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    files = {}
    for skill in skills:
        steps = skill["steps"]
        if len(steps) < 5:
            raise SpecError(f"skill {skill['slug']}: a workflow has at least five steps")
        content = skill["intro"] + "\n" + "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
        _planted(skill, content, f"skill {skill['slug']}")
        last = steps[-1]
        if not any(p["phrase"] in last for p in skill["planted"]):
            raise SpecError(f"skill {skill['slug']}: the last step must carry a planted phrase")
        doc = {
            "slug": skill["slug"],
            "name": skill["name"],
            "description": skill["description"],
            "content": content,
            "planted": [{"phrase": p["phrase"], "where": p["where"]} for p in skill["planted"]],
        }
        files[f"skills/{skill['slug'].replace('-', '_')}.json"] = dump_json(doc)
    return files


def _front_matter(fields: Mapping[str, Any], planted: Sequence[str]) -> str:
    head = yaml.safe_dump(dict(fields), sort_keys=False, allow_unicode=True, width=1000).rstrip("\n")
    if planted:
        head += "\nplanted: " + json.dumps(list(planted), ensure_ascii=False)
    return f"---\n{head}\n---\n"


def resource_files(resources: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    files = {}
    for res in resources:
        _planted(res, res["body"], f"resource {res['uri']}")
        text = (
            _front_matter(
                {"uri": res["uri"], "title": res["title"], "description": res["description"]},
                res.get("planted", []),
            )
            + res["body"].rstrip("\n")
            + "\n"
        )
        files[f"resources/{res['file']}"] = text.encode("utf-8")
    return files


def prompt_files(prompts: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    files = {}
    for prompt in prompts:
        _planted(prompt, prompt["body"], f"prompt {prompt['name']}")
        text = (
            _front_matter(
                {"name": prompt["name"], "description": prompt["description"]}, prompt.get("planted", [])
            )
            + prompt["body"].rstrip("\n")
            + "\n"
        )
        files[f"prompts/{prompt['name']}.md"] = text.encode("utf-8")
    return files


def planted_phrases(
    skills: Sequence[Mapping[str, Any]],
    resources: Sequence[Mapping[str, Any]],
    prompts: Sequence[Mapping[str, Any]],
) -> list[str]:
    phrases = [p["phrase"] for s in skills for p in s["planted"]]
    phrases += [p for r in list(resources) + list(prompts) for p in r.get("planted", [])]
    return phrases
