"""How a run's state is read back from its checkpoints: only our own models are revived, by name, including the
names earlier versions gave them.

LangGraph's serializer records each pydantic model at the top of a checkpoint value by its class path (module
and name; nested models are plain data, rebuilt by their parent's validation) and, on reading, imports that
path; a path that no longer imports comes back silently as a plain dict, and the run fails later, far from the
cause. Here a recorded path is looked up in `MODELS` (our state's classes where they are now) and `MOVED` (where
earlier versions kept them), and anything else stops the read with `CheckpointFormatError`, naming the class. The
payloads of pending `Send`s, plain dicts before they were typed, are read as their models too; the `rounds`
channel upgrades its own old form (`state.RoundsChannel`). Everything else is LangGraph's own serializer.
"""

from __future__ import annotations

from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import (
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_PYDANTIC_V2,
    JsonPlusSerializer,
)
from langgraph.types import Send
from pydantic import BaseModel, ValidationError

from certify import CalibrationRecord, Trial

from ..flags import Flag
from ..options import RunOptions
from .state import AuthoredTask, Cursor, Lesson, Rehearsal, Repair, Rounds, RunResult, Validation

# The models a checkpoint may name at the top of a value (nested models are rebuilt by their parents).
MODELS: tuple[type[BaseModel], ...] = (
    RunOptions,
    AuthoredTask,
    Cursor,
    Validation,
    Rehearsal,
    Lesson,
    Repair,
    Rounds,
    RunResult,
    Flag,
    CalibrationRecord,
    Trial,
)

# Where earlier versions kept a model: the class path a checkpoint of theirs names → the model now.
MOVED: dict[tuple[str, str], type[BaseModel]] = {
    ("authoring.state", "RunOptions"): RunOptions,
    ("authoring.state", "AuthoredTask"): AuthoredTask,
    ("authoring.state", "Lesson"): Lesson,
    ("authoring.state", "Repair"): Repair,
    ("authoring.state", "RunResult"): RunResult,
    ("certify.calibrate", "CalibrationRecord"): CalibrationRecord,
}

# The payload model of each node reached by Send (earlier versions sent plain dicts).
PAYLOADS: dict[str, type[BaseModel]] = {"draft": Cursor, "validate": Validation, "rehearse": Rehearsal}

_OPTION = ormsgpack.OPT_NON_STR_KEYS


class CheckpointFormatError(Exception):
    """A checkpoint holds something this version cannot read back (written by another version of taskforge)."""


class CheckpointSerializer(JsonPlusSerializer):
    """LangGraph's serializer, reviving only `MODELS` (under their own names or those in `MOVED`)."""

    def __init__(self) -> None:
        super().__init__(allowed_msgpack_modules=[(m.__module__, m.__name__) for m in MODELS])
        self._models = {(m.__module__, m.__name__): m for m in MODELS} | MOVED

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, raw = data
        if kind != "msgpack":
            return super().loads_typed(data)
        unreadable: list[str] = []  # an ext hook's exception is swallowed by msgpack: say it after
        value = ormsgpack.unpackb(
            raw, ext_hook=lambda code, ext: self._ext(code, ext, unreadable), option=_OPTION
        )
        if unreadable:
            raise CheckpointFormatError(unreadable[0])
        return value

    def _ext(self, code: int, data: bytes, unreadable: list[str]) -> Any:
        if code not in (EXT_PYDANTIC_V2, EXT_CONSTRUCTOR_POS_ARGS):
            return self._langgraph(code, data)
        module, name, args, *_ = ormsgpack.unpackb(
            data, ext_hook=lambda c, e: self._ext(c, e, unreadable), option=_OPTION
        )
        if code == EXT_CONSTRUCTOR_POS_ARGS:
            if (module, name) != ("langgraph.types", "Send"):
                return self._langgraph(code, data)
            node, payload, *timeout = args
            if isinstance(payload, dict) and node in PAYLOADS:
                payload = self._revive(PAYLOADS[node], payload, unreadable)
            return Send(node, payload, timeout=timeout[0] if timeout else None)
        model = self._models.get((module, name))
        if model is None:
            unreadable.append(f"it names the class {module}.{name}, which this version does not know")
            return None
        return self._revive(model, args, unreadable)

    @staticmethod
    def _revive(model: type[BaseModel], fields: Any, unreadable: list[str]) -> Any:
        try:
            return model.model_validate(fields)
        except ValidationError as exc:
            unreadable.append(f"its {model.__name__} does not read as one ({exc.errors()[0]['msg']})")
            return None

    def _langgraph(self, code: int, data: bytes) -> Any:
        """One ext value as LangGraph's own serializer reads it."""
        return super().loads_typed(("msgpack", ormsgpack.packb(ormsgpack.Ext(code, data))))


def serializer() -> CheckpointSerializer:
    """The checkpoint serializer every saver of the run is made with."""
    return CheckpointSerializer()
