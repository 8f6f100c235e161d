"""Loading a world: catalogs of backends, baselines, platform skills, resources and prompts.

A world is a directory of files and loading it is a pure function of those files, so the result is cached and
shared by every episode. Catalog objects are treated as immutable: episodes never mutate them, and tool
results that expose catalog data hand out values an agent cannot write back into the catalog (they are
serialised before they reach it).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .errors import WorldError
from .setup import DashboardSeed

_ROW_KEYS = ("data", "sampleData", "sampleDataByArgs")


def flatten_params(params: Any, *, nested: bool = True) -> list[dict[str, Any]]:
    """Declared params in order: top level, row lists, and (when `nested`) form `inputParams`.

    For a name declared twice the first declaration wins, as the product does.
    """
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def walk(items: Any) -> None:
        if not isinstance(items, list):
            return
        for item in items:
            if isinstance(item, list):
                walk(item)
            elif isinstance(item, dict):
                name = item.get("paramName")
                if isinstance(name, str) and name not in seen:
                    seen.add(name)
                    out.append(item)
                if nested and isinstance(item.get("inputParams"), list):
                    walk(item["inputParams"])

    walk(params)
    return out


@dataclass(frozen=True, slots=True)
class Option:
    """One option a parameter declares: a catalog writes it as a bare value or as a `{label, value}` object."""

    value: Any
    label: str | None = None


def param_options(param: dict[str, Any] | None) -> list[Option]:
    """The options a declared parameter offers, in order ([] when it declares none)."""
    options = (param or {}).get("options")
    if not isinstance(options, list):
        return []
    return [
        Option(o.get("value"), str(o["label"]) if o.get("label") else None)
        if isinstance(o, dict)
        else Option(o)
        for o in options
    ]


def option_values(param: dict[str, Any] | None) -> list[Any]:
    """The values a declared parameter offers, in order ([] when it declares none): `param_options`' values,
    read without making an `Option` of each (asked for every parameter of every widget an agent reads)."""
    options = (param or {}).get("options")
    if not isinstance(options, list):
        return []
    return [o.get("value") if isinstance(o, dict) else o for o in options]


@dataclass(frozen=True, slots=True)
class WidgetDef:
    """One widget of a catalog, split into what an agent may read (the definition) and the baked rows."""

    widget_id: str
    origin: str
    definition: dict[str, Any]
    rows: list[Any] | None
    sample_data: Any
    sample_by_args: list[Any] | None
    params: tuple[dict[str, Any], ...]
    option_params: tuple[dict[str, Any], ...]

    @classmethod
    def build(cls, widget_id: str, origin: str, raw: dict[str, Any]) -> WidgetDef:
        definition = {k: v for k, v in raw.items() if not (k in _ROW_KEYS and k != "data")}
        rows = None
        if isinstance(raw.get("data"), list):
            rows = raw["data"]
            definition.pop("data")
        return cls(
            widget_id=widget_id,
            origin=origin,
            definition=definition,
            rows=rows,
            sample_data=raw.get("sampleData"),
            sample_by_args=raw.get("sampleDataByArgs")
            if isinstance(raw.get("sampleDataByArgs"), list)
            else None,
            params=tuple(flatten_params(raw.get("params"))),
            option_params=tuple(flatten_params(raw.get("params"), nested=False)),
        )

    @property
    def name(self) -> str:
        return str(self.definition.get("name") or self.widget_id)

    @property
    def type(self) -> str:
        kind = self.definition.get("type") or self.definition.get("defaultViz")
        return kind if isinstance(kind, str) and kind else "table"

    @property
    def grid_data(self) -> dict[str, Any] | None:
        grid = self.definition.get("gridData")
        return grid if isinstance(grid, dict) and grid else None

    def grid_size(self) -> tuple[float, float]:
        grid = self.grid_data or {}
        try:
            w = float(grid.get("w", 20))
            h = float(grid.get("h", 10))
        except (TypeError, ValueError):
            return 20.0, 10.0
        return w, h

    def param(self, name: str) -> dict[str, Any] | None:
        for p in self.params:
            if p.get("paramName") == name:
                return p
        return None

    def options(self, name: str) -> list[Any]:
        """The option values of parameter `name` ([] when the widget does not declare it or it offers none)."""
        return option_values(self.param(name))

    def schema(self) -> dict[str, Any]:
        out = dict(self.definition)
        out["origin"] = self.origin
        out["widget_id"] = self.widget_id
        out["grid_data"] = self.grid_data
        return out

    def listing(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "widget_id": self.widget_id,
            "name": self.name,
            "description": str(self.definition.get("description") or ""),
            "type": self.type,
            "category": self.definition.get("category"),
            "grid_data": self.grid_data,
        }


@dataclass(frozen=True, slots=True)
class Catalog:
    """A backend's widgets and apps, as served to the workspace (a world fixture or a custom backend)."""

    origin: str
    widgets: dict[str, WidgetDef]
    apps: tuple[dict[str, Any], ...]
    _listings: dict[str, list[dict[str, Any]]] = field(default_factory=dict, compare=False, repr=False)

    def listing(self, backend_id: str) -> list[dict[str, Any]]:
        """The list_available_widgets entries of this catalog under `backend_id` (built once, read-only)."""
        entries = self._listings.get(backend_id)
        if entries is None:
            entries = []
            for definition in self.widgets.values():
                entry = definition.listing()
                entry["backend_id"] = backend_id
                entries.append(entry)
            self._listings[backend_id] = entries
        return entries

    @property
    def app_names(self) -> tuple[str, ...]:
        """The names of the catalog's apps, in order, each once."""
        return tuple(dict.fromkeys(str(app.get("name")) for app in self.apps))

    def app_widgets(self, name: str) -> tuple[str, ...]:
        """The widget ids the app called `name` lays out: every tab, in layout order, each id once (apps that
        share a name count as one)."""
        ids: dict[str, None] = {}
        for app in self.apps:
            if str(app.get("name")) != name:
                continue
            for tab in (app.get("tabs") or {}).values():
                for item in (tab.get("layout") or []) if isinstance(tab, dict) else []:
                    if isinstance(item, dict):
                        ids.setdefault(str(item.get("i")), None)
        return tuple(ids)

    def apps_of(self, widget_id: str) -> list[str]:
        """The names of the apps that lay out `widget_id`, in catalog order."""
        return [name for name in self.app_names if widget_id in self.app_widgets(name)]

    @classmethod
    def build(cls, origin: str, widgets: dict[str, Any], apps: list[Any]) -> Catalog:
        return cls(
            origin=origin,
            widgets={wid: WidgetDef.build(wid, origin, d) for wid, d in widgets.items()},
            apps=tuple(a for a in apps if isinstance(a, dict)),
        )


