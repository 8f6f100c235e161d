"""Expand the spec into the files of the default world, and compare them with what is committed."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _fundamentals, _showcase
from ._catalog import CatalogBuilder, build_param_library
from ._common import SpecError, dump_json, load_spec, snake
from ._knowledge import glossary_resources, planted_phrases, prompt_files, resource_files, skill_files
from ._rows import Profile
from ._states import PlacedApp, baseline_document

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "worlds" / "default"
MANAGED_DIRS = ("backends", "initial_states", "skills", "resources", "prompts")
_ALIASES = {
    "fund": "funds",
    "client": "clients",
    "counterparty": "counterparties",
    "broker": "brokers",
    "custodian": "custodians",
    "vendor": "vendors",
    "desk": "desks",
    "region": "regions",
    "sector": "sectors",
    "asset_class": "asset_classes",
    "scenario": "scenarios",
    "currency": "currencies",
    "theme": "themes",
    "dataset": "datasets",
    "department": "departments",
    "person": "people",
}


def _vocabulary(spec: Mapping[str, Any]) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """(option lists for params, pools for row columns)."""
    lists = {k: list(v) for k, v in spec["lists"].items()}
    companies = spec["companies"]
    option_lists = dict(lists)
    option_lists["coverage"] = [
        {"label": f"{c['name']} ({c['ticker']})", "value": c["ticker"]} for c in companies[:6]
    ]
    option_lists["fundamentals_universe"] = [
        {"label": f"{c['name']} ({c['ticker']})", "value": c["ticker"]} for c in companies[:8]
    ]
    pools = {
        **lists,
        **{k: list(v) for k, v in spec["pools"].items()},
        **{k: list(v) for k, v in spec["showcase"].get("pools", {}).items()},
    }
    for alias, target in _ALIASES.items():
        pools.setdefault(alias, lists[target])
    pools["ticker"] = [c["ticker"] for c in companies]
    pools["company"] = [c["name"] for c in companies]
    return option_lists, pools


def _add_apps(
    builder: CatalogBuilder, apps: Sequence[Mapping[str, Any]], origin: str, index: dict[str, PlacedApp]
) -> None:
    for app in apps:
        if app["name"] in index:
            raise SpecError(f"app name {app['name']!r} is used twice in the world")
        index[app["name"]] = PlacedApp(origin=origin, builder=builder, app=builder.add_app(app))


def _source(**fields: Any) -> dict[str, Any]:
    return {"generator": "python -m simulator.worldgen", "spec": "simulator/worldgen/spec.yaml", **fields}


def _profile(name: str, seed: str, conf: Mapping[str, Any] | None = None) -> Profile:
    conf = conf or {}
    return Profile(
        name=name,
        seed=seed,
        per_combo_weights=tuple(conf.get("per_combo_weights", (0.4, 0.4, 0.2))),
        keyless_rows=tuple(conf.get("keyless_rows", (4, 7))),
    )


def _catalogs(spec: Mapping[str, Any]) -> tuple[dict[str, CatalogBuilder], dict[str, PlacedApp]]:
    """The three backends' catalogs (enterprise, fundamentals, showcase) and every app by name."""
    option_lists, pools = _vocabulary(spec)
    params = build_param_library(spec["params"], option_lists)
    tickers = {c["ticker"]: {"sector": c["sector"], "company": c["name"]} for c in spec["companies"]}
    conf = spec["backends"]
    apps: dict[str, PlacedApp] = {}

    ent = conf["enterprise"]
    profiles = [_profile(name, d["seed"], d) for name, d in ent["datasets"].items()]
    enterprise = CatalogBuilder(params=params, vocab=pools, profiles=profiles, tickers=tickers)
    _add_apps(enterprise, spec["enterprise_apps"], ent["origin"], apps)

    fconf = conf["fundamentals"]
    model = _fundamentals.FundamentalsModel(spec["fundamentals"], spec["companies"], fconf["seed"], pools)
    fundamentals = CatalogBuilder(
        params=params,
        vocab=pools,
        profiles=[_profile("main", fconf["seed"])],
        row_builder=_fundamentals.row_builder(model),
    )
    _add_apps(fundamentals, spec["fundamentals"]["apps"], fconf["origin"], apps)
    for entry in spec["fundamentals"]["widgets"]:
        fundamentals.add_widget(entry["id"], entry, category=fconf["origin"])

    sconf = conf["showcase"]
    showcase = CatalogBuilder(
        params=params,
        vocab=pools,
        profiles=[_profile("main", sconf["seed"])],
        row_builder=_showcase.row_builder(sconf["seed"]),
        tickers=tickers,
    )
    _add_apps(showcase, spec["showcase"]["apps"], sconf["origin"], apps)
    return {"enterprise": enterprise, "fundamentals": fundamentals, "showcase": showcase}, apps


