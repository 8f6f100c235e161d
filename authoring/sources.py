"""Authoring sources: personas and their stories, read from markdown with YAML front matter.

These are untrusted text written by people: every field is validated at the edge, unknown keys are rejected,
and an error names the file and the key. Nothing a story says becomes a path or a template unchecked: names
must be safe identifiers and prose is only ever rendered as data.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .requires import one_of, together
from .suggest import did_you_mean, nearest
from .voicecheck import voice_errors

SAFE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
# A persona or story is a page of prose; anything larger is a wrong file (a pasted export, a binary).
MAX_SOURCE_BYTES = 64 * 1024
STORIES_PER_PERSONA = 4
# What `taskforge new` writes where a person has to decide; a source still holding it is not ready.
PLACEHOLDER = "FILL-ME"


class SourceError(Exception):
    """A persona or story file that cannot be used; names the file and the key."""

    def __init__(self, file: str, key: str, message: str) -> None:
        super().__init__(f"{file}: {key}: {message}")
        self.file = file
        self.key = key
        self.message = message


class SourceErrors(SourceError):
    """Several mistakes of one file found together (every declared verb the agents misread, every schema mistake
    of a block — not the first alone): raised as its first, so a caller that reports one still says something
    true; `check` reports all."""

    def __init__(self, errors: list[SourceError]) -> None:
        first = errors[0]
        super().__init__(first.file, first.key, first.message)
        self.errors = errors


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Voice(_Strict):
    """How a persona talks, drawn on by the rule author's templates so twenty prompts sound like one person."""

    openers: list[str] = Field(default_factory=list)
    deadlines: list[str] = Field(default_factory=list)
    signoffs: list[str] = Field(default_factory=list)
    period_names: dict[str, str] = Field(default_factory=dict)
    aliases: dict[str, str] = Field(default_factory=dict)
    add_verbs: list[str] = Field(default_factory=list)
    read_verbs: list[str] = Field(default_factory=list)
    repair_verbs: list[str] = Field(default_factory=list)
    note_words: list[str] = Field(default_factory=list)
    tone: Literal["terse", "formal", "warm", "plain", "neutral"] = "neutral"
    # every declared opener, deadline and sign-off is said somewhere in the persona's tasks, in a fixed rotation
    # over its stories and levels; false opts out (the rule author then says them only now and then, by chance)
    every_phrase: bool = True


