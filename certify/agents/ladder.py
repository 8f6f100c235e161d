"""`ladder-0` … `ladder-4`: the capability ladder, the offline reference population of calibration.

Five deterministic agents that see only what any agent sees (the prompt, the tool schemas, the envelopes), each
adding exactly one capability to the one below it:

- `ladder-0` Execute: does what is literally stated — widgets named by their catalog name, values stated for
  their parameters, the note it is asked for; it reads what it is told to read, and leaves fenced-off twins be.
- `ladder-1` Find: + finds a widget the request only describes (BM25 over what each candidate serves: its
  schema's column headers and filter labels — never the catalog's description words), or the one a note on the
  board lists under the entry the request points at.
- `ladder-2` Derive: + resolves a policy phrase ("status per the pulled-orders rule") through the workspace's
  documents (notes on the dashboard, resources, skills, prompts) and takes the value it assigns.
- `ladder-3` Ground: + reads the named (or the relevant) skill, resource or prompt and extracts the fact asked
  for (following a reference to another document once) — into the note, into a parameter the request ties to
  it, or into the title of the dashboard's tab.
- `ladder-4` Compose: + builds the backend and app a request asks for, instantiates it and uses what it built:
  the built table keyed on a parameter of the work and placed with the value the work found, its app's tab
  titled like the board's.

A fair ladder has level k passed by `ladder-k` and failed by `ladder-(k-1)`. The name `ladder` stands for the
whole family (see `FAMILIES`): calibration runs every member and reports the agent × level matrix.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from ..task import Task
from . import knowledge
from .analysis import AnalysisAsk, analysis_ask, write_analysis
from .analysis import serves as analysis_serves
from .base import Action, AgentSession, TaskView, Usage, register_agent, register_family
from .building import BuildSpec, build_spec
from .reading import find, listing, note_name
from .request import (
    QUESTION,
    Op,
    Request,
    Target,
    described_pools,
    find_described,
    masked,
    named_targets,
    operations,
    pointed,
    read_request,
    sentence_targets,
    shown_by,
    stale_values,
    stated_values,
    twin_signatures,
)

CAPABILITIES = (
    "execute what is stated",
    "find from a description",
    "derive through documents",
    "ground in a knowledge source",
    "compose what it builds",
)
FIND, DERIVE, GROUND, COMPOSE = range(1, 5)
LADDER = tuple(f"ladder-{k}" for k in range(len(CAPABILITIES)))
# Documents a rung may open while looking for what a policy phrase means (the resource index included).
POLICY_READS = 3
NOTE_ROWS = 10
# A request that names a workspace resource: the index is read to learn which URI carries that title.
RESOURCE_WORD = re.compile(r"\bresources?\b", re.I)
TAB_TITLE = re.compile(
    r"\btab\b.{0,60}?\b(?:title|titled|name|named|call|called|rename|retitle)\b|"
    r"\b(?:title|titled|name|named|call|called|rename|retitle)\b.{0,60}?\btab\b",
    re.I | re.S,
)

Script = Generator[Action, dict[str, Any] | None, None]


def _data(envelope: dict[str, Any] | None) -> dict[str, Any]:
    if envelope and envelope.get("ok") and isinstance(envelope.get("data"), dict):
        return envelope["data"]
    return {}


@dataclass
class Work:
    """What a session has learnt so far: the reading of its request, what the workspace showed, the operations
    it will perform and the documents it has read."""

    request: Request
    snapshot: dict[str, Any]
    placed: dict[str, list[dict[str, Any]]]
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    documents: list[knowledge.Document] = field(default_factory=list)
    named: list[knowledge.Document] = field(default_factory=list)
    read: dict[str, knowledge.Document] = field(default_factory=dict)
    rows: list[Any] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    index: list[knowledge.Document] | None = None
    tab_title: str | None = None

    def params(self, op: Op) -> list[dict[str, Any]]:
        return [
            p for p in self.schemas.get(op.target.widget_id, {}).get("params") or [] if isinstance(p, dict)
        ]


class LadderSession:
    """One episode of a rung: a script that yields one action at a time and receives its envelope back."""

    def __init__(self, view: TaskView, rung: int) -> None:
        self.view = view
        self.rung = rung
        self.prompt = view.prompt
        self.usage = Usage()
        self._log: list[dict[str, Any]] = []
        self._script = self._run()
        self._started = False

    def transcript(self) -> list[dict[str, Any]]:
        return list(self._log)

    async def next_action(self, observation: dict[str, Any] | None) -> Action | None:
        try:
            action = self._script.send(observation) if self._started else next(self._script)
        except StopIteration:
            action = None
        self._started = True
        move = None if action is None else {"tool": action.tool, "args": action.args}
        self._log.append({"rung": self.rung, "action": move})
        return action

    def _allowed(self, tool: str) -> bool:
        return tool in self.view.tool_names

    def _note(self, what: str) -> None:
        self._log.append({"rung": self.rung, "reasoning": what})

    # ------------------------------------------------------------------------------------------- the script
    def _run(self) -> Script:
        snapshot = _data((yield Action("get_workspace_snapshot", {})))
        catalog = list(_data((yield Action("list_available_widgets", {}))).get("widgets") or [])
        index = (yield from self._read_index()) if RESOURCE_WORD.search(self.prompt) else None
        work = self._read_request(snapshot, catalog, index)
        if self.rung >= FIND:
            yield from self._find(work, catalog)
        work.ops = operations(work.request, work.targets, work.placed)
        for t in _distinct([op.target for op in work.ops]):
            if t.widget_id in work.schemas:
                continue
            envelope = yield Action("get_widget_schema", {"origin": t.origin, "widget_id": t.widget_id})
            work.schemas[t.widget_id] = _data(envelope).get("schema") or {}
        targets = [op.target for op in work.ops]
        for op in work.ops:
            op.args = stated_values(work.request, op, work.schemas.get(op.target.widget_id, {}), targets)
        for doc in work.named:
            yield from self._read(doc, work)
        if self.rung >= DERIVE:
            yield from self._derive(work)
        if self.rung >= GROUND:
            yield from self._ground(work)
        build = build_spec(self.prompt)
        if self.rung >= COMPOSE and build is not None:
            yield from self._compose(build, work)
        yield from self._act(work)
        if work.tab_title is not None:
            yield from self._retitle(work)
        name = note_name(self.prompt, [str(w.get("name") or "") for w in catalog])
        if name is not None:
            yield Action(
                "add_generative_widget", {"widget_type": "note", "name": name, "data": _note_text(work)}
            )
        ask = analysis_ask(self.prompt)
        if ask is not None:
            rows, schema = yield from self._analysis_rows(work, ask)
            text = write_analysis(ask, rows, schema, list(work.read.values()))
            yield Action("final_answer", {"text": text or _note_text(work)})
        elif QUESTION.search(self.prompt):
            yield Action("final_answer", {"text": _note_text(work)})

    def _analysis_rows(
        self, work: Work, ask: AnalysisAsk
    ) -> Generator[Action, dict[str, Any] | None, tuple[list[Any], dict[str, Any]]]:
        """The rows an analysis is about: those of the first widget worked on that serves the figure asked for
        (read again on the values the work set, unless the work read them already)."""
        for op in work.ops:
            schema = work.schemas.get(op.target.widget_id, {})
            if op.kind == "read" and analysis_serves(ask, work.rows, schema):
                return work.rows, schema
        for op in work.ops:
            schema = work.schemas.get(op.target.widget_id, {})
            if op.kind != "read":
                where = {"origin": op.target.origin, "widget_id": op.target.widget_id, "data_args": op.args}
                rows = list(_data((yield Action("get_widget_data", where))).get("data") or [])
                if analysis_serves(ask, rows, schema):
                    return rows, schema
        return [], {}

    def _read_request(
        self, snapshot: dict[str, Any], catalog: list[dict[str, Any]], index: list[knowledge.Document] | None
    ) -> Work:
        """The literal reading (every rung) and, from Find up, the widgets the request only describes."""
        request = read_request(self.prompt)
        request.name(
            listing(catalog).said_names,
            (
                *(str(d.get("name") or "") for d in snapshot.get("dashboards") or []),
                *(str(s.get("name") or "") for s in snapshot.get("skills") or []),
            ),
        )
        placed: dict[str, list[dict[str, Any]]] = {}
        for w in (snapshot.get("dashboard_composition") or {}).get("widgets") or []:
            if not w.get("generated"):
                placed.setdefault(str(w.get("widget_id")), []).append(w)
        work = Work(
            request,
            snapshot,
            placed,
            documents=knowledge.skills(snapshot) + knowledge.prompts(self.view.tools),
            index=index,
        )
        work.named = self._named_sources(request, [*work.documents, *(index or [])])
        titles = [(p, p + len(d.title)) for d in work.named for p in find(self.prompt, d.title)]
        build = build_spec(self.prompt)
        targets = [
            t
            for t in named_targets(request, catalog, titles)
            if build is None or str(t.widget.get("name")).lower() != build.widget.lower()
        ]
        work.targets = targets
        return work

    def _find(self, work: Work, catalog: list[dict[str, Any]]) -> Script:
        """Find: read the schema of every widget a description may mean, and take the one whose columns and
        filters the description's words match best (what it serves, not what the catalog calls it)."""
        pools = described_pools(work.request, catalog, work.targets, set(work.placed))
        # a description may point at an entry of a note on the board instead (the note names the widget): its
        # pool needs no schema read
        notes = [(d.title, d.text or "") for d in knowledge.notes(work.snapshot)]
        prompt = work.request.prompt
        unpointed = [pool for begin, end, _, pool in pools if pointed(prompt[begin:end], pool, notes) is None]
        for entry in {str(w["widget_id"]): w for pool in unpointed for w in pool}.values():
            wid = str(entry["widget_id"])
            if wid not in work.schemas:
                envelope = yield Action("get_widget_schema", {"origin": entry["origin"], "widget_id": wid})
                work.schemas[wid] = _data(envelope).get("schema") or {}
        found = find_described(work.request, catalog, work.targets, set(work.placed), work.schemas, notes)
        for t in found:
            self._note(f"found {t.widget_id} from the description '{t.described}'")
        work.targets = [*work.targets, *found]

    def _act(self, work: Work) -> Script:
        for op in work.ops:
            where = {"origin": op.target.origin, "widget_id": op.target.widget_id, "data_args": op.args}
            if op.kind == "read":
                work.rows += list(_data((yield Action("get_widget_data", where))).get("data") or [])
                continue
            instance = self._instance(work, op) if op.kind == "update" else None
            if instance is not None:
                yield Action("update_widget", {"widget_uuid": instance["widget_uuid"], "data_args": op.args})
            else:
                yield Action("create_widget", where)

    # ------------------------------------------------------------------------------------------- capabilities
    def _read(self, doc: knowledge.Document, work: Work) -> Script:
        if doc.key in work.read or doc.text is not None:
            work.read.setdefault(doc.key, doc)
            return
        tool, args = doc.call
        if not self._allowed(tool):
            return
        doc.text = knowledge.envelope_text((yield Action(tool, args)))
        work.read[doc.key] = doc

    def _read_index(self) -> Generator[Action, dict[str, Any] | None, list[knowledge.Document]]:
        """Read the resource index (the URI the read tool's description starts at): the resources it lists."""
        uri = knowledge.index_uri(self.view.tools)
        if not uri or not self._allowed("read_workspace_resource"):
            return []
        index = yield Action("read_workspace_resource", {"uri": uri})
        return knowledge.resources(knowledge.envelope_text(index) or "")

    def _named_sources(
        self, request: Request, documents: list[knowledge.Document]
    ) -> list[knowledge.Document]:
        """The documents the prompt names (a skill by its name or slug, a workspace prompt by its name), in the
        order the prompt names them: every rung reads what it is told to read."""
        hits = []
        for doc in documents:
            positions = request.live([*find(self.prompt, doc.title), *find(self.prompt, doc.key)])
            if positions and len(doc.title) > 3:
                hits.append((min(positions), doc))
        return [d for _, d in sorted(hits, key=lambda h: h[0])]

    def _derive(self, work: Work) -> Script:
        """Each policy phrase decides one parameter (the one named just before it) of the widgets its sentence
        is about; its value is what the document defining the phrase assigns to that parameter."""
        request = work.request
        pending = []
        # the parameter each widget's policy decided: a copy clause that says no parameter before its own policy
        # ("plus a copy beside it per the interim rule") decides the same one on the copy
        decided: dict[str, dict[str, Any]] = {}
        for policy in request.policies:
            sentence = request.sentence_of(policy.start)
            copies = [op for op in work.ops if op.clause and op.clause[0] <= policy.start < op.clause[1]]
            if copies:
                affected = copies
                floor = min(op.position for op in copies)  # a copy's position is where its clause starts
                # a copy clause names its widget ("a copy of the Client Returns per …"): a label inside that name
                # is not the parameter the clause's rule decides
                unnamed = masked(self.prompt, request.names)
                param = _param_before(unnamed, policy.start, floor, affected, work)
                param = param or decided.get(copies[0].target.widget_id)
            else:
                affected = _ops_of(request, work.ops, sentence)
                param = _param_before(self.prompt, policy.start, sentence[0], affected, work)
                for op in affected:
                    if param is not None:
                        decided.setdefault(op.target.widget_id, param)
            if param is not None and not all(param["paramName"] in op.args for op in affected):
                pending.append((policy, param, affected))
        if not pending:
            return
        notes = knowledge.notes(work.snapshot)
        budget = POLICY_READS
        candidates: list[knowledge.Document] | None = None
        for policy, param, affected in pending:
            value = _policy_in([*notes, *work.read.values()], policy.phrase, param)
            while value is None and budget > 0:
                if candidates is None:
                    if work.index is None:
                        budget -= 1
                        work.index = yield from self._read_index()
                    candidates = [*work.documents, *(work.index or [])]
                query = f"{policy.phrase} {param.get('label') or ''} {param.get('paramName')} policy rule convention"
                unread = [d for d in knowledge.rank(candidates, query) if d.key not in work.read]
                if not unread or budget <= 0:
                    break
                budget -= 1
                yield from self._read(unread[0], work)
                value = _policy_in([*notes, *work.read.values()], policy.phrase, param)
            if value is None:
                self._note(f"no document defines '{policy.phrase}'")
                continue
            self._note(f"'{policy.phrase}' sets {param['paramName']} = {value}")
            for op in affected:
                if any(p.get("paramName") == param["paramName"] for p in work.params(op)):
                    op.args[str(param["paramName"])] = value

    def _ground(self, work: Work) -> Script:
        """The fact each named source is asked for: the step the question points at (or the piece its words
        match), followed once through a reference to another document; written into the note, set on a parameter
        the question's sentence names when that parameter is still open, or taken as the tab's title when the
        question is about the tab."""
        sources = [d for d in work.named if not self._named_for_analysis_only(d)]
        if not sources:
            relevant = _relevant_source(self.prompt, work.documents)
            if relevant is not None:
                yield from self._read(relevant, work)
                sources = [relevant]
        for doc in sources:
            if not doc.text:
                continue
            question = _question(self.prompt, work.request, doc)
            text = _body(doc.text)
            unit = knowledge.asked_unit(text, question)
            if unit is not None:
                hop = knowledge.cross_reference(
                    unit,
                    [d for d in [*work.documents, *(work.index or []), *work.read.values()] if d is not doc],
                )
                if hop is not None:
                    yield from self._read(hop, work)
                    if hop.text:
                        text = _body(hop.text)
                        unit = knowledge.asked_unit(text, _without_position(question)) or unit
            if unit is None:
                continue
            self._note(f"{doc.title} answers '{question}' with '{unit}'")
            acted = False
            if TAB_TITLE.search(question) and knowledge.quoted(unit):
                work.tab_title, acted = knowledge.quoted(unit), True
            for op in work.ops:
                for param in work.params(op):
                    key = str(param.get("paramName"))
                    if key not in op.args and _mentions_param(question, param):
                        value = knowledge.value_in_piece(unit, text, param)
                        if value is not None:
                            op.args[key] = value
                            acted = True
            if not acted:
                # a fact that sets nothing is one the request wants written down
                work.facts.append(f"Per the {doc.title}: {unit}")

    def _named_for_analysis_only(self, doc: knowledge.Document) -> bool:
        """A skill the request names only as the way to write its analysis holds no fact for the work."""
        ask = analysis_ask(self.prompt)
        if ask is None:
            return False
        start = self.prompt.find(ask.sentence)
        end = start + len(ask.sentence)
        positions = [*find(self.prompt, doc.title), *find(self.prompt, doc.key)]
        return start >= 0 and bool(positions) and all(start <= p < end for p in positions)

    def _retitle(self, work: Work) -> Script:
        """Give the dashboard's tab the title the work found: the tab the prompt names, else the open one."""
        composition = work.snapshot.get("dashboard_composition") or {}
        tabs = [t for t in composition.get("tabs") or [] if isinstance(t, dict) and t.get("id")]
        named = [t for t in tabs if t.get("name") and find(self.prompt, str(t["name"]))]
        current = (work.snapshot.get("workspace_state") or {}).get("current_tab_id")
        tab = next(iter(named or [t for t in tabs if t.get("id") == current] or tabs), None)
        if tab is None or tab.get("name") == work.tab_title or not self._allowed("manage_navigation_bar"):
            return
        yield Action(
            "manage_navigation_bar",
            {"operation": "rename_tabs", "rename_map": {str(tab["id"]): work.tab_title}},
        )

    def _compose(self, build: BuildSpec, work: Work) -> Script:
        """Build what the request asks for: the backend with its widget (keyed on a parameter of the work when
        the request says so), the app on its tab (titled like the board's tab when asked), an instance of the app
        (left in the background so the open dashboard stays open), and the built widget placed, set to the value
        the work found for its key."""
        param, value = _keyed(build, work)
        added = yield Action(
            "manage_backends",
            {
                "operation": "add",
                "name": build.backend,
                "url": f"http://127.0.0.1:{9400 + len(build.backend)}",
                "widgets_json": build.widgets_json(param),
                "apps_json": build.apps_json(work.tab_title if build.tab_like_board else None),
            },
        )
        backend_id = _data(added).get("backend_id")
        if backend_id and build.app and self._allowed("manage_apps"):
            yield Action(
                "manage_apps",
                {
                    "operation": "instantiate",
                    "backend_id": backend_id,
                    "app_name": build.app,
                    "dashboard_name": build.app,
                    "activate": False,
                },
            )
        if backend_id and build.place:
            where: dict[str, Any] = {"origin": build.backend, "widget_id": build.widget_id}
            if param is not None and value is not None:
                where["data_args"] = {str(param["paramName"]): value}
            yield Action("create_widget", where)

    def _instance(self, work: Work, op: Op) -> dict[str, Any] | None:
        """The placed instance a repair is about: never one a fencing clause protects; the one showing the values
        the prompt says it currently shows, else one that differs from what is wanted."""
        schema = work.schemas.get(op.target.widget_id, {})
        twins = twin_signatures(work.request, schema, str(op.target.widget.get("name") or ""))
        candidates = [
            w
            for w in work.placed.get(op.target.widget_id, [])
            if not any(
                all(str((w.get("data_args") or {}).get(k)) == str(v) for k, v in sig.items()) for sig in twins
            )
        ]
        if not candidates:
            return None
        stale = stale_values(work.request, op, schema)

        def score(w: dict[str, Any]) -> tuple[int, int, int]:
            args = w.get("data_args") or {}
            return (
                # the instance a pointer's entry names by what it shows, among twins of it
                shown_by(op.target.shows, {k: args.get(k) for k in op.args}) if op.target.shows else 0,
                sum(1 for k, v in stale.items() if str(args.get(k)) == str(v)),
                sum(1 for k, v in op.args.items() if str(args.get(k)) != str(v)),
            )

        return max(candidates, key=score)