@dataclass(frozen=True, slots=True)
class BackendFixture:
    slug: str
    origin: str
    file: str
    catalog: Catalog


@dataclass(frozen=True, slots=True)
class Planted:
    phrase: str
    where: str = ""


@dataclass(frozen=True, slots=True)
class Skill:
    slug: str
    name: str
    description: str
    content: str
    file: str
    planted: tuple[Planted, ...] = ()

    def public(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "name": self.name,
            "description": self.description,
            "content": self.content,
        }


@dataclass(frozen=True, slots=True)
class Resource:
    uri: str
    title: str
    description: str
    text: str
    file: str
    planted: tuple[Planted, ...] = ()

    def public(self) -> dict[str, Any]:
        """What a reader of the resource sees (its file and planted phrases are the world's own business)."""
        return {"uri": self.uri, "title": self.title, "description": self.description, "text": self.text}


@dataclass(frozen=True, slots=True)
class Prompt:
    name: str
    description: str
    text: str
    file: str
    planted: tuple[Planted, ...] = ()

    def public(self) -> dict[str, Any]:
        """What a reader of the prompt sees."""
        return {"name": self.name, "description": self.description, "text": self.text}


@dataclass(frozen=True, slots=True)
class Baseline:
    """A versioned starting workspace: a file of dashboards, or the rule "Home plus every app of a backend"."""

    slug: str
    file: str | None
    dashboards: tuple[DashboardSeed, ...]
    default_backends: tuple[str, ...] | None = None


