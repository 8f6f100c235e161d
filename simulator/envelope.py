"""The response envelope every tool returns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ErrorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    message: str
    retryable: bool = False


class Envelope(BaseModel):
    """`{ok, command, request_id, message, data, error}` — the only shape an agent ever receives."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    command: str
    request_id: str | None = None
    message: str = "ok"
    data: Any = None
    error: ErrorInfo | None = None

    @classmethod
    def success(cls, command: str, data: Any, request_id: str | None = None, message: str = "ok") -> Envelope:
        return cls.model_construct(
            ok=True, command=command, request_id=request_id, message=message, data=data, error=None
        )

    @classmethod
    def failure(
        cls, command: str, code: str, message: str, request_id: str | None = None, retryable: bool = False
    ) -> Envelope:
        error = ErrorInfo.model_construct(code=code, message=message, retryable=retryable)
        return cls.model_construct(
            ok=False, command=command, request_id=request_id, message=message, data=None, error=error
        )

    @classmethod
    def of(cls, answer: dict[str, Any]) -> Envelope:
        """The envelope of an answer in its dict form (`to_dict`'s shape, as `Workspace.answer` builds it)."""
        error = answer["error"]
        return cls.model_construct(
            ok=answer["ok"],
            command=answer["command"],
            request_id=answer["request_id"],
            message=answer["message"],
            data=answer["data"],
            error=None if error is None else ErrorInfo.model_construct(**error),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "command": self.command,
            "request_id": self.request_id,
            "message": self.message,
            "data": self.data,
            "error": None
            if self.error is None
            else {
                "code": self.error.code,
                "message": self.error.message,
                "retryable": self.error.retryable,
            },
        }