def _keyed(build: BuildSpec, work: Work) -> tuple[dict[str, Any] | None, Any]:
    """The parameter the built table is keyed on (as the widgets worked on declare it) and the value the work
    set for it."""
    if build.keyed is None:
        return None, None
    for op in work.ops:
        for param in work.params(op):
            names = {str(param.get("label") or "").lower(), str(param.get("paramName") or "").lower()}
            if build.keyed in names:
                return param, op.args.get(str(param["paramName"]))
    return None, None


def _policy_in(docs: list[knowledge.Document], phrase: str, param: dict[str, Any]) -> Any | None:
    """The value the first document defining `phrase` assigns to `param`, bounded by the other policies that
    document defines."""
    for doc in docs:
        if doc.text and knowledge.defines(doc.text, phrase):
            others = [p.phrase for p in read_request(doc.text).policies]
            found = knowledge.policy_value(doc.text, phrase, param, others)
            if found is not None:
                return found.value
    return None


def _ops_of(request: Request, ops: list[Op], sentence: tuple[int, int]) -> list[Op]:
    """The operations a sentence is about: those it asks for itself (a sentence asking for a second view of a
    widget decides that view, not the first), else those on its widgets, or on the widgets of the sentence
    before it that names some."""
    ops = [op for op in ops if op.clause is None]  # a copy is decided by its own clause's policy only
    own = [op for op in ops if sentence[0] <= op.position < sentence[1]]
    if own:
        return own
    about = sentence_targets(request, [op.target for op in ops], sentence)
    return [op for op in ops if any(op.target is t for t in about)]


