"""`heuristic`: a deterministic, honest, non-LLM baseline.

It sees only what any agent sees — the prompt, the tool schemas and the envelopes — and works the way a
diligent keyword matcher would: take a snapshot, list the catalog of the backends the prompt names, match
widget names and parameter values the prompt states, then create, repair or read, and leave a note when one is
asked for. It reads no skills and builds no backends. It should solve most Execute tasks and few above; when it
solves a Derive or Ground task, that task probably states its hidden value (a "shortcut" finding).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..task import Task
from .base import Action, AgentSession, TaskView, Usage, register_agent

REPAIR_WORDS = re.compile(r"\b(repair|fix|correct|restore|reset|re-?point|switch)\b", re.I)
ADD_WORDS = re.compile(r"\b(add|put|bring|place(?! in\b)|pin|drop|open up|get .{0,40}? up)\b", re.I)
READ_WORDS = re.compile(r"\b(read|pull|look up|check|record|recording|as served|exactly as)\b", re.I)
NOTE_NAME = re.compile(r"((?:[A-Z][\w&/'-]*\s+){1,6}(?:Note|Memo|Record|Log))\b")
ANSWER_WORDS = re.compile(r"(\?|\b(tell me|report back|answer|what is|what are|which)\b)", re.I)
STOP = frozenset(["the", "a", "an", "and", "or", "of", "for", "to", "on", "in", "from", "with", "by", "at", "is", "are", "be", "it", "its", "this", "that", "these", "those", "set", "please", "open", "dashboard", "view", "widget", "widgets", "add", "put", "get", "up", "before", "after", "both", "each", "same", "all"])


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 2}


def _find(text: str, needle: str) -> list[int]:
    """Positions where `needle` occurs in `text` as a whole phrase (case-insensitive)."""
    if not needle:
        return []
    low, want = text.lower(), needle.lower()
    out, start = [], 0
    while (i := low.find(want, start)) >= 0:
        before = low[i - 1] if i > 0 else " "
        end = i + len(want)
        after = low[end] if end < len(low) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            out.append(i)
        start = i + 1
    return out


class HeuristicSession:
    def __init__(self, view: TaskView) -> None:
        self.view = view
        self.prompt = view.prompt
        self.usage = Usage()
        self._queue: list[Action] = []
        self._stage = "snapshot"
        self._snapshot: dict[str, Any] = {}
        self._catalog: list[dict[str, Any]] = []
        self._targets: list[dict[str, Any]] = []
        self._schemas: dict[str, dict[str, Any]] = {}
        self._rows: list[Any] = []
        self._log: list[dict[str, Any]] = []

    def transcript(self) -> list[dict[str, Any]]:
        return list(self._log)

    async def next_action(self, observation: dict[str, Any] | None) -> Action | None:
        if observation is not None:
            self._observe(observation)
        if not self._queue:
            self._plan()
        action = self._queue.pop(0) if self._queue else None
        self._log.append({"stage": self._stage, "action": None if action is None else
                          {"tool": action.tool, "args": action.args}})
        return action

    # -- observing ----------------------------------------------------------------------------------------
    def _observe(self, envelope: dict[str, Any]) -> None:
        data = envelope.get("data") if envelope.get("ok") else None
        command = envelope.get("command")
        if not isinstance(data, dict):
            return
        if command == "get_workspace_snapshot":
            self._snapshot = data
        elif command == "list_available_widgets":
            self._catalog.extend(data.get("widgets") or [])
        elif command == "get_widget_schema":
            schema = data.get("schema") or {}
            self._schemas[str(schema.get("widget_id"))] = schema
        elif command == "get_widget_data":
            self._rows = list(data.get("data") or [])

    # -- planning -----------------------------------------------------------------------------------------
    def _plan(self) -> None:
        if self._stage == "snapshot":
            self._stage = "list"
            self._queue.append(Action("get_workspace_snapshot", {}))
        elif self._stage == "list":
            self._stage = "schemas"
            backends = [b.get("name") for b in self._snapshot.get("backends") or []]
            named = [b for b in backends if isinstance(b, str) and _find(self.prompt, b)]
            if named:
                self._queue.extend(Action("list_available_widgets", {"origin": b}) for b in named)
            else:
                self._queue.append(Action("list_available_widgets", {}))
        elif self._stage == "schemas":
            self._stage = "act"
            self._targets = self._choose_targets()
            self._queue.extend(Action("get_widget_schema", {"origin": t["origin"], "widget_id": t["widget_id"]})
                               for t in self._targets)
        elif self._stage == "act":
            self._stage = "note"
            self._act()
        elif self._stage == "note":
            self._stage = "answer"
            note = self._note()
            if note is not None:
                self._queue.append(note)
        elif self._stage == "answer":
            self._stage = "done"
            if ANSWER_WORDS.search(self.prompt):
                self._queue.append(Action("final_answer", {"text": self._summary()}))

    def _choose_targets(self) -> list[dict[str, Any]]:
        apps = {str(w.get("category")) for w in self._catalog if w.get("category") and _find(self.prompt,
                                                                                             str(w["category"]))}
        hits: list[tuple[int, int, dict[str, Any]]] = []
        for w in self._catalog:
            positions = _find(self.prompt, str(w.get("name") or ""))
            if positions:
                in_app = 0 if not apps or w.get("category") in apps else 1
                hits.append((in_app, positions[0], w))
        chosen: list[dict[str, Any]] = []
        taken: list[tuple[int, int]] = []
        for _in_app, pos, w in sorted(hits, key=lambda h: (h[0], -len(str(h[2].get("name"))), h[1])):
            span = (pos, pos + len(str(w.get("name"))))
            if any(a <= span[0] < b or a < span[1] <= b for a, b in taken):
                continue
            if any(c["name"] == w["name"] for c in chosen):
                continue
            taken.append(span)
            chosen.append(w)
        if not chosen and self._catalog:
            prompt_words = _words(self.prompt)
            scored = sorted(((len(prompt_words & _words(f"{w.get('name')} {w.get('description')}")), i, w)
                             for i, w in enumerate(self._catalog)), key=lambda s: (-s[0], s[1]))
            if scored and scored[0][0] >= 2:
                chosen.append(scored[0][2])
        order = {id(w): _find(self.prompt, str(w.get("name")))[:1] or [10**6] for w in chosen}
        return sorted(chosen, key=lambda w: order[id(w)])[:3]

    def _values(self, widget_id: str) -> dict[str, Any]:
        schema = self._schemas.get(widget_id) or {}
        out: dict[str, Any] = {}
        lowered = self.prompt.lower()
        for param in schema.get("params") or []:
            if not isinstance(param, dict) or not isinstance(param.get("options"), list):
                continue
            best: tuple[int, int, Any] | None = None
            spans: list[tuple[int, int, Any, str]] = []
            for opt in param["options"]:
                value = opt.get("value") if isinstance(opt, dict) else opt
                label = opt.get("label") if isinstance(opt, dict) else None
                for text in {str(value), str(label) if label else str(value)}:
                    spans += [(pos, pos + len(text), value, text) for pos in _find(self.prompt, text)]
            # an option said inside a longer option ("Filled" in "Partially Filled") is not said
            spans = [sp for sp in spans if not any(o[0] <= sp[0] and sp[1] <= o[1] and (o[1] - o[0]) > (sp[1] - sp[0])
                                                   for o in spans)]
            for pos, _end, value, _text in spans:
                before = lowered[max(0, pos - 24):pos]
                stated = 1 if re.search(r"\bto\s+$", before) or str(param.get("paramName", "")).lower() in before \
                    or str(param.get("label", "")).lower() in before else 0
                candidate = (stated, pos, value)
                if best is None or candidate[:2] > best[:2]:
                    best = candidate
            if best is not None:
                out[str(param["paramName"])] = best[2]
        return out

    def _instances(self, widget_id: str) -> list[dict[str, Any]]:
        comp = self._snapshot.get("dashboard_composition") or {}
        return [w for w in comp.get("widgets") or [] if w.get("widget_id") == widget_id and not w.get("generated")]

    def _instructions(self) -> str:
        """The prompt with catalog names blanked, so a verb inside a widget's name ("Record Date Holdings")
        is not read as an instruction."""
        names = sorted({str(w.get("name") or "") for w in self._catalog} - {""}, key=len, reverse=True)
        if not names:
            return self.prompt
        pattern = re.compile(r"(?<![\w])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w])", re.I)
        return pattern.sub(" ", self.prompt)

    def _act(self) -> None:
        said = self._instructions()
        adding = bool(ADD_WORDS.search(said))
        repair = bool(REPAIR_WORDS.search(said))
        recording = bool(READ_WORDS.search(said))
        for target in self._targets:
            wid = target["widget_id"]
            values = self._values(wid)
            instances = self._instances(wid)
            if instances and (repair or not adding):
                def stale_score(w: dict[str, Any], v: dict[str, Any] = values) -> tuple[int, int]:
                    args = w.get("data_args") or {}
                    differs = sum(1 for k, val in v.items() if args.get(k) != val)
                    mentioned = sum(1 for val in args.values() if _find(self.prompt, str(val)))
                    return (differs > 0, mentioned)
                stale = max(instances, key=stale_score)
                self._queue.append(Action("update_widget", {"widget_uuid": stale["widget_uuid"], "data_args": values}))
            elif not adding and recording:
                pass
            else:
                self._queue.append(Action("create_widget", {"origin": target["origin"], "widget_id": wid,
                                                            "data_args": values}))
            if recording:
                self._queue.append(Action("get_widget_data", {"origin": target["origin"], "widget_id": wid,
                                                              "data_args": values}))

    def _note(self) -> Action | None:
        if not re.search(r"\bnote\b", self.prompt, re.I):
            return None
        names = NOTE_NAME.findall(self.prompt)
        name = names[-1].strip() if names else "Note"
        if self._rows:
            lines = ["; ".join(f"{k}: {v}" for k, v in row.items()) if isinstance(row, dict) else str(row)
                     for row in self._rows[:5]]
            text = "\n".join(lines)
        else:
            text = self._summary()
        return Action("add_generative_widget", {"widget_type": "note", "name": name, "data": text})

    def _summary(self) -> str:
        if self._rows:
            return json.dumps(self._rows[:5], sort_keys=True)
        done = ", ".join(t.get("name", t["widget_id"]) for t in self._targets) or "nothing matched"
        return f"Worked on: {done}."


class HeuristicAgent:
    name = "heuristic"
    privileged = False

    def session(self, view: TaskView, task: Task | None = None) -> AgentSession:
        return HeuristicSession(view)


@register_agent("heuristic")
def _heuristic(name: str) -> HeuristicAgent:
    return HeuristicAgent()
