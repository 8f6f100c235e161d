"""The default world: generated deterministically from simulator/worldgen/spec.yaml, and well-formed."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from simulator.grid import GRID_COLUMNS
from simulator.validation import WIDGET_TYPES
from simulator.worldgen import DEFAULT_OUT, build_world, diff_world, knowledge_text, write_world
from simulator.worldgen.__main__ import main as worldgen_main

WORLD = DEFAULT_OUT
GRID = GRID_COLUMNS
RESOURCE_URIS = {
    "openbb://workspace/app-builder/index",
    "openbb://workspace/overview/what-is-workspace",
    "openbb://workspace/overview/ai-agent-contract",
    "openbb://workspace/contract/backend",
    "openbb://workspace/specs/widgets-json",
    "openbb://workspace/specs/apps-json",
    "openbb://workspace/specs/widget-types",
    "openbb://workspace/specs/widget-parameters",
    "openbb://workspace/specs/layout-grid",
    "openbb://workspace/guides/build-an-app",
    "openbb://workspace/guides/review-app",
    "openbb://workspace/guides/debug-app",
    "openbb://workspace/guides/convert-endpoint-to-widget",
    "openbb://workspace/examples/generic-http/minimal",
    "openbb://workspace/examples/python-fastapi/minimal",
    "openbb://workspace/validation/common-errors",
    "openbb://workspace/handbooks/client-reporting-calendar",
    "openbb://workspace/handbooks/barrier-desk-roster",
    "openbb://workspace/handbooks/pre-open-timetable",
    "openbb://workspace/handbooks/valuation-policy",
    "openbb://workspace/handbooks/settlement-handover",
    "openbb://workspace/handbooks/stress-scenarios",
    "openbb://workspace/handbooks/research-calendar",
    "openbb://workspace/handbooks/desk-limits",
}
GLOSSARY_URIS = {
    "openbb://workspace/conventions/execution-desks",
    "openbb://workspace/conventions/client-reporting",
    "openbb://workspace/conventions/compliance-standards",
    "openbb://workspace/conventions/operations-rulebook",
    "openbb://workspace/conventions/portfolio-desk",
    "openbb://workspace/conventions/research-house-rules",
}


def _load(rel: str) -> Any:
    return json.loads((WORLD / rel).read_text(encoding="utf-8"))


def _front_matter(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    _, head, body = text.split("---\n", 2)
    return yaml.safe_load(head), body


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return _load("world.json")


@pytest.fixture(scope="module")
def backends(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {slug: _load(entry["file"]) for slug, entry in manifest["backends"].items()}


@pytest.fixture(scope="module")
def origins(manifest: dict[str, Any], backends: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """origin display name -> catalog (the X twin stands for the enterprise origin)."""
    out: dict[str, dict[str, Any]] = {}
    for slug, entry in manifest["backends"].items():
        out.setdefault(entry["origin"], backends[slug])
    return out


@pytest.fixture(scope="module")
def states(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {slug: _load(rel) for slug, rel in manifest["baselines"].items() if isinstance(rel, str)}


def _distinct_catalogs(
    manifest: dict[str, Any], backends: dict[str, dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    seen: set[str] = set()
    for slug, entry in manifest["backends"].items():
        if entry["origin"] not in seen:
            seen.add(entry["origin"])
            yield backends[slug]


def _overlaps(a: dict[str, int], b: dict[str, int]) -> bool:
    return min(a["x"] + a["w"], b["x"] + b["w"]) > max(a["x"], b["x"]) and min(
        a["y"] + a["h"], b["y"] + b["h"]
    ) > max(a["y"], b["y"])


def _check_boxes(boxes: list[dict[str, int]], where: str) -> None:
    for box in boxes:
        assert box["x"] >= 0 and box["y"] >= 0 and box["w"] > 0 and box["h"] > 0, where
        assert box["x"] + box["w"] <= GRID, f"{where}: {box} leaves the 40-column grid"
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not _overlaps(a, b), f"{where}: {a} overlaps {b}"


def _valid_args(definition: dict[str, Any], args: dict[str, Any], where: str) -> None:
    declared = {p["paramName"]: p for p in definition["params"]}
    for name, value in args.items():
        assert name in declared, f"{where}: undeclared param {name}"
        options = [o["value"] for o in declared[name].get("options", [])]
        if options:
            assert value in options, f"{where}: {name}={value!r} not among {options}"


# --- determinism --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fresh() -> dict[str, bytes]:
    return build_world()


def test_regeneration_reproduces_committed_files_byte_for_byte(
    tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    write_world(tmp_path, fresh)
    assert diff_world(WORLD, fresh) == []
    assert diff_world(tmp_path, fresh) == []
    for rel in fresh:
        assert (tmp_path / rel).read_bytes() == (WORLD / rel).read_bytes(), rel


def test_check_mode_reports_drift(
    tmp_path: Path,
    fresh: dict[str, bytes],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("simulator.worldgen.__main__.build_world", lambda: fresh)
    write_world(tmp_path, fresh)
    assert worldgen_main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "skills" / "nav_close_checklist.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "resources" / "stray.md").write_text("x\n", encoding="utf-8")
    assert worldgen_main(["--out", str(tmp_path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "differs: skills/nav_close_checklist.json" in out
    assert "unexpected: resources/stray.md" in out


def test_json_files_are_sorted_and_end_with_a_newline() -> None:
    for path in sorted(WORLD.rglob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert text.endswith("}\n"), path
        assert text == json.dumps(json.loads(text), sort_keys=True, indent=1, ensure_ascii=False) + "\n", path


# --- manifest and counts ------------------------------------------------------------------------------------


def test_manifest_layout(manifest: dict[str, Any]) -> None:
    assert manifest["name"] == "default"
    slugs = manifest["backends"]
    for entry in slugs.values():
        assert (WORLD / entry["file"]).is_file()
    assert manifest["aliases"] == {"tidewell-enterprise": "tidewell-enterprise-x"}
    assert manifest["default_backends"] == [
        "tidewell-enterprise-x",
        "plumbline-fundamentals",
        "widget-showcase",
    ]
    assert (
        slugs["tidewell-enterprise-x"]["origin"]
        == slugs["tidewell-enterprise-y"]["origin"]
        == "Tidewell Enterprise"
    )
    assert manifest["baselines"]["all-tidewell-apps"] == {
        "home": True,
        "open_all_apps_of": "tidewell-enterprise-x",
    }
    for slug in ("tidewell-workspace-a", "tidewell-onboard-a", "tidewell-onboard-b"):
        assert (WORLD / manifest["baselines"][slug]).is_file()
    assert (manifest["skills_dir"], manifest["resources_dir"], manifest["prompts_dir"]) == (
        "skills",
        "resources",
        "prompts",
    )


def test_counts(
    manifest: dict[str, Any], backends: dict[str, dict[str, Any]], states: dict[str, Any]
) -> None:
    catalogs = list(_distinct_catalogs(manifest, backends))
    assert sum(len(c["apps"]) for c in catalogs) >= 22
    assert sum(len(c["widgets"]) for c in catalogs) >= 320
    types = {w["type"] for c in catalogs for w in c["widgets"].values()}
    assert len(types) >= 10 and types <= WIDGET_TYPES
    showcase = {w["type"] for w in backends["widget-showcase"]["widgets"].values()}
    assert {
        "table",
        "chart",
        "metric",
        "markdown",
        "newsfeed",
        "pdf",
        "live_grid",
        "omni",
        "html",
        "chart-highcharts",
        "advanced_charting",
        "multi_file_viewer",
    } <= showcase
    assert len(list((WORLD / "skills").glob("*.json"))) >= 12
    assert len(list((WORLD / "resources").glob("*.md"))) >= 12
    assert sorted(p.name for p in (WORLD / "prompts").glob("*.md")) == [
        "workspace_session_context.md",
        "workspace_tool_usage.md",
    ]
    assert len(states["tidewell-workspace-a"]["initial_state"]["dashboards"]) >= 25
    for slug in ("tidewell-onboard-a", "tidewell-onboard-b"):
        assert 6 <= len(states[slug]["initial_state"]["dashboards"]) <= 8
    total = sum(p.stat().st_size for p in WORLD.rglob("*") if p.is_file())
    assert total < 6_000_000


# --- twin datasets ------------------------------------------------------------------------------------------


def test_twins_share_the_catalog_and_differ_in_rows(backends: dict[str, dict[str, Any]]) -> None:
    x, y = backends["tidewell-enterprise-x"], backends["tidewell-enterprise-y"]
    assert x["apps"] == y["apps"]
    strip = lambda cat: {k: {f: v for f, v in w.items() if f != "data"} for k, w in cat["widgets"].items()}  # noqa: E731
    assert strip(x) == strip(y)
    differ = sum(x["widgets"][k]["data"] != y["widgets"][k]["data"] for k in x["widgets"])
    assert differ >= 0.95 * len(x["widgets"])
    assert sum(len(w["data"]) for w in x["widgets"].values()) != sum(
        len(w["data"]) for w in y["widgets"].values()
    )


def test_twin_rows_differ_for_the_same_params(backends: dict[str, dict[str, Any]]) -> None:
    x, y = backends["tidewell-enterprise-x"], backends["tidewell-enterprise-y"]
    app = x["apps"][0]
    for tab in app["tabs"].values():
        for item in tab["layout"]:
            args = item["state"]["params"]

            def pick(rows: list[dict[str, Any]], args: dict[str, Any] = args) -> list[dict[str, Any]]:
                keys = [k for k in args if rows and k in rows[0]]
                return [r for r in rows if all(str(r[k]) == str(args[k]) for k in keys)]

            assert pick(x["widgets"][item["i"]]["data"]) != pick(y["widgets"][item["i"]]["data"]), item["i"]


# --- catalog well-formedness --------------------------------------------------------------------------------


def test_widget_definitions(manifest: dict[str, Any], backends: dict[str, dict[str, Any]]) -> None:
    for catalog in _distinct_catalogs(manifest, backends):
        for wid, w in catalog["widgets"].items():
            assert {"name", "description", "category", "type", "endpoint", "gridData", "params"} <= set(w), (
                wid
            )
            assert w["type"] in WIDGET_TYPES, wid
            assert 10 <= w["gridData"]["w"] <= GRID and w["gridData"]["h"] >= 4, wid
            names = [p["paramName"] for p in w["params"]]
            assert len(names) == len(set(names)), wid
            for p in w["params"]:
                assert p["type"] in {"text", "date", "ticker", "number", "boolean"}, wid
                if p.get("options"):
                    assert p["value"] in [o["value"] for o in p["options"]], f"{wid}.{p['paramName']}"


def test_rows_use_declared_columns_and_never_name_their_widget(
    manifest: dict[str, Any], backends: dict[str, dict[str, Any]]
) -> None:
    for slug in manifest["backends"]:
        for wid, w in backends[slug]["widgets"].items():
            fields = {c["field"] for c in w["schema_data"]["table"]["columnsDefs"]}
            assert isinstance(w["data"], list) and w["data"], wid
            for row in w["data"]:
                assert set(row) <= fields, f"{slug}/{wid}: {set(row) - fields}"
                for value in row.values():
                    if isinstance(value, str):
                        assert wid not in value and w["name"].lower() not in value.lower(), (
                            f"{slug}/{wid}: {value}"
                        )


def test_key_param_columns_cover_every_option(
    manifest: dict[str, Any], backends: dict[str, dict[str, Any]]
) -> None:
    """A param that is also a row column has rows for each of its options, so filtering is param-specific."""
    for slug in manifest["backends"]:
        for wid, w in backends[slug]["widgets"].items():
            columns = set(w["data"][0])
            keyed = [p for p in w["params"] if p.get("options") and p["paramName"] in columns]
            assert len(keyed) <= 2, wid
            for p in keyed:
                present = {str(r[p["paramName"]]) for r in w["data"]}
                assert {str(o["value"]) for o in p["options"]} <= present, f"{slug}/{wid}.{p['paramName']}"
            if slug.startswith("tidewell-enterprise") and len(keyed) == 2 and w["type"] != "metric":
                combos = Counter((r[keyed[0]["paramName"]], r[keyed[1]["paramName"]]) for r in w["data"])
                assert len(combos) == len(keyed[0]["options"]) * len(keyed[1]["options"]), wid
                assert set(combos.values()) <= {1, 2, 3}, wid


def test_apps_layouts_and_state(manifest: dict[str, Any], backends: dict[str, dict[str, Any]]) -> None:
    for catalog in _distinct_catalogs(manifest, backends):
        for app in catalog["apps"]:
            assert {
                "name",
                "description",
                "template_id",
                "allowCustomization",
                "groups",
                "prompts",
                "tabs",
            } <= set(app)
            assert 2 <= len(app["prompts"]) <= 3, app["name"]
            assert len(app["tabs"]) == 3, app["name"]
            names = [catalog["widgets"][i["i"]]["name"] for t in app["tabs"].values() for i in t["layout"]]
            assert len(names) == len(set(names)), f"{app['name']}: widget names repeat"
            for tab_id, tab in app["tabs"].items():
                assert tab["id"] == tab_id and tab["name"]
                assert 3 <= len(tab["layout"]) <= 6, f"{app['name']}/{tab_id}"
                for item in tab["layout"]:
                    assert item["i"] in catalog["widgets"], item["i"]
                    _valid_args(catalog["widgets"][item["i"]], item["state"]["params"], item["i"])
                _check_boxes([{k: i[k] for k in "xywh"} for i in tab["layout"]], f"{app['name']}/{tab_id}")


def test_enterprise_personas_and_cross_app_names(backends: dict[str, dict[str, Any]]) -> None:
    catalog = backends["tidewell-enterprise-x"]
    assert len(catalog["apps"]) >= 18
    by_name: dict[str, set[str]] = {}
    for app in catalog["apps"]:
        for tab in app["tabs"].values():
            for item in tab["layout"]:
                by_name.setdefault(catalog["widgets"][item["i"]]["name"], set()).add(app["name"])
    shared = {n for n, apps in by_name.items() if len(apps) > 1}
    assert len(shared) >= 3, shared
    for wid in catalog["widgets"]:
        assert wid == wid.lower() and " " not in wid


# --- baselines ----------------------------------------------------------------------------------------------


def test_initial_states(
    origins: dict[str, dict[str, Any]], backends: dict[str, dict[str, Any]], states: dict[str, Any]
) -> None:
    enterprise_apps = [a["name"] for a in backends["tidewell-enterprise-x"]["apps"]]
    for slug, doc in states.items():
        dashboards = doc["initial_state"]["dashboards"]
        home = dashboards[0]
        assert home == {"name": "Home", "activate": True, "tabs": [{"id": "", "name": ""}], "widgets": []}, (
            slug
        )
        assert all(d["activate"] is False for d in dashboards[1:]), slug
        assert len({d["name"] for d in dashboards}) == len(dashboards), slug
        for dash in dashboards[1:]:
            tab_ids = {t["id"] for t in dash["tabs"]}
            boxes: dict[str, list[dict[str, int]]] = {}
            for w in dash["widgets"]:
                catalog = origins[w["origin"]]
                assert w["widget_id"] in catalog["widgets"], f"{slug}/{dash['name']}: {w['widget_id']}"
                assert w["tab_id"] in tab_ids
                _valid_args(catalog["widgets"][w["widget_id"]], w["data_args"], w["widget_id"])
                boxes.setdefault(w["tab_id"], []).append(w["layout"])
            for note in dash.get("generated_widgets", []):
                assert note["widget_type"] == "note" and note["name"] and note["data"]
                assert note["tab_id"] in tab_ids
                boxes.setdefault(note["tab_id"], []).append(note["layout"])
            for tab_id, tab_boxes in boxes.items():
                _check_boxes(tab_boxes, f"{slug}/{dash['name']}/{tab_id}")
    workspace = states["tidewell-workspace-a"]["initial_state"]["dashboards"]
    assert [d["name"] for d in workspace[1 : 1 + len(enterprise_apps)]] == enterprise_apps
    desks = workspace[1 + len(enterprise_apps) :]
    assert 3 <= len(desks) <= 4 and any(d.get("generated_widgets") for d in desks)
    for desk in desks:
        assert len({w["widget_id"].split("_")[0] for w in desk["widgets"]}) >= 2, desk["name"]


def test_app_dashboards_match_their_apps(backends: dict[str, dict[str, Any]], states: dict[str, Any]) -> None:
    apps = {a["name"]: a for a in backends["tidewell-enterprise-x"]["apps"]}
    for doc in states.values():
        for dash in doc["initial_state"]["dashboards"]:
            if dash["name"] not in apps:
                continue
            app = apps[dash["name"]]
            assert [t["id"] for t in dash["tabs"]] == list(app["tabs"])
            expected = [
                (tab_id, i["i"], i["state"]["params"], {k: i[k] for k in "xywh"})
                for tab_id, tab in app["tabs"].items()
                for i in tab["layout"]
            ]
            assert [
                (w["tab_id"], w["widget_id"], w["data_args"], w["layout"]) for w in dash["widgets"]
            ] == expected


# --- knowledge ----------------------------------------------------------------------------------------------


def _phrase(item: Any) -> str:
    return item["phrase"] if isinstance(item, dict) else item


def _planted() -> list[tuple[str, str]]:
    """(phrase, file it is attributed to) for every planted phrase in the world."""
    out = []
    for path in sorted((WORLD / "skills").glob("*.json")):
        out += [(p["phrase"], f"skills/{path.name}") for p in json.loads(path.read_text())["planted"]]
    for sub in ("resources", "prompts"):
        for path in sorted((WORLD / sub).glob("*.md")):
            out += [(_phrase(p), f"{sub}/{path.name}") for p in _front_matter(path)[0].get("planted", [])]
    return out


def test_skills() -> None:
    paths = sorted((WORLD / "skills").glob("*.json"))
    for path in paths:
        skill = json.loads(path.read_text(encoding="utf-8"))
        assert set(skill) == {"slug", "name", "description", "content", "planted"}
        assert path.stem == skill["slug"].replace("-", "_")
        assert skill["slug"] == skill["slug"].lower() and "_" not in skill["slug"]
        steps = [line for line in skill["content"].splitlines() if line[:1].isdigit()]
        assert len(steps) >= 5 and steps[-1].startswith(f"{len(steps)}. ")
        assert skill["planted"], path.name
        for p in skill["planted"]:
            assert p["phrase"] in skill["content"] and p["where"], p


def test_resources_and_prompts() -> None:
    uris = set()
    for path in sorted((WORLD / "resources").glob("*.md")):
        meta, body = _front_matter(path)
        assert {"uri", "title", "description"} <= set(meta) and body.strip(), path.name
        uris.add(meta["uri"])
        for item in meta.get("planted", []):
            assert _phrase(item) in body
    assert uris == RESOURCE_URIS | GLOSSARY_URIS
    for path in sorted((WORLD / "prompts").glob("*.md")):
        meta, body = _front_matter(path)
        assert meta["name"] == path.stem and meta["description"] and meta["planted"]
        for item in meta["planted"]:
            assert _phrase(item) in body and item["where"]


def test_every_planted_phrase_occurs_exactly_once_in_the_world() -> None:
    planted = _planted()
    assert len(planted) >= 20
    corpus = {
        str(p.relative_to(WORLD)): knowledge_text(str(p.relative_to(WORLD)), p.read_bytes()).lower()
        for p in sorted(WORLD.rglob("*"))
        if p.is_file()
    }
    for phrase, home in planted:
        hits = {rel: text.count(phrase.lower()) for rel, text in corpus.items()}
        hits = {rel: n for rel, n in hits.items() if n}
        assert hits == {home: 1}, f"{phrase!r}: {hits}"


def test_no_compatibility_corpus_names_leak() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in WORLD.rglob("*") if p.is_file()).lower()
    names = ("stark", "bench", "daloopa", "flagship long/short", "northstar", "meridian", "atlas pension")
    found = set(re.findall(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b", text))
    assert not found, found


# --- deeper levels: policy glossaries, the index, ground facts in varied positions ----------------------------

_RULE = re.compile(r"^- \*\*(.+?)\*\* sets the (.+?) to (.+?): ", re.M)


def test_glossaries_define_every_rule_next_to_a_rival_value() -> None:
    """A Derive policy resolves only by reading its own line: each rule shares its parameter with another rule of
    the same glossary that sets a different value."""
    for path in sorted((WORLD / "resources").glob("*.md")):
        meta, body = _front_matter(path)
        if meta["uri"] not in GLOSSARY_URIS:
            continue
        rules = _RULE.findall(body)
        assert len(rules) >= 4, path.name
        for phrase, label, value in rules:
            rivals = {v for p, lab, v in rules if lab == label and p != phrase}
            assert rivals - {value}, f"{path.name}: {phrase} has no rival setting the {label}"
            assert phrase.lower() in meta["description"].lower(), phrase


def test_glossary_rules_are_checked_against_the_parameter_library() -> None:
    from simulator.worldgen._catalog import build_param_library
    from simulator.worldgen._common import SpecError
    from simulator.worldgen._knowledge import glossary_resources

    params = build_param_library({"desk": {"label": "Desk", "options": ["A", "B"], "description": "d"}}, {})
    entry = {"file": "g.md", "uri": "openbb://g", "title": "G", "description": "D.", "intro": "I."}
    good = [
        {"phrase": "the a rule", "param": "desk", "value": "A", "gloss": "a."},
        {"phrase": "the b rule", "param": "desk", "value": "B", "gloss": "b."},
    ]
    (doc,) = glossary_resources([{**entry, "rules": good}], params)
    assert (
        "- **The a rule** sets the desk to A: a." in doc["body"]
        and "Defines the a rule, the b rule." in doc["description"]
    )
    for rules, message in (
        (good[:1], "no neighbour"),
        ([{**good[1], "value": "C"}, good[0]], "not an option"),
        ([{**good[1], "param": "fund"}, good[0]], "unknown param"),
        ([good[0], {**good[0], "value": "B"}], "already defined"),
    ):
        with pytest.raises(SpecError, match=message):
            glossary_resources([{**entry, "rules": rules}], params)


def test_index_lists_every_resource_by_title_and_uri() -> None:
    meta, body = _front_matter(WORLD / "resources" / "app-builder-index.md")
    for path in sorted((WORLD / "resources").glob("*.md")):
        other, _ = _front_matter(path)
        if other["uri"] != meta["uri"]:
            assert f"| {other['title']} | " in body and other["uri"] in body, path.name


def test_ground_facts_sit_in_varied_positions_and_cross_references_resolve() -> None:
    """Facts a level can ground in: first steps, middle steps, table rows of resources, workspace prompts, and
    skill steps that send the reader to another document."""
    kinds: Counter[str] = Counter()
    for path in sorted((WORLD / "skills").glob("*.json")):
        skill = json.loads(path.read_text(encoding="utf-8"))
        for p in skill["planted"]:
            kinds[
                "first step"
                if p["where"].startswith("the first step")
                else "last step"
                if p["where"].startswith("the last step")
                else "middle step"
            ] += 1
        for uri in re.findall(r"see (openbb://[\w./-]*[\w/])", skill["content"]):
            assert uri in RESOURCE_URIS, uri
            kinds["cross-reference"] += 1
    for path in sorted((WORLD / "resources").glob("*.md")):
        meta, body = _front_matter(path)
        for item in meta.get("planted", []):
            if isinstance(item, dict) and item["where"].startswith("its row for"):
                line = next(ln for ln in body.splitlines() if item["phrase"] in ln)
                assert line.startswith("|"), item
                kinds["table row"] += 1
    for path in sorted((WORLD / "prompts").glob("*.md")):
        kinds["prompt"] += len(_front_matter(path)[0]["planted"])
    assert all(
        kinds[k] >= 4 for k in ("first step", "middle step", "table row", "prompt", "cross-reference")
    ), kinds