def _backend_files(spec: Mapping[str, Any], builders: Mapping[str, CatalogBuilder]) -> tuple[dict, dict]:
    """(files, world.json 'backends' entries); the enterprise catalog is written once per twin dataset."""
    conf = spec["backends"]
    ent = conf["enterprise"]
    files: dict[str, bytes] = {}
    entries: dict[str, dict[str, str]] = {}
    for dataset, slug in ent["slugs"].items():
        path = f"backends/{snake(slug)}.json"
        twin = next(s for s in ent["slugs"].values() if s != slug)
        source = _source(
            dataset=dataset.upper(),
            seed=ent["datasets"][dataset]["seed"],
            twin_of=twin,
            note="Twin datasets share widgets, params and apps; only the baked rows differ.",
        )
        files[path] = dump_json(builders["enterprise"].backend.document(dataset, source))
        entries[slug] = {"file": path, "origin": ent["origin"]}
    for key in ("fundamentals", "showcase"):
        path = f"backends/{snake(conf[key]['slug'])}.json"
        files[path] = dump_json(builders[key].backend.document("main", _source(seed=conf[key]["seed"])))
        entries[conf[key]["slug"]] = {"file": path, "origin": conf[key]["origin"]}
    return files, entries


def build_world(spec_path: Path | None = None) -> dict[str, bytes]:
    """Every file of the world, keyed by its path relative to the world directory."""
    spec = load_spec(spec_path)
    builders, apps = _catalogs(spec)
    files, backends = _backend_files(spec, builders)
    conf = spec["backends"]
    x_slug = conf["enterprise"]["slugs"]["x"]

    desks = {d["name"]: d for d in spec["desks"]}
    enterprise_apps = [a["name"] for a in spec["enterprise_apps"]]
    baselines: dict[str, Any] = {
        spec["baselines"]["all_apps"]["slug"]: {"home": True, "open_all_apps_of": x_slug}
    }
    for base in spec["baselines"]["files"]:
        path = f"initial_states/{base['file']}"
        files[path] = dump_json(baseline_document(base, desks, enterprise_apps, apps))
        baselines[base["slug"]] = path

    option_lists, _ = _vocabulary(spec)
    params = build_param_library(spec["params"], option_lists)
    resources = list(spec["resources"]) + glossary_resources(spec.get("glossaries", []), params)
    files.update(skill_files(spec["skills"]))
    files.update(resource_files(resources))
    files.update(prompt_files(spec["prompts"]))
    files["world.json"] = dump_json(
        {
            "name": spec["world"]["name"],
            "description": spec["world"]["description"],
            "backends": backends,
            "aliases": {conf["enterprise"]["alias"]: x_slug},
            "default_backends": [x_slug, conf["fundamentals"]["slug"], conf["showcase"]["slug"]],
            "baselines": baselines,
            "skills_dir": "skills",
            "resources_dir": "resources",
            "prompts_dir": "prompts",
        }
    )
    check_planted_unique(files, planted_phrases(spec["skills"], resources, spec["prompts"]))
    return files


_PLANTED_LINE = re.compile(r"^planted: .*$\n", re.MULTILINE)


def knowledge_text(path: str, data: bytes) -> str:
    """A file's text as the world presents it, without the planted-phrase metadata."""
    text = data.decode("utf-8")
    if path.startswith("skills/"):
        doc = json.loads(text)
        return "\n".join(str(doc.get(k, "")) for k in ("slug", "name", "description", "content"))
    if path.endswith(".md"):
        return _PLANTED_LINE.sub("", text, count=1)
    return text


def check_planted_unique(files: Mapping[str, bytes], phrases: Sequence[str]) -> None:
    corpus = "\n".join(knowledge_text(p, d) for p, d in sorted(files.items())).lower()
    for phrase in phrases:
        count = corpus.count(phrase.lower())
        if count != 1:
            raise SpecError(
                f"planted phrase {phrase!r} occurs {count} times in the world (must be exactly once)"
            )


def write_world(out_dir: Path, files: Mapping[str, bytes]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for sub in MANAGED_DIRS:
        folder = out_dir / sub
        if folder.is_dir():
            for stale in folder.iterdir():
                if stale.is_file() and f"{sub}/{stale.name}" not in files:
                    stale.unlink()
    for rel, data in files.items():
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def diff_world(out_dir: Path, files: Mapping[str, bytes]) -> list[str]:
    """Paths that are missing, extra or different in out_dir compared with a fresh generation."""
    present = {"world.json"} if (out_dir / "world.json").is_file() else set()
    for sub in MANAGED_DIRS:
        folder = out_dir / sub
        if folder.is_dir():
            present |= {f"{sub}/{p.name}" for p in folder.iterdir() if p.is_file()}
    problems = [f"missing: {p}" for p in sorted(set(files) - present)]
    problems += [f"unexpected: {p}" for p in sorted(present - set(files))]
    problems += [
        f"differs: {p}" for p in sorted(set(files) & present) if (out_dir / p).read_bytes() != files[p]
    ]
    return problems
