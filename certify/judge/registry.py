"""Judges by name: `rubric` (the embedded deterministic default) and `openai:<model>`."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .case import JudgeCase
from .rubric import NAME as RUBRIC
from .rubric import RUBRIC_VERSION, RubricJudge
from .verdict import Judgment

DEFAULT_JUDGE = RUBRIC


@runtime_checkable
class Judge(Protocol):
    """What grades a judged answer. `identity` is what an audit and a verdict record (a rubric's version, a
    model's name); `deterministic` judges are asked once per case, since a second vote could only repeat the
    first."""

    @property
    def name(self) -> str: ...
    @property
    def identity(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def deterministic(self) -> bool: ...

    async def judge(self, case: JudgeCase, vote: int = 0) -> Judgment: ...


_DEFAULT = RubricJudge()


def default_judge() -> RubricJudge:
    return _DEFAULT


def judge_identity(name: str | None) -> str:
    """The identity an audit of the judge named `name` is recorded under, without building the judge (no client
    is opened to answer it)."""
    name = (name or DEFAULT_JUDGE).strip()
    if name == RUBRIC:
        return f"{RUBRIC}@{RUBRIC_VERSION}"
    _model_name(name)
    return name


def _model_name(name: str) -> str:
    prefix, _, model = name.partition(":")
    if prefix != "openai" or not model.strip():
        raise ValueError(
            f"'{name}' names no judge: use rubric (the embedded deterministic default) or openai:<model>, e.g. "
            "openai:gpt-4.1-mini, or openai:gpt-oss:20b with OPENAI_BASE_URL pointing at Ollama"
        )
    return model.strip()


def build_judge(name: str | None = None, **model_settings: Any) -> Judge:
    """The judge named `name` (default: the rubric). `model_settings` are ModelJudgeConfig fields (base_url,
    cache_dir, max_cost, ...) and are refused for the rubric rather than ignored."""
    name = (name or DEFAULT_JUDGE).strip()
    if name == RUBRIC:
        if any(v is not None for v in model_settings.values()):
            raise ValueError(
                f"{', '.join(sorted(k for k, v in model_settings.items() if v is not None))} only apply to a model "
                "judge (openai:<model>), not to the rubric"
            )
        return _DEFAULT
    from .model import ModelJudge, ModelJudgeConfig

    settings = {k: v for k, v in model_settings.items() if v is not None}
    return ModelJudge(ModelJudgeConfig(model=_model_name(name), **settings))
