"""The MCP surface a workspace server offers, pinned in a file, and how an observed surface differs from a pin.

The simulator claims to model a product we cannot reach from here, so the claim is made checkable: a surface
file records what a server lists (each tool's input JSON Schema and kind, the prompts with their arguments,
the resources with a hash of their descriptor). `certify/surfaces/product.json` is the product as published;
`certify/surfaces/simulator.json` is what `taskforge serve` lists. `taskforge surface diff` lists a live server
with the official MCP client (no tool is called) and classifies every difference from a pin: a missing tool,
prompt or resource and a breaking schema change (an argument removed or made required, a changed shape, a
narrower enum) are drift; an extra name and a compatible change (a new optional argument, a widened enum or
union, an argument no longer required) are reported. Shapes are compared without titles, descriptions,
defaults and examples, with `$ref`s inlined and `null` alternatives dropped (an optional argument is omitted,
not sent as null).

The product serves no MCP annotations, so a tool's kind (read / write) is ours to record: the simulator
declares it with each tool, and `tool_kind` adds the harness's final_answer. `serve --surface product` exposes an episode in the product's shape: its 18 tools
(`product_tools`), the knowledge documents as MCP resources and the workspace prompts as MCP prompts.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simulator import TOOLS, World, tool_schemas, tools_of

if TYPE_CHECKING:
    from mcp import Client

SURFACES_DIR = Path(__file__).parent / "surfaces"
PINS = ("product", "simulator")
Kind = Literal["read", "write", "harness", "unknown"]
Mode = Literal["simulator", "product"]
MODES: tuple[Mode, ...] = ("simulator", "product")

# --- kinds --------------------------------------------------------------------------------------------------

_HARNESS = frozenset({"final_answer"})


def tool_kind(name: str) -> tuple[Kind, tuple[str, ...]]:
    """A tool's kind and, for a tool whose kind depends on its operation, the operations that only read: what
    the simulator declares with the tool, plus the harness's own final_answer."""
    spec = TOOLS.get(name)
    if spec is not None:
        return ("read" if "read" in spec.kinds else "write"), spec.read_operations
    if name in _HARNESS:
        return "harness", ()
    return "unknown", ()


# --- the surface file ---------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerInfo(_Strict):
    name: str
    version: str = ""


class PinnedTool(_Strict):
    name: str = Field(min_length=1)
    kind: Kind
    read_operations: list[str] = Field(default_factory=list)
    input_schema: dict[str, Any]


class PromptArgument(_Strict):
    name: str = Field(min_length=1)
    required: bool = False


class PinnedPrompt(_Strict):
    name: str = Field(min_length=1)
    arguments: list[PromptArgument] = Field(default_factory=list)


class PinnedResource(_Strict):
    """A resource's descriptor. A field the source does not publish is null: it is not compared, and the
    descriptor's hash (over description, mime_type, name and uri, as the source benchmark hashes it) is
    recorded only once every field is known."""

    uri: str = Field(min_length=1)
    name: str | None = None
    description: str | None = None
    mime_type: str | None = None
    hash: str | None = None

    @model_validator(mode="after")
    def _hash_matches(self) -> PinnedResource:
        expected = descriptor_hash(self)
        if self.hash is not None and self.hash != expected:
            raise ValueError(
                f"resource {self.uri}: hash {self.hash} does not match its descriptor "
                f"({expected or 'not every field is known'})"
            )
        return self

    def known(self) -> dict[str, str]:
        return {k: v for k, v in self.descriptor().items() if v is not None}

    def descriptor(self) -> dict[str, str | None]:
        return {
            "description": self.description,
            "mime_type": self.mime_type,
            "name": self.name,
            "uri": self.uri,
        }


