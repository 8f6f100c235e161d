"""Platform skills, workspace resources (guides, handbooks, policy glossaries, the index) and workspace prompts.

Planted phrases are the values a task can ground in: each occurs in its own document and nowhere else in the
world, and carries a `where` that says how a request can point at it without quoting it. A policy glossary
defines house rules ("the pulled-orders rule sets the status to Cancelled") and every rule sits next to at least
one rule that sets the same parameter to another value, so a rule can only be resolved by reading its own line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from ._common import SpecError, check_keys, dump_json

_GLOSSARY_KEYS = {"file", "uri", "title", "description", "intro", "rules"}
_RULE_KEYS = {"phrase", "param", "value", "gloss"}


def _phrase(item: Any) -> str:
    return item["phrase"] if isinstance(item, dict) else item


def _planted(entry: Mapping[str, Any], text: str, where: str) -> None:
    for item in entry.get("planted", []):
        phrase = _phrase(item)
        if phrase not in text:
            raise SpecError(f"{where}: planted phrase {phrase!r} does not occur in its text")
        if isinstance(item, dict) and not item.get("where"):
            raise SpecError(f"{where}: planted phrase {phrase!r} needs a 'where' saying how to point at it")


def skill_files(skills: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    files = {}
    for skill in skills:
        steps = skill["steps"]
        if len(steps) < 5:
            raise SpecError(f"skill {skill['slug']}: a workflow has at least five steps")
        if not skill.get("planted"):
            raise SpecError(f"skill {skill['slug']}: a skill carries at least one planted phrase")
        content = skill["intro"] + "\n" + "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
        if skill.get("outro"):
            # a closing line after the workflow: a house note naming another option (or tab title) than the
            # steps' facts, so that the document neither starts nor ends on a fact's value (a skimmer reading
            # only its first or last mention would otherwise take it)
            content += "\n\n" + skill["outro"]
        _planted(skill, content, f"skill {skill['slug']}")
        doc = {
            "slug": skill["slug"],
            "name": skill["name"],
            "description": skill["description"],
            "content": content,
            "planted": [{"phrase": p["phrase"], "where": p["where"]} for p in skill["planted"]],
        }
        files[f"skills/{skill['slug'].replace('-', '_')}.json"] = dump_json(doc)
    return files


def _front_matter(fields: Mapping[str, Any], planted: Sequence[Any]) -> str:
    head = yaml.safe_dump(dict(fields), sort_keys=False, allow_unicode=True, width=1000).rstrip("\n")
    if planted:
        head += "\nplanted: " + json.dumps(list(planted), ensure_ascii=False)
    return f"---\n{head}\n---\n"


def _document(fields: Mapping[str, Any], planted: Sequence[Any], body: str) -> bytes:
    return (_front_matter(fields, planted) + body.rstrip("\n") + "\n").encode("utf-8")


def glossary_resources(
    glossaries: Sequence[Mapping[str, Any]], params: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Policy glossaries as ordinary resource entries: one line per rule, "<Phrase> sets the <label> to <value>:
    <gloss>." A rule's parameter is a key of the params library and its value one of that parameter's options;
    every rule has a neighbour in its glossary that sets the same parameter to another value."""
    out = []
    seen: dict[str, str] = {}
    for glossary in glossaries:
        where = f"glossary {glossary.get('uri')}"
        check_keys(glossary, _GLOSSARY_KEYS, _GLOSSARY_KEYS, where)
        lines = []
        for rule in glossary["rules"]:
            check_keys(rule, _RULE_KEYS, _RULE_KEYS, f"{where}: rule {rule.get('phrase')!r}")
            phrase = rule["phrase"]
            if phrase.lower() in seen:
                raise SpecError(f"{where}: rule {phrase!r} is already defined in {seen[phrase.lower()]}")
            seen[phrase.lower()] = glossary["uri"]
            param = params.get(rule["param"])
            if param is None:
                raise SpecError(f"{where}: rule {phrase!r}: unknown param {rule['param']!r}")
            if rule["value"] not in param.values:
                raise SpecError(
                    f"{where}: rule {phrase!r}: {rule['value']!r} is not an option of {rule['param']}"
                )
            rivals = [
                r for r in glossary["rules"] if r["param"] == rule["param"] and r["value"] != rule["value"]
            ]
            if not rivals:
                raise SpecError(
                    f"{where}: rule {phrase!r} has no neighbour setting {rule['param']} to another value"
                )
            lines.append(
                f"- **{phrase[:1].upper()}{phrase[1:]}** sets the {param.label.lower()} to {rule['value']}: "
                f"{rule['gloss']}"
            )
        names = ", ".join(r["phrase"] for r in glossary["rules"])
        out.append(
            {
                "file": glossary["file"],
                "uri": glossary["uri"],
                "title": glossary["title"],
                "description": f"{glossary['description']} Defines {names}.",
                "body": f"# {glossary['title']}\n\n{glossary['intro']}\n\n" + "\n".join(lines) + "\n",
            }
        )
    return out


def index_body(index: Mapping[str, Any], resources: Sequence[Mapping[str, Any]]) -> str:
    """The index resource: its own text, then one row per other resource (title, what it covers, URI), so an
    agent can pick a document by what it is about before reading it."""
    rows = [
        f"| {r['title']} | {r['description']} | {r['uri']} |" for r in resources if r["uri"] != index["uri"]
    ]
    table = "| Resource | What it covers | URI |\n|---|---|---|\n" + "\n".join(rows)
    return index["body"].rstrip("\n") + "\n\n" + table + "\n"


def resource_files(resources: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    files = {}
    for res in resources:
        body = index_body(res, resources) if res.get("index") else res["body"]
        _planted(res, body, f"resource {res['uri']}")
        fields = {"uri": res["uri"], "title": res["title"], "description": res["description"]}
        files[f"resources/{res['file']}"] = _document(fields, res.get("planted", []), body)
    return files


def prompt_files(prompts: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    files = {}
    for prompt in prompts:
        _planted(prompt, prompt["body"], f"prompt {prompt['name']}")
        fields = {"name": prompt["name"], "description": prompt["description"]}
        files[f"prompts/{prompt['name']}.md"] = _document(fields, prompt.get("planted", []), prompt["body"])
    return files


def planted_phrases(
    skills: Sequence[Mapping[str, Any]],
    resources: Sequence[Mapping[str, Any]],
    prompts: Sequence[Mapping[str, Any]],
) -> list[str]:
    phrases = [p["phrase"] for s in skills for p in s["planted"]]
    phrases += [_phrase(p) for r in list(resources) + list(prompts) for p in r.get("planted", [])]
    return phrases