def _distinct(targets: list[Target]) -> list[Target]:
    seen, out = set(), []
    for t in targets:
        if t.widget_id not in seen:
            seen.add(t.widget_id)
            out.append(t)
    return out


def _param_before(prompt: str, position: int, floor: int, ops: list[Op], work: Work) -> dict[str, Any] | None:
    """The parameter a policy phrase decides: the one whose name or label the prompt says closest before it."""
    window = prompt[max(floor, position - 80) : position].lower()
    best: tuple[int, dict[str, Any]] | None = None
    for op in ops:
        for param in work.params(op):
            if not isinstance(param.get("options"), list):
                continue
            for said in {str(param.get("label") or "").lower(), str(param.get("paramName") or "").lower()} - {
                ""
            }:
                at = window.rfind(said)
                if at >= 0 and (best is None or at > best[0]):
                    best = (at, param)
    return best[1] if best else None


def _body(text: str) -> str:
    """A read document without the name/description line envelope_text puts on top."""
    _, _, rest = text.partition("\n")
    return rest if rest.strip() else text


def _question(prompt: str, request: Request, doc: knowledge.Document) -> str:
    """What the prompt asks of a source: the words after "plus" or from the first wh-word in the sentence that
    names it (else a sentence that says what its workflow or step holds)."""
    candidates = [request.sentence_of(p) for p in find(prompt, doc.title) + find(prompt, doc.key)]
    candidates += [
        s
        for s in request.spans
        if re.search(
            r"\b(its|the skill's|the resource's)\s+(workflow|final|last|"
            r"first|step)",
            prompt[s[0] : s[1]],
            re.I,
        )
    ]
    for a, b in candidates:
        sentence = prompt[a:b]
        for pattern in (
            r"\bplus,?\s+(.*)",
            r"\b((?:what|which|how|where|when|who)\b.*)",
            r"\b(?:recording|record|capture|write|writes|noting)\s+(.*)",
        ):
            m = re.search(pattern, sentence, re.I | re.S)
            if m and (doc.title.lower() not in m.group(1).lower() or pattern.startswith(r"\bplus")):
                return m.group(1)
    a, b = candidates[0] if candidates else (0, len(prompt))
    return prompt[a:b]