@dataclass(eq=False)
class World:
    path: Path
    name: str
    description: str
    backends: dict[str, BackendFixture]
    aliases: dict[str, str]
    default_backends: tuple[str, ...]
    baselines: dict[str, Baseline]
    skills: dict[str, Skill]
    resources: dict[str, Resource]
    prompts: dict[str, Prompt]
    fingerprint: str
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    # -- lookup -------------------------------------------------------------------------------------------
    def backend(self, name: str) -> BackendFixture | None:
        """A fixture by slug, alias, file stem or display name."""
        if name in self.backends:
            return self.backends[name]
        target = self.aliases.get(name)
        if target is not None and target in self.backends:
            return self.backends[target]
        for fixture in self.backends.values():
            if fixture.origin == name or Path(fixture.file).stem == name:
                return fixture
        return None

    def fixture_of(self, origin: str, among: Iterable[str] | None = None) -> BackendFixture | None:
        """The fixture serving `origin` (a display name): the first of the backends `among` (slugs, aliases or
        names, as a setup lists them) that serves it, or of every backend when `among` is None."""
        for name in self.backends if among is None else among:
            fixture = self.backend(name)
            if fixture is not None and fixture.origin == origin:
                return fixture
        return None

    def all_text(self) -> list[tuple[str, str]]:
        """Every piece of text an agent could read, with where it lives; used to check planted values."""
        out: list[tuple[str, str]] = []
        for fixture in self.backends.values():
            for wid, w in fixture.catalog.widgets.items():
                out.append((f"{fixture.file}:widgets.{wid}", json.dumps(w.definition, sort_keys=True)))
                if w.rows is not None:
                    out.append((f"{fixture.file}:widgets.{wid}.data", json.dumps(w.rows, sort_keys=True)))
            for i, app in enumerate(fixture.catalog.apps):
                out.append((f"{fixture.file}:apps[{i}]", json.dumps(app, sort_keys=True)))
        for s in self.skills.values():
            out.append((s.file, "\n".join([s.name, s.description, s.content])))
        for r in self.resources.values():
            out.append((r.file, "\n".join([r.title, r.description, r.text])))
        for p in self.prompts.values():
            out.append((p.file, "\n".join([p.description, p.text])))
        for b in self.baselines.values():
            for d in b.dashboards:
                for g in d.generated_widgets:
                    out.append((f"{b.file or b.slug}:{d.name}.{g.name}", json.dumps(g.data, sort_keys=True)))
        return out

    # -- loading ------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> World:
        """Load (or reuse) the world at `path`. Reloads only when a file under it changed."""
        root = Path(path).resolve()
        if not root.is_dir():
            raise WorldError(str(path), "path", "world directory does not exist")
        signature = _signature(root)
        key = (str(root), signature)
        with _LOCK:
            hit = _CACHE.get(key)
        if hit is not None:
            return hit
        world = _load(root)
        with _LOCK:
            _CACHE[key] = world
        return world


_CACHE: dict[tuple[str, tuple[Any, ...]], World] = {}
_LOCK = threading.Lock()


def _signature(root: Path) -> tuple[Any, ...]:
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            st = os.stat(full)
            entries.append((os.path.relpath(full, root), st.st_mtime_ns, st.st_size))
    return tuple(entries)


