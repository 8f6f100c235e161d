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
from .reading import (
    ADD_WORDS,
    ANSWER_WORDS,
    READ_WORDS,
    REPAIR_WORDS,
    blank_names,
    find,
    named_widgets,
    note_name,
    option_mentions,
    words,
)


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
        self._log.append(
            {
                "stage": self._stage,
                "action": None if action is None else {"tool": action.tool, "args": action.args},
            }
        )
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
            named = [b for b in backends if isinstance(b, str) and find(self.prompt, b)]
            if named:
                self._queue.extend(Action("list_available_widgets", {"origin": b}) for b in named)
            else:
                self._queue.append(Action("list_available_widgets", {}))
        elif self._stage == "schemas":
            self._stage = "act"
            self._targets = self._choose_targets()
            self._queue.extend(
                Action("get_widget_schema", {"origin": t["origin"], "widget_id": t["widget_id"]})
                for t in self._targets
            )
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
        chosen = named_widgets(self.prompt, self._catalog)
        if not chosen and self._catalog:
            prompt_words = words(self.prompt)
            scored = sorted(
                (
                    (len(prompt_words & words(f"{w.get('name')} {w.get('description')}")), i, w)
                    for i, w in enumerate(self._catalog)
                ),
                key=lambda s: (-s[0], s[1]),
            )
            if scored and scored[0][0] >= 2:
                chosen.append(scored[0][2])
        return chosen

    def _values(self, widget_id: str) -> dict[str, Any]:
        schema = self._schemas.get(widget_id) or {}
        out: dict[str, Any] = {}
        lowered = self.prompt.lower()
        for param in schema.get("params") or []:
            if not isinstance(param, dict):
                continue
            best: tuple[int, int, Any] | None = None
            for m in option_mentions(self.prompt, param):
                before = lowered[max(0, m.start - 24) : m.start]
                stated = (
                    1
                    if re.search(r"\bto\s+$", before)
                    or str(param.get("paramName", "")).lower() in before
                    or str(param.get("label", "")).lower() in before
                    else 0
                )
                candidate = (stated, m.start, m.value)
                if best is None or candidate[:2] > best[:2]:
                    best = candidate
            if best is not None:
                out[str(param["paramName"])] = best[2]
        return out

    def _instances(self, widget_id: str) -> list[dict[str, Any]]:
        comp = self._snapshot.get("dashboard_composition") or {}
        return [
            w for w in comp.get("widgets") or [] if w.get("widget_id") == widget_id and not w.get("generated")
        ]

    def _instructions(self) -> str:
        return blank_names(self.prompt, (str(w.get("name") or "") for w in self._catalog))

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
                    mentioned = sum(1 for val in args.values() if find(self.prompt, str(val)))
                    return (differs > 0, mentioned)

                stale = max(instances, key=stale_score)
                self._queue.append(
                    Action("update_widget", {"widget_uuid": stale["widget_uuid"], "data_args": values})
                )
            elif not adding and recording:
                pass
            else:
                self._queue.append(
                    Action(
                        "create_widget", {"origin": target["origin"], "widget_id": wid, "data_args": values}
                    )
                )
            if recording:
                self._queue.append(
                    Action(
                        "get_widget_data", {"origin": target["origin"], "widget_id": wid, "data_args": values}
                    )
                )

    def _note(self) -> Action | None:
        name = note_name(self.prompt, (str(w.get("name") or "") for w in self._catalog))
        if name is None:
            return None
        if self._rows:
            lines = [
                "; ".join(f"{k}: {v}" for k, v in row.items()) if isinstance(row, dict) else str(row)
                for row in self._rows[:5]
            ]
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
    deterministic = True

    def session(self, view: TaskView, task: Task | None = None) -> AgentSession:
        return HeuristicSession(view)


@register_agent("heuristic")
def _heuristic(name: str) -> HeuristicAgent:
    return HeuristicAgent()