def _without_position(question: str) -> str:
    return re.sub(r"\b(last|final|first|second|third|step\s+\d+)\b", " ", question, flags=re.I)


def _mentions_param(text: str, param: dict[str, Any]) -> bool:
    names = {str(param.get("label") or ""), str(param.get("paramName") or "")} - {""}
    return isinstance(param.get("options"), list) and any(find(text, n) for n in names)


def _relevant_source(prompt: str, documents: list[knowledge.Document]) -> knowledge.Document | None:
    """A source the prompt asks for without naming it ("the relevant skill"): the skill whose name and
    description best match the prompt."""
    if not re.search(
        r"\b(?:relevant|right|matching|appropriate|applicable)\s+(?:skill|resource|guide|playbook)\b",
        prompt,
        re.I,
    ):
        return None
    ranked = knowledge.rank([d for d in documents if d.kind == "skill"], prompt)
    return ranked[0] if ranked else None


def _note_text(work: Work) -> str:
    lines = [
        " | ".join(f"{k}: {v}" for k, v in row.items()) if isinstance(row, dict) else str(row)
        for row in work.rows[:NOTE_ROWS]
    ]
    lines += work.facts
    if not lines:
        done = (
            ", ".join(dict.fromkeys(str(op.target.widget.get("name")) for op in work.ops))
            or "nothing matched"
        )
        lines.append(f"Worked on: {done}.")
    return "\n".join(lines)


class LadderAgent:
    privileged = False
    deterministic = True

    def __init__(self, rung: int) -> None:
        if not 0 <= rung < len(CAPABILITIES):
            raise ValueError(f"ladder rungs are 0..{len(CAPABILITIES) - 1}, got {rung}")
        self.rung = rung
        self.name = f"ladder-{rung}"

    def session(self, view: TaskView, task: Task | None = None) -> AgentSession:
        return LadderSession(view, self.rung)


def _factory(rung: int):
    def make(name: str) -> LadderAgent:
        return LadderAgent(rung)

    return make


for _rung in range(len(CAPABILITIES)):
    register_agent(f"ladder-{_rung}")(_factory(_rung))
register_family("ladder", LADDER)