class _Reader:
    """Reads files of one world, remembering their bytes for the world's fingerprint."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.digest = hashlib.sha256()

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def read(self, path: Path) -> str:
        data = path.read_bytes()
        self.digest.update(self.rel(path).encode() + b"\0" + data + b"\0")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WorldError(self.rel(path), "(file)", f"not UTF-8 text: {exc}") from exc

    def json(self, path: Path) -> Any:
        if not path.is_file():
            raise WorldError(
                self.rel(path) if path.is_relative_to(self.root) else str(path),
                "(file)",
                "file does not exist",
            )
        text = self.read(path)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise WorldError(
                self.rel(path), f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}"
            ) from exc

    def front_matter(self, path: Path) -> tuple[dict[str, Any], str]:
        text = self.read(path)
        if not text.startswith("---"):
            return {}, text
        parts = text.split("\n---", 1)
        if len(parts) != 2:
            raise WorldError(self.rel(path), "front matter", "opening '---' has no closing '---'")
        try:
            meta = yaml.safe_load(parts[0][3:]) or {}
        except yaml.YAMLError as exc:
            raise WorldError(self.rel(path), "front matter", f"invalid YAML: {exc}") from exc
        if not isinstance(meta, dict):
            raise WorldError(self.rel(path), "front matter", "must be a mapping")
        body = parts[1]
        if body.startswith("\n"):
            body = body[1:]
        return meta, body.strip("\n")


def _planted(file: str, raw: Any) -> tuple[Planted, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise WorldError(file, "planted", "must be a list of phrases or {phrase, where} objects")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            out.append(Planted(item))
        elif isinstance(item, dict) and isinstance(item.get("phrase"), str):
            out.append(Planted(item["phrase"], str(item.get("where") or "")))
        else:
            raise WorldError(file, f"planted[{i}]", "must be a phrase or an object with a string 'phrase'")
    return tuple(out)


def _str_field(file: str, obj: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise WorldError(file, key, "must be a non-empty string")
    return value


def _load(root: Path) -> World:
    reader = _Reader(root)
    manifest_path = root / "world.json"
    manifest: dict[str, Any] = {}
    if manifest_path.is_file():
        manifest = reader.json(manifest_path)
        if not isinstance(manifest, dict):
            raise WorldError("world.json", "(root)", "must be a JSON object")

    backends = _load_backends(root, reader, manifest)
    aliases = manifest.get("aliases") or {}
    if not isinstance(aliases, dict):
        raise WorldError("world.json", "aliases", "must be an object mapping slug to backend slug")
    for alias, target in aliases.items():
        if target not in backends:
            raise WorldError("world.json", f"aliases.{alias}", f"points to unknown backend '{target}'")

    default_backends = manifest.get("default_backends")
    if default_backends is None:
        default_backends = list(backends)
    if not isinstance(default_backends, list) or not all(isinstance(s, str) for s in default_backends):
        raise WorldError("world.json", "default_backends", "must be a list of backend slugs")
    for slug in default_backends:
        if slug not in backends and slug not in aliases:
            raise WorldError("world.json", "default_backends", f"unknown backend '{slug}'")

    skills: dict[str, Skill] = {}
    skills_dir = root / str(manifest.get("skills_dir", "skills"))
    for path in sorted(skills_dir.glob("*.json")) if skills_dir.is_dir() else []:
        rel = reader.rel(path)
        raw = reader.json(path)
        if not isinstance(raw, dict):
            raise WorldError(rel, "(root)", "a skill must be a JSON object")
        skill = Skill(
            slug=_str_field(rel, raw, "slug"),
            name=_str_field(rel, raw, "name"),
            description=_str_field(rel, raw, "description", required=False),
            content=_str_field(rel, raw, "content"),
            file=rel,
            planted=_planted(rel, raw.get("planted")),
        )
        if skill.slug in skills:
            raise WorldError(
                rel, "slug", f"duplicate skill slug '{skill.slug}' (also in {skills[skill.slug].file})"
            )
        skills[skill.slug] = skill

    resources: dict[str, Resource] = {}
    res_dir = root / str(manifest.get("resources_dir", "resources"))
    for path in sorted(res_dir.glob("*.md")) if res_dir.is_dir() else []:
        rel = reader.rel(path)
        meta, body = reader.front_matter(path)
        res = Resource(
            uri=_str_field(rel, meta, "uri"),
            title=_str_field(rel, meta, "title", required=False),
            description=_str_field(rel, meta, "description", required=False),
            text=body,
            file=rel,
            planted=_planted(rel, meta.get("planted")),
        )
        if res.uri in resources:
            raise WorldError(rel, "uri", f"duplicate resource uri '{res.uri}'")
        resources[res.uri] = res

    prompts: dict[str, Prompt] = {}
    prompt_dir = root / str(manifest.get("prompts_dir", "prompts"))
    for path in sorted(prompt_dir.glob("*.md")) if prompt_dir.is_dir() else []:
        rel = reader.rel(path)
        meta, body = reader.front_matter(path)
        prompt = Prompt(
            name=_str_field(rel, meta, "name"),
            description=_str_field(rel, meta, "description", required=False),
            text=body,
            file=rel,
            planted=_planted(rel, meta.get("planted")),
        )
        prompts[prompt.name] = prompt

    baselines = _load_baselines(root, reader, manifest, backends)

    return World(
        path=root,
        name=str(manifest.get("name") or root.name),
        description=str(manifest.get("description") or ""),
        backends=backends,
        aliases=dict(aliases),
        default_backends=tuple(default_backends),
        baselines=baselines,
        skills=skills,
        resources=resources,
        prompts=prompts,
        fingerprint=reader.digest.hexdigest(),
    )


def _load_backends(root: Path, reader: _Reader, manifest: dict[str, Any]) -> dict[str, BackendFixture]:
    declared = manifest.get("backends")
    entries: list[tuple[str, str, str | None]] = []
    if declared is None:
        for path in sorted((root / "backends").glob("*.json")):
            entries.append((path.stem.replace("_", "-"), reader.rel(path), None))
    elif isinstance(declared, dict):
        for slug, spec in declared.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("file"), str):
                raise WorldError("world.json", f"backends.{slug}", "must be an object with a string 'file'")
            origin = spec.get("origin")
            if origin is not None and (not isinstance(origin, str) or not origin):
                raise WorldError("world.json", f"backends.{slug}.origin", "must be a non-empty string")
            entries.append((slug, spec["file"], origin))
    else:
        raise WorldError("world.json", "backends", "must be an object mapping slug to {file, origin}")

    backends: dict[str, BackendFixture] = {}
    for slug, file, origin in entries:
        path = (root / file).resolve()
        if not path.is_relative_to(root):
            raise WorldError("world.json", f"backends.{slug}.file", "must stay inside the world directory")
        raw = reader.json(path)
        rel = reader.rel(path)
        if not isinstance(raw, dict):
            raise WorldError(rel, "(root)", "a backend file must be a JSON object")
        widgets = raw.get("widgets", {})
        if not isinstance(widgets, dict):
            raise WorldError(rel, "widgets", "must be an object keyed by widget id")
        for wid, definition in widgets.items():
            if not isinstance(definition, dict):
                raise WorldError(rel, f"widgets.{wid}", "a widget definition must be an object")
        apps = raw.get("apps", [])
        if not isinstance(apps, list):
            raise WorldError(rel, "apps", "must be a list of apps")
        for i, app in enumerate(apps):
            if not isinstance(app, dict) or not isinstance(app.get("tabs", {}), dict):
                raise WorldError(rel, f"apps[{i}]", "an app must be an object whose 'tabs' is an object")
        display = origin or raw.get("origin") or slug
        backends[slug] = BackendFixture(slug, display, rel, Catalog.build(display, widgets, apps))
    return backends


def _load_baselines(
    root: Path, reader: _Reader, manifest: dict[str, Any], backends: dict[str, BackendFixture]
) -> dict[str, Baseline]:
    declared = manifest.get("baselines") or {}
    if not isinstance(declared, dict):
        raise WorldError("world.json", "baselines", "must be an object mapping slug to a file or a rule")
    aliases = manifest.get("aliases") or {}
    out: dict[str, Baseline] = {}
    for slug, spec in declared.items():
        where = f"baselines.{slug}"
        if isinstance(spec, str):
            path = (root / spec).resolve()
            if not path.is_relative_to(root):
                raise WorldError("world.json", where, "must stay inside the world directory")
            raw = reader.json(path)
            rel = reader.rel(path)
            state = raw.get("initial_state") if isinstance(raw, dict) else None
            dashboards = state.get("dashboards") if isinstance(state, dict) else None
            if not isinstance(dashboards, list):
                raise WorldError(rel, "initial_state.dashboards", "must be a list of dashboards")
            seeds = []
            for i, d in enumerate(dashboards):
                try:
                    seeds.append(DashboardSeed.model_validate(d))
                except ValidationError as exc:
                    err = exc.errors()[0]
                    loc = ".".join(str(p) for p in err["loc"])
                    raise WorldError(rel, f"initial_state.dashboards[{i}].{loc}", err["msg"]) from exc
            extra = raw.get("backends") if isinstance(raw, dict) else None
            out[slug] = Baseline(slug, rel, tuple(seeds), tuple(extra) if isinstance(extra, list) else None)
        elif isinstance(spec, dict):
            unknown = set(spec) - {"home", "open_all_apps_of"}
            if unknown:
                raise WorldError(
                    "world.json", f"{where}.{sorted(unknown)[0]}", "unknown key in a baseline rule"
                )
            source = spec.get("open_all_apps_of")
            fixture = backends.get(aliases.get(source, source)) if isinstance(source, str) else None
            if source is not None and fixture is None:
                raise WorldError("world.json", f"{where}.open_all_apps_of", f"unknown backend '{source}'")
            seeds = []
            if spec.get("home", True):
                seeds.append(DashboardSeed(name="Home", activate=True, tabs=[{"id": "", "name": ""}]))
            if fixture is not None:
                seeds.extend(_app_dashboards(fixture))
            out[slug] = Baseline(slug, None, tuple(seeds))
        else:
            raise WorldError("world.json", where, "must be a file path or a rule object")
    return out


def _app_dashboards(fixture: BackendFixture) -> list[DashboardSeed]:
    """Every app of a backend opened as a dashboard, with the app's tabs, layouts and parameters."""
    seeds = []
    for app in fixture.catalog.apps:
        tabs, widgets = [], []
        for key, tab in (app.get("tabs") or {}).items():
            tab = tab if isinstance(tab, dict) else {}
            tab_id = str(tab.get("id") if tab.get("id") is not None else key)
            tabs.append({"id": tab_id, "name": str(tab.get("name") or tab_id)})
            for item in tab.get("layout") or []:
                if not isinstance(item, dict) or item.get("i") not in fixture.catalog.widgets:
                    continue
                raw_state = item.get("state")
                state = raw_state if isinstance(raw_state, dict) else {}
                widgets.append(
                    {
                        "origin": fixture.origin,
                        "widget_id": item["i"],
                        "tab_id": tab_id,
                        "data_args": dict(state.get("params") or {}),
                        "layout": {k: item[k] for k in ("x", "y", "w", "h") if k in item},
                    }
                )
        seeds.append(
            DashboardSeed(name=str(app.get("name") or "App"), activate=False, tabs=tabs, widgets=widgets)
        )
    return seeds