def descriptor_hash(resource: PinnedResource) -> str | None:
    descriptor = resource.descriptor()
    if any(v is None for v in descriptor.values()):
        return None
    text = json.dumps(descriptor, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def resource(uri: str, name: str | None, description: str | None, mime_type: str | None) -> PinnedResource:
    pinned = PinnedResource(uri=uri, name=name, description=description, mime_type=mime_type)
    pinned.hash = descriptor_hash(pinned)
    return pinned


class Surface(_Strict):
    """What a server lists. `source` names what it describes (`hosted@<version>`, `oss@<commit>`,
    `taskforge@<version>`); `notes` say where a fact came from."""

    source: str = Field(min_length=1)
    server: ServerInfo | None = None
    notes: list[str] = Field(default_factory=list)
    tools: list[PinnedTool] = Field(default_factory=list)
    prompts: list[PinnedPrompt] = Field(default_factory=list)
    resources: list[PinnedResource] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> Surface:
        for what, names in (
            ("tool", [t.name for t in self.tools]),
            ("prompt", [p.name for p in self.prompts]),
            ("resource", [r.uri for r in self.resources]),
        ):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{what} listed twice: {', '.join(twice)}")
        return self

    def tool(self, name: str) -> PinnedTool | None:
        return next((t for t in self.tools if t.name == name), None)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


class SurfaceFileError(Exception):
    """A surface file that cannot be used, as one line naming the file and the field."""


def pin_path(name_or_path: str | Path) -> Path:
    """A shipped pin by name (`product`, `simulator`), else the path as given."""
    if isinstance(name_or_path, str) and name_or_path in PINS:
        return SURFACES_DIR / f"{name_or_path}.json"
    return Path(name_or_path)


def load_surface(name_or_path: str | Path) -> Surface:
    path = pin_path(name_or_path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SurfaceFileError(f"{path}: no such surface file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SurfaceFileError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SurfaceFileError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    try:
        return Surface.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise SurfaceFileError(f"{path}: {where}: {err['msg']}") from None


def save_surface(surface: Surface, name_or_path: str | Path) -> Path:
    path = pin_path(name_or_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(surface.to_json(), encoding="utf-8")
    return path


# --- comparing schemas --------------------------------------------------------------------------------------

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})
Severity = Literal["breaking", "compatible", "extra"]


def normalise_schema(schema: Any) -> Any:
    """A schema's shape: `$ref`s inlined, annotations dropped, `null` alternatives dropped, a boolean
    `additionalProperties` dropped (servers ignore or refuse unknown keys; either way a caller sends none)."""
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return _shape(schema, defs, 0)


def _shape(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if depth > 32:
        raise ValueError("schema nests too deeply (a recursive $ref?)")
    if isinstance(node, list):
        return [_shape(n, defs, depth + 1) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
        if name is None or name not in defs:
            raise ValueError(f"unresolvable $ref {ref!r}")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _shape(merged, defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ANNOTATIONS or key == "$defs":
            continue
        if key == "additionalProperties" and isinstance(value, bool):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: _shape(v, defs, depth + 1) for k, v in value.items()}
        else:
            out[key] = _shape(value, defs, depth + 1)
    if isinstance(out.get("anyOf"), list):
        branches = [b for b in out["anyOf"] if b != {"type": "null"}]
        if len(branches) == 1 and isinstance(branches[0], dict):
            rest = {k: v for k, v in out.items() if k != "anyOf"}
            out = {**branches[0], **rest}
        else:
            out["anyOf"] = branches
    if "const" in out and "enum" not in out:
        out["enum"] = [out.pop("const")]
    if out.get("required") == []:
        out.pop("required")
    return out


def _open(schema: dict[str, Any]) -> bool:
    """An object schema that accepts keys it does not declare (additionalProperties: true in the original)."""
    return schema.get("additionalProperties") is True


class Difference(_Strict):
    """One difference between a pin and what a server lists. `path` is the argument's place in the tool's
    input (`chart_params.yKey`, `tabs[].name`)."""

    what: Literal["tool", "prompt", "resource"]
    name: str
    change: str
    severity: Severity
    path: str | None = None
    pinned: Any = None
    observed: Any = None

    def line(self) -> str:
        where = f"{self.what} {self.name}" + (f" {self.path}" if self.path else "")
        values = ""
        if self.pinned is not None or self.observed is not None:
            values = f": pinned {_short(self.pinned)}, observed {_short(self.observed)}"
        return f"{where}: {self.change.replace('_', ' ')}{values}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 160 else text[:157] + "..."


class SurfaceDiff(_Strict):
    pinned_source: str
    observed_source: str
    differences: list[Difference] = Field(default_factory=list)

    @property
    def drift(self) -> bool:
        """Something a caller of the pinned surface relies on is gone or changed (a missing name, a breaking
        schema change, a changed resource descriptor)."""
        return any(d.severity == "breaking" for d in self.differences)

    def of(self, severity: Severity) -> list[Difference]:
        return [d for d in self.differences if d.severity == severity]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pinned": self.pinned_source,
            "observed": self.observed_source,
            "drift": self.drift,
            "breaking": len(self.of("breaking")),
            "compatible": len(self.of("compatible")),
            "extra": len(self.of("extra")),
            "differences": [d.model_dump(mode="json") for d in self.differences],
        }


def compare_schemas(
    pinned: dict[str, Any], observed: dict[str, Any]
) -> list[tuple[str, str, Severity, Any, Any]]:
    """(path, change, severity, pinned, observed) for each difference between two tool input schemas."""
    out: list[tuple[str, str, Severity, Any, Any]] = []
    _compare(normalise_schema(pinned), normalise_schema(observed), "", out, _open_map(observed))
    return out


def _open_map(schema: Any) -> set[str]:
    """Paths of the objects in `schema` that accept undeclared keys (read before normalisation drops it)."""
    found: set[str] = set()
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}

    def walk(node: Any, path: str, depth: int) -> None:
        if depth > 32 or not isinstance(node, dict):
            return
        if "$ref" in node:
            ref = node["$ref"]
            name = ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""
            if name in defs:
                walk({**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}, path, depth + 1)
            return
        if _open(node):
            found.add(path)
        for key, value in (node.get("properties") or {}).items():
            walk(value, f"{path}.{key}" if path else key, depth + 1)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", depth + 1)
        for branch in node.get("anyOf") or []:
            walk(branch, path, depth + 1)

    walk(schema, "", 0)
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _compare(
    pinned: Any,
    observed: Any,
    path: str,
    out: list[tuple[str, str, Severity, Any, Any]],
    open_paths: set[str],
) -> None:
    if not isinstance(pinned, dict) or not isinstance(observed, dict):
        if pinned != observed:
            out.append((path, "shape_changed", "breaking", pinned, observed))
        return
    if "anyOf" in pinned or "anyOf" in observed:
        # A union on either side: the alternatives are compared as a set (a superset accepts every call the pin
        # accepted; anything else changed the shape).
        p_set = {_key(b) for b in pinned.get("anyOf", [pinned])}
        o_set = {_key(b) for b in observed.get("anyOf", [observed])}
        if p_set - o_set:
            out.append((path, "shape_changed", "breaking", pinned, observed))
        elif o_set - p_set:
            out.append((path, "type_widened", "compatible", pinned, observed))
        return
    pinned, observed = dict(pinned), dict(observed)
    p_props, o_props = pinned.pop("properties", None), observed.pop("properties", None)
    p_req, o_req = set(pinned.pop("required", [])), set(observed.pop("required", []))
    if p_props is not None or o_props is not None:
        p_props, o_props = p_props or {}, o_props or {}
        for key, shape in p_props.items():
            where = _join(path, key)
            if key not in o_props:
                if path in open_paths:
                    out.append((where, "argument_undeclared_but_accepted", "compatible", shape, None))
                else:
                    out.append((where, "argument_removed", "breaking", shape, None))
                continue
            if key in o_req and key not in p_req:
                out.append((where, "argument_became_required", "breaking", "optional", "required"))
            elif key in p_req and key not in o_req:
                out.append((where, "argument_no_longer_required", "compatible", "required", "optional"))
            _compare(shape, o_props[key], where, out, open_paths)
        for key, shape in o_props.items():
            if key in p_props:
                continue
            where = _join(path, key)
            if key in o_req:
                out.append((where, "new_required_argument", "breaking", None, shape))
            else:
                out.append((where, "new_optional_argument", "compatible", None, shape))
    p_items, o_items = pinned.pop("items", None), observed.pop("items", None)
    if p_items is not None or o_items is not None:
        if p_items is None or o_items is None:
            out.append((f"{path}[]", "shape_changed", "breaking", p_items, o_items))
        else:
            _compare(p_items, o_items, f"{path}[]", out, open_paths)
    p_values, o_values = pinned.pop("additionalProperties", None), observed.pop("additionalProperties", None)
    if p_values is not None or o_values is not None:
        if p_values is None or o_values is None:
            out.append((f"{path}{{}}", "shape_changed", "breaking", p_values, o_values))
        else:
            _compare(p_values, o_values, f"{path}{{}}", out, open_paths)
    p_enum, o_enum = pinned.pop("enum", None), observed.pop("enum", None)
    if p_enum is not None or o_enum is not None:
        if p_enum is None:
            out.append((path, "enum_narrowed", "breaking", None, o_enum))
        elif o_enum is None:
            out.append((path, "enum_widened", "compatible", p_enum, None))
        else:
            p_set, o_set = {_key(v) for v in p_enum}, {_key(v) for v in o_enum}
            if p_set - o_set:
                out.append((path, "enum_narrowed", "breaking", p_enum, o_enum))
            elif o_set - p_set:
                out.append((path, "enum_widened", "compatible", p_enum, o_enum))
    if pinned != observed:
        out.append((path, "shape_changed", "breaking", pinned, observed))


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def diff_surfaces(pinned: Surface, observed: Surface) -> SurfaceDiff:
    """Every difference between a pin and an observed surface, classified."""
    out: list[Difference] = []
    seen = {t.name: t for t in observed.tools}
    for tool in pinned.tools:
        live = seen.get(tool.name)
        if live is None:
            out.append(Difference(what="tool", name=tool.name, change="missing", severity="breaking"))
            continue
        for path, change, severity, was, now in compare_schemas(tool.input_schema, live.input_schema):
            out.append(
                Difference(
                    what="tool",
                    name=tool.name,
                    change=change,
                    severity=severity,
                    path=path or None,
                    pinned=was,
                    observed=now,
                )
            )
    pinned_tools = {t.name for t in pinned.tools}
    out += [
        Difference(what="tool", name=t.name, change="extra", severity="extra")
        for t in observed.tools
        if t.name not in pinned_tools
    ]
    out += _diff_prompts(pinned, observed)
    out += _diff_resources(pinned, observed)
    return SurfaceDiff(pinned_source=pinned.source, observed_source=observed.source, differences=out)


def _diff_prompts(pinned: Surface, observed: Surface) -> Iterator[Difference]:
    seen = {p.name: p for p in observed.prompts}
    for prompt in pinned.prompts:
        live = seen.get(prompt.name)
        if live is None:
            yield Difference(what="prompt", name=prompt.name, change="missing", severity="breaking")
            continue
        live_args = {a.name: a for a in live.arguments}
        pinned_args = {a.name: a for a in prompt.arguments}
        for arg in prompt.arguments:
            now = live_args.get(arg.name)
            if now is None:
                yield Difference(
                    what="prompt",
                    name=prompt.name,
                    change="argument_removed",
                    severity="breaking",
                    path=arg.name,
                )
            elif now.required and not arg.required:
                yield Difference(
                    what="prompt",
                    name=prompt.name,
                    change="argument_became_required",
                    severity="breaking",
                    path=arg.name,
                )
            elif arg.required and not now.required:
                yield Difference(
                    what="prompt",
                    name=prompt.name,
                    change="argument_no_longer_required",
                    severity="compatible",
                    path=arg.name,
                )
        for arg in live.arguments:
            if arg.name not in pinned_args:
                yield Difference(
                    what="prompt",
                    name=prompt.name,
                    change="new_required_argument" if arg.required else "new_optional_argument",
                    severity="breaking" if arg.required else "compatible",
                    path=arg.name,
                )
    names = {p.name for p in pinned.prompts}
    for prompt in observed.prompts:
        if prompt.name not in names:
            yield Difference(what="prompt", name=prompt.name, change="extra", severity="extra")


def _diff_resources(pinned: Surface, observed: Surface) -> Iterator[Difference]:
    seen = {r.uri: r for r in observed.resources}
    for res in pinned.resources:
        live = seen.get(res.uri)
        if live is None:
            yield Difference(what="resource", name=res.uri, change="missing", severity="breaking")
            continue
        known = res.known()
        now = {k: v for k, v in live.descriptor().items() if k in known}
        if now != known:
            changed = sorted(k for k in known if now.get(k) != known[k])
            yield Difference(
                what="resource",
                name=res.uri,
                change="descriptor_changed",
                severity="breaking",
                path=",".join(changed),
                pinned={k: known[k] for k in changed},
                observed={k: now.get(k) for k in changed},
            )
    uris = {r.uri for r in pinned.resources}
    for res in observed.resources:
        if res.uri not in uris:
            yield Difference(what="resource", name=res.uri, change="extra", severity="extra")


# --- observing a server -------------------------------------------------------------------------------------


async def observe(client: Client, source: str | None = None) -> Surface:
    """What a connected server lists (tools, prompts, resources; every page), without calling anything."""
    tools: list[PinnedTool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        for t in page.tools:
            kind, read_ops = tool_kind(t.name)
            hints = t.annotations
            if kind == "unknown" and hints is not None and hints.read_only_hint is not None:
                kind = "read" if hints.read_only_hint else "write"
            tools.append(
                PinnedTool(
                    name=t.name, kind=kind, read_operations=list(read_ops), input_schema=dict(t.input_schema)
                )
            )
        cursor = page.next_cursor
        if cursor is None:
            break
    capabilities = client.server_capabilities
    prompts: list[PinnedPrompt] = []
    if capabilities.prompts is not None:
        cursor = None
        while True:
            listed = await client.list_prompts(cursor=cursor)
            prompts += [
                PinnedPrompt(
                    name=p.name,
                    arguments=[
                        PromptArgument(name=a.name, required=bool(a.required)) for a in p.arguments or []
                    ],
                )
                for p in listed.prompts
            ]
            cursor = listed.next_cursor
            if cursor is None:
                break
    resources: list[PinnedResource] = []
    if capabilities.resources is not None:
        cursor = None
        while True:
            listed_r = await client.list_resources(cursor=cursor)
            resources += [
                resource(str(r.uri), r.name, r.description, r.mime_type) for r in listed_r.resources
            ]
            cursor = listed_r.next_cursor
            if cursor is None:
                break
    info = client.server_info
    server = ServerInfo(name=info.name, version=info.version or "") if info is not None else None
    label = source or (f"{server.name}@{server.version}" if server is not None else "unnamed server")
    return Surface(source=label, server=server, tools=tools, prompts=prompts, resources=resources)


def next_source(pinned: Surface, observed: Surface) -> str:
    """The source an updated pin records: the pin's own prefix (`hosted`, `oss`) with the observed version."""
    prefix = pinned.source.split("@", 1)[0]
    version = observed.server.version if observed.server is not None else ""
    return f"{prefix}@{version}" if version else observed.source


# --- the surfaces taskforge serves --------------------------------------------------------------------------

TASK_PROMPT = "task"
TASK_PROMPT_DESCRIPTION = "What the workspace's user asks of you in this episode."
KNOWLEDGE_TOOLS = tools_of("knowledge")
RESOURCE_MIME = "text/markdown"


def _final_answer_schema() -> dict[str, Any]:
    from .agents.base import FINAL_ANSWER_SCHEMA

    return FINAL_ANSWER_SCHEMA


def product_pin() -> Surface:
    return load_surface("product")


def product_tool_schemas() -> list[dict[str, Any]]:
    """The product's tools as `serve --surface product` lists them, in the product's order: the product's
    pinned input schema, with our simulator's optional arguments the product lacks added and enums widened by
    our values (compatible additions only: the product's required arguments stay required), and our
    descriptions. Arguments the product takes and the simulator does not model are advertised as the product
    does; the simulator ignores them and says so in the envelope's message."""
    ours = {s["name"]: s for s in tool_schemas()}
    out = []
    for pinned in product_pin().tools:
        mine = ours.get(pinned.name)
        if mine is None:
            raise ValueError(f"the product's tool {pinned.name} has no counterpart in the simulator")
        out.append(
            {
                "name": pinned.name,
                "description": mine["description"],
                "parameters": _widened(pinned.input_schema, mine["parameters"]),
            }
        )
    return out


def _widened(product: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(product)
    props = schema.setdefault("properties", {})
    our_props = {
        k: normalise_schema({**v, "$defs": ours.get("$defs", {})})
        for k, v in ours.get("properties", {}).items()
    }
    for key, shape in our_props.items():
        if key not in props:
            described = ours["properties"][key].get("description")
            props[key] = {**shape, **({"description": described} if described else {})}
        elif isinstance(props[key].get("enum"), list) and isinstance(shape.get("enum"), list):
            props[key]["enum"] = [
                *props[key]["enum"],
                *(v for v in shape["enum"] if v not in props[key]["enum"]),
            ]
    return schema


def served_tools(allowed: Iterable[str] | None, mode: Mode) -> list[dict[str, Any]]:
    """The tools an episode lists: in the simulator's shape every allowed tool of ours, in the product's shape
    the product's tools the task allows; `final_answer` (the harness's) in both."""
    permitted = set(allowed) if allowed else None
    if mode == "simulator":
        chosen = tool_schemas([n for n in (allowed or [])] if permitted else None)
    else:
        chosen = [t for t in product_tool_schemas() if permitted is None or t["name"] in permitted]
    return [*chosen, _final_answer_schema()]


def served_resources(world: World) -> list[PinnedResource]:
    """The world's knowledge documents as MCP resources (`openbb://workspace/…`, as the world names them)."""
    return [
        resource(uri, doc.title, doc.description or None, RESOURCE_MIME)
        for uri, doc in sorted(world.resources.items())
    ]


def served_prompts(world: World) -> list[PinnedPrompt]:
    """The world's workspace prompts as MCP prompts (no arguments, as the product's)."""
    return [PinnedPrompt(name=name) for name in sorted(world.prompts)]


def simulator_surface(world: World | None = None, mode: Mode = "simulator") -> Surface:
    """What `taskforge serve` lists for a task that allows every tool (the simulator's pin is this, in the
    simulator's shape)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("taskforge")
    except PackageNotFoundError:
        ours = ""
    tools = [
        PinnedTool(
            name=t["name"],
            kind=tool_kind(t["name"])[0],
            read_operations=list(tool_kind(t["name"])[1]),
            input_schema=t["parameters"],
        )
        for t in served_tools(None, mode)
    ]
    prompts = [PinnedPrompt(name=TASK_PROMPT)]
    resources: list[PinnedResource] = []
    if mode == "product":
        if world is None:
            raise ValueError("the product's shape lists the world's resources and prompts: give a world")
        prompts = [*served_prompts(world), *prompts]
        resources = served_resources(world)
    return Surface(
        source=f"taskforge@{ours}" if mode == "simulator" else f"taskforge-product-shape@{ours}",
        server=ServerInfo(name="taskforge", version=ours),
        notes=[
            "Generated from the simulator's tool declarations (simulator/toolspec.py) as `taskforge serve` "
            "lists them for a task that allows every tool; `final_answer` and the prompt `task` are the "
            "harness's. Regenerate with `taskforge surface generate --out certify/surfaces/simulator.json`."
        ]
        if mode == "simulator"
        else [],
        tools=tools,
        prompts=prompts,
        resources=resources,
    )
