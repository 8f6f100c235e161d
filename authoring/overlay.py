"""World overlays: knowledge a story writer adds to a world beside the stories, without editing the world.

An overlay is a folder `overlay/` next to `personas/` and `stories/`, laid out like a world's own knowledge:

    overlay/resources/<name>.md   a workspace resource (front matter: uri, title, description, planted)
    overlay/skills/<name>.json    a skill (slug, name, description, content, planted)
    overlay/prompts/<name>.md     a workspace prompt (front matter: name, description, planted)
    overlay/lexicon.yaml          finance-lexicon entries (`entries: [{value, kind, synonyms}]`, the shape of
                                  certify/data/finance_lexicon.yaml), merged with the world's own lexicon.yaml

A file whose name is new adds a document; a file with the name of one the world has replaces it (that is how a
handbook gains a row, a skill a step, a prompt a point or a glossary an entry: copy the file, add the piece).
Each planted fact (`planted: [{phrase, where}]`, `where` optional: it is generated from the piece the phrase is
in) is then groundable by a story's `facts.governance.fact`.

`taskforge check` and `taskforge author` use the overlay of the --sources folder they are given: the world they
run on is the base world with the overlay applied, materialized once per content under
`<sources>/.taskforge/worlds/` (the run's identity records its fingerprint like any world's).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

OVERLAY_DIR = "overlay"
KINDS = {"resources": ".md", "skills": ".json", "prompts": ".md"}
LEXICON = "lexicon.yaml"


class OverlayError(Exception):
    """An overlay that cannot be applied: names the file."""


def find_overlay(sources: Path) -> Path | None:
    folder = Path(sources) / OVERLAY_DIR
    return folder if folder.is_dir() else None


def overlay_files(overlay: Path) -> list[Path]:
    """The overlay's documents; anything else in it is an error (it would silently not be read)."""
    out = []
    for path in sorted(overlay.rglob("*")):
        if path.is_dir() or path.name.startswith("."):
            continue
        rel = path.relative_to(overlay)
        if rel.parts == (LEXICON,):
            out.append(path)
            continue
        if len(rel.parts) != 2 or rel.parts[0] not in KINDS or path.suffix != KINDS[rel.parts[0]]:
            raise OverlayError(
                f"{path}: not an overlay document (overlay/resources/*.md, overlay/skills/*.json, "
                "overlay/prompts/*.md or overlay/lexicon.yaml)"
            )
        out.append(path)
    return out


def _digest(base: Path, files: list[Path], overlay: Path) -> str:
    h = hashlib.sha256(str(base.resolve()).encode())
    for path in files:
        h.update(str(path.relative_to(overlay)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _folder(base: Path, kind: str) -> str:
    """Where the base world keeps documents of `kind` (world.json may rename the folder)."""
    import json

    manifest = base / "world.json"
    meta = json.loads(manifest.read_text()) if manifest.is_file() else {}
    return str(meta.get(f"{kind}_dir", kind))


def apply_overlay(base: Path, overlay: Path, cache: Path) -> Path:
    """The base world with the overlay's documents added or replacing, as a world folder under `cache`."""
    files = overlay_files(overlay)
    target = cache / f"{Path(base).resolve().name}-{_digest(base, files, overlay)}"
    if target.is_dir():
        return target
    staging = cache / f".{target.name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copytree(base, staging, copy_function=_link_or_copy)
    lexicon = [p for p in files if p.parent == overlay and p.name == LEXICON]
    files = [p for p in files if p not in lexicon]
    if lexicon:
        _merge_lexicon(staging, lexicon[0])
    for path in files:
        kind = path.parent.name
        dest = staging / _folder(Path(base), kind) / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            dest.unlink()  # a hard link to the base's file: replace it, never write through it
        shutil.copy2(path, dest)
    _list_in_index(
        staging, [p for p in files if p.parent.name == "resources"], _folder(Path(base), "resources")
    )
    os.replace(staging, target)
    return target


def _merge_lexicon(world: Path, added: Path) -> None:
    """The world's lexicon.yaml extended by the overlay's entries (validated first: a bad entry names the
    overlay's file and field). `certify.load_lexicon` then reads the merged file for every role, the shortcuts'
    phrase guesser and `check` alike."""
    import yaml

    from certify import LexiconError, read_lexicon_file

    try:
        extra = read_lexicon_file(added)
        dest = world / LEXICON
        base = read_lexicon_file(dest).entries if dest.is_file() else []
    except LexiconError as exc:
        raise OverlayError(str(exc)) from exc
    entries = [e.model_dump(exclude_defaults=True) for e in [*base, *extra.entries]]
    if dest.exists():
        dest.unlink()  # a hard link to the base world's file: write a new one
    dest.write_text(
        yaml.safe_dump({"entries": entries}, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )


def _front(path: Path) -> dict:
    import yaml

    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    meta = yaml.safe_load(text.split("---", 2)[1]) or {}
    return meta if isinstance(meta, dict) else {}


def _list_in_index(world: Path, resources: list[Path], folder: str) -> None:
    """An added resource is listed in the world's resource index (a row of its table: title, description,
    uri), as the world's own are: an agent learns which URI a title names by reading the index."""
    from simulator import INDEX_URI

    index = next(
        (p for p in sorted((world / folder).glob("*.md")) if _front(p).get("uri") == INDEX_URI), None
    )
    if index is None:
        return
    text = index.read_text(encoding="utf-8")
    rows = []
    for path in resources:
        meta = _front(path)
        uri = str(meta.get("uri") or "")
        if uri and uri != INDEX_URI and uri not in text:
            title = str(meta.get("title") or uri.rsplit("/", 1)[-1]).replace("|", "/")
            rows.append(f"| {title} | {str(meta.get('description') or '').replace('|', '/')} | {uri} |")
    if rows:
        index.unlink()  # a hard link to the base world's file: write a new one
        index.write_text(text.rstrip("\n") + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


def world_for(sources: Path, world: Path | None) -> Path:
    """The world `check` and `author` use for a sources folder: --world (else the default world), with the
    folder's overlay applied when it has one."""
    from simulator import DEFAULT_WORLD

    base = Path(world or DEFAULT_WORLD)
    overlay = find_overlay(sources)
    if overlay is None:
        return base
    return apply_overlay(base, overlay, Path(sources) / ".taskforge" / "worlds")


def overlay_documents(overlay: Path) -> set[str]:
    """The world-relative files (as `World` names them: `resources/x.md`) the overlay adds or replaces."""
    return {f"{p.parent.name}/{p.name}" for p in overlay_files(overlay)}