class Persona(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slug: str
    title: str
    text: str
    voice: Voice
    file: str


class TargetFact(_Strict):
    widget: str
    origin: str
    app: str | None = None
    params: dict[str, Any] | None = None


class DistractorFact(_Strict):
    """A rival policy defined next to the story's own, setting the carried parameter to another value."""

    phrase: str
    value: Any


class PolicyFact(_Strict):
    """The phrase the Derive level says instead of the carried value, and the document of the world that defines
    it: a workspace resource (uri or words of its title) or a note seeded on the dashboard at Derive, which then
    also defines the `distractor`."""

    phrase: str
    carries: str
    meaning: str
    resource: str | None = None
    note: str | None = None
    distractor: DistractorFact | None = None

    @model_validator(mode="after")
    def _one_document(self) -> PolicyFact:
        if self.resource is not None and self.note is not None:
            raise ValueError("give at most one of resource or note")
        if self.note is not None and self.distractor is None:
            raise ValueError(
                "a policy defined in a note needs a distractor: {phrase, value} of a rival policy"
            )
        if self.distractor is not None and self.distractor.phrase.casefold() == self.phrase.casefold():
            raise ValueError("the distractor must be another policy than the story's own")
        return self


class GovernanceFact(_Strict):
    """The knowledge source the Ground and Compose levels read: a skill (slug), a workspace resource (uri or
    words of its title) or a workspace prompt (name); with `fact`, the planted phrase the level grounds in (in
    the source, or in a document the source refers to) and what it `sets`: a parameter of a target, or "tab" for
    the title of the dashboard's tab."""

    skill: str | None = None
    resource: str | None = None
    prompt: str | None = None
    fact: str | None = None
    sets: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> GovernanceFact:
        one_of(self, ("skill", "resource", "prompt"))
        together(self, ("fact", "sets"), "the planted phrase and what it sets (a parameter or tab)")
        return self


class BuildFact(_Strict):
    backend: str
    table: str
    app: str | None = None
    tab: str | None = None


class ThresholdFact(_Strict):
    """The line an analysis compares each figure with, as its skill sets it: `said` is the skill's own words for
    the number ("85%", "140 bps", "four percent"), `value` the same number in the figure column's units (0.85,
    0.014, 0.04), `name` what the request calls the line ("amber line")."""

    said: str
    value: float
    name: str


class AnalyzeFact(_Strict):
    """The analyze ask: every level also asks for a judged answer that reasons over the first target's rows the
    way the skill prescribes — each row's `figure` cited (the row named by its `label` column), compared with
    the skill's `threshold`, and a verdict. `size`: the figure's size is compared (a band either side)."""

    skill: str
    figure: str
    threshold: ThresholdFact
    label: str | None = None
    size: bool = False


# A story's purpose or deadline is one short sentence: a request that explains itself at length stops reading
# like a request.
MAX_WHY_WORDS = 22


class Facts(_Strict):
    dashboard: str
    targets: list[TargetFact] = Field(min_length=1, max_length=3)
    params: dict[str, Any] = Field(default_factory=dict)
    seeded_wrong: dict[str, Any] | None = None
    find_hint: str
    policy: PolicyFact
    governance: GovernanceFact
    build: BuildFact
    kind: Literal["add", "read", "repair"] | None = None
    tab: str | None = None
    note: str | None = None
    record: list[str] | None = None
    analyze: AnalyzeFact | None = None
    # why the work is wanted, in the persona's words: every level says it (default: the storyline's first
    # sentence), so the request carries the story's purpose and not only its mechanics
    why: str | None = None
    # the story's own deadline ("Before the 14:00 redemption cut-off."), said instead of one of the persona's
    deadline: str | None = None
    # the board's other widgets, by catalog name (of the first target's backend): the lived-in board's
    # furniture is drawn from these before anything else
    board: list[str] | None = None

    @field_validator("dashboard", "find_hint")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("why", "deadline")
    @classmethod
    def _one_sentence(cls, value: str | None) -> str | None:
        """A request says these as one sentence of its own: a capital first, a stop at the end, short."""
        if value is None:
            return None
        text = " ".join(value.split())
        if not text:
            raise ValueError("must not be empty (leave the key out to use the default)")
        if not text[0].isupper():
            raise ValueError(
                f"'{text}' must start with a capital letter: it is said as a sentence of its own"
            )
        if text[-1] not in ".!?":
            raise ValueError(f"'{text}' must end with a full stop: it is said as a sentence of its own")
        if len(text.split()) > MAX_WHY_WORDS:
            raise ValueError(f"{len(text.split())} words; say it in at most {MAX_WHY_WORDS}")
        return text


class Story(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slug: str
    persona: str
    title: str
    prose: str
    facts: Facts
    file: str


def split_front_matter(text: str, file: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        return {}, text
    match = re.match(r"^---[ \t]*\n(.*?)\n---[ \t]*(?:\n|$)", text, re.S)
    if match is None:
        raise SourceError(file, "front matter", "opening '---' has no closing '---'")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise SourceError(file, "front matter", f"invalid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise SourceError(file, "front matter", "must be a mapping")
    return meta, text[match.end() :]


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(str(path), "(file)", f"cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(
            str(path),
            "(file)",
            f"{len(data)} bytes, over the {MAX_SOURCE_BYTES}-byte limit for a "
            "persona or story (is this the right file?)",
        )
    if data.startswith(b"\xef\xbb\xbf"):
        raise SourceError(str(path), "(file)", "starts with a byte-order mark; save it as UTF-8 without BOM")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(str(path), "(file)", "not UTF-8 text") from exc


def _placeholder(value: Any, path: str) -> str | None:
    """The key path of the first value (or key) still holding the scaffold's placeholder."""
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            if PLACEHOLDER in str(k):
                return here
            found = _placeholder(v, here)
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _placeholder(v, f"{path}[{i}]")
            if found:
                return found
    elif isinstance(value, str) and PLACEHOLDER in value:
        return path
    return None


def _unfilled(file: str, meta: dict[str, Any], body: str) -> None:
    where = _placeholder(meta, "") or ("(body)" if PLACEHOLDER in body else None)
    if where is not None:
        raise SourceError(file, where, f"still holds the scaffold's {PLACEHOLDER} placeholder: fill it in")


def _fields_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys a model accepts at `loc` (a pydantic error location), for did-you-mean on an unknown key."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = (
            current.model_fields.get(part)
            if isinstance(current, type) and issubclass(current, BaseModel)
            else None
        )
        if field is None:
            return []
        current = next(
            (t for t in _flatten(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)), None
        )
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def _flatten(annotation: Any) -> list[Any]:
    args = typing.get_args(annotation)
    return [annotation] if not args else [t for a in args for t in _flatten(a)]


def _first_error(exc: ValidationError, model: type[BaseModel] | None = None) -> tuple[str, str]:
    return _schema_errors(exc, model)[0]


def _schema_errors(exc: ValidationError, model: type[BaseModel] | None = None) -> list[tuple[str, str]]:
    """Every schema mistake of a block, as (location, message), the first as pydantic reports it first: a writer
    fixes them all in one round. One per location (a union reports each of its branches), and an unknown key
    that a missing key's message already names as its misspelling is not said again."""
    errors = exc.errors()
    out: list[tuple[str, str]] = []
    named: set[tuple[str, ...]] = set()
    for err in errors:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        msg = (
            "unknown key"
            if err["type"] == "extra_forbidden"
            else ("required key is missing" if err["type"] == "missing" else err["msg"])
        )
        if model is not None and err["type"] == "extra_forbidden":
            msg += did_you_mean(str(err["loc"][-1]), _fields_at(model, err["loc"][:-1]))
        elif err["type"] == "missing":
            unknown = [
                str(e["loc"][-1])
                for e in errors
                if e["type"] == "extra_forbidden" and e["loc"][:-1] == err["loc"][:-1]
            ]
            close = nearest(str(err["loc"][-1]), unknown, limit=1)
            if close:
                msg += f" (is '{close[0]}' a misspelling of it?)"
                named.add((*map(str, err["loc"][:-1]), close[0]))
        out.append((loc, msg))
    first, seen = out[0], {out[0][0]}
    rest = []
    for err, (loc, msg) in zip(errors[1:], out[1:], strict=True):
        if loc in seen or (err["type"] == "extra_forbidden" and tuple(map(str, err["loc"])) in named):
            continue
        seen.add(loc)
        rest.append((loc, msg))
    return [first, *rest]


def check_name(name: str, file: str, what: str) -> str:
    if not SAFE_NAME.match(name):
        raise SourceError(
            file, what, f"'{name}' must be lower-case letters, digits, '_' or '-' (it names files)"
        )
    return name


def load_persona(root: Path, slug: str) -> Persona:
    """personas/<slug>.md — or, for authoring corpora laid out like task_templates, <root>/<slug>/README.md."""
    check_name(slug, str(root), "persona")
    candidates = [root / "personas" / f"{slug}.md", root / slug / "README.md"]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise SourceError(
            str(candidates[0]),
            "(file)",
            f"no persona '{slug}' (looked for {', '.join(str(c) for c in candidates)})",
        )
    text = _read(path)
    meta, body = split_front_matter(text, str(path))
    _unfilled(str(path), meta, body)
    unknown = set(meta) - {"voice"}
    if unknown:
        raise SourceError(str(path), sorted(unknown)[0], "unknown key in persona front matter (only voice)")
    try:
        voice = Voice.model_validate(meta.get("voice") or {})
    except ValidationError as exc:
        loc, msg = _first_error(exc, Voice)
        raise SourceError(str(path), f"voice.{loc}", msg) from exc
    misread = [SourceError(str(path), key, message) for key, message in voice_errors(voice)]
    if misread:
        raise SourceErrors(misread)
    heading = re.search(r"^#\s*(?:Persona:\s*)?(.+)$", body, re.M)
    title = heading.group(1).strip() if heading else slug.replace("_", " ")
    if not body.strip():
        raise SourceError(str(path), "(body)", "a persona needs a description")
    return Persona(slug=slug, title=title, text=body.strip(), voice=voice, file=str(path))


def story_folder(root: Path, persona: str) -> Path | None:
    return next((f for f in (root / "stories" / persona, root / persona) if f.is_dir()), None)


def story_paths(root: Path, persona: str) -> list[Path]:
    folder = story_folder(root, persona)
    if folder is None:
        return []
    return sorted(p for p in folder.glob("*.md") if p.name.lower() != "readme.md")


def load_story(path: Path, persona: str) -> Story:
    file = str(path)
    slug = check_name(path.stem, file, "story file name")
    meta, body = split_front_matter(_read(path), file)
    _unfilled(file, meta, body)
    if "facts" not in meta:
        raise SourceError(file, "facts", "a story needs front matter with a facts: block")
    unknown = set(meta) - {"facts"}
    if unknown:
        raise SourceError(file, sorted(unknown)[0], "unknown key in story front matter (only facts)")
    try:
        facts = Facts.model_validate(meta["facts"])
    except ValidationError as exc:
        raise SourceErrors(
            [SourceError(file, f"facts.{loc}", msg) for loc, msg in _schema_errors(exc, Facts)]
        ) from exc
    heading = re.search(r"^#\s*(.+)$", body, re.M)
    return Story(
        slug=slug,
        persona=persona,
        title=heading.group(1).strip() if heading else slug,
        prose=body.strip(),
        facts=facts,
        file=file,
    )


def load_sources(root: Path, persona: str) -> tuple[Persona, list[Story]]:
    """A persona and its stories (four are expected; fewer or more is reported by the caller)."""
    p = load_persona(root, persona)
    stories = [load_story(path, persona) for path in story_paths(root, persona)]
    if not stories:
        raise SourceError(str(root / "stories" / persona), "(folder)", f"no stories for persona '{persona}'")
    duplicates = identical_facts(stories)
    if duplicates:
        raise duplicates[0]
    return p, stories


def identical_facts(stories: list[Story]) -> list[SourceError]:
    """Two stories with the same facts would author the same twenty tasks twice; two grounding in the same fact
    would make their Ground levels one question asked twice."""
    seen: dict[str, Story] = {}
    grounded: dict[str, Story] = {}
    errors = []
    for story in stories:
        key = story.facts.model_dump_json()
        if key in seen:
            errors.append(
                SourceError(
                    story.file,
                    "facts",
                    f"identical to the facts of {seen[key].file}; each story "
                    "needs its own target, parameters or policy",
                )
            )
        else:
            seen[key] = story
        fact = (story.facts.governance.fact or "").casefold()
        if fact and fact in grounded:
            errors.append(
                SourceError(
                    story.file,
                    "facts.governance.fact",
                    f"{grounded[fact].file} grounds in the same fact; each story grounds in its own",
                )
            )
        elif fact:
            grounded[fact] = story
    return errors
