"""Reaching a workspace server as an MCP client (the official SDK's `Client`): by URL (Streamable HTTP, with
headers such as a bearer token) or by launching a command (stdio). Used by `surface diff` and `parity`.

A server that cannot be reached (refused connection, a command that exits, a failed handshake) is one
`ConnectError` line naming what was tried; what the SDK raises from its task groups is unwrapped to its cause.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from mcp import Client


class ConnectError(Exception):
    """The server could not be reached or did not complete the MCP handshake."""


class Endpoint(BaseModel):
    """Where a server is: `url` (with `headers`) or `command` (argv, launched with stdio)."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None
    cwd: str | None = None

    @model_validator(mode="after")
    def _one(self) -> Endpoint:
        if (self.url is None) == (not self.command):
            raise ValueError("give a url or a command, not both and not neither")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r} is not an http(s) URL")
        return self

    def label(self) -> str:
        return self.url if self.url is not None else shlex.join(self.command or [])


def parse_header(text: str) -> tuple[str, str]:
    """`K:V` (or `K: V`) as given on the command line."""
    key, sep, value = text.partition(":")
    if not sep or not key.strip():
        raise ValueError(f"header {text!r} is not KEY:VALUE")
    return key.strip(), value.strip()


def _cause(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@asynccontextmanager
async def connect(endpoint: Endpoint, *, read_timeout_s: float = 60.0) -> AsyncIterator[Client]:
    """A connected, initialised client; the connection (and a launched command) is closed on exit."""
    from mcp import Client, StdioServerParameters

    if endpoint.url is not None:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=endpoint.headers, timeout=httpx2.Timeout(30.0, read=300.0))
        client = Client(
            streamable_http_client(endpoint.url, http_client=http), read_timeout_seconds=read_timeout_s
        )
        async with http, _entered(client, endpoint, None) as ready:
            yield ready
        return
    command = endpoint.command or []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=command[0], args=command[1:], env=dict(os.environ), cwd=endpoint.cwd
        )
        client = Client(stdio_client(params, errlog=errlog), read_timeout_seconds=read_timeout_s)
        async with _entered(client, endpoint, errlog) as ready:
            yield ready


@asynccontextmanager
async def _entered(client: Client, endpoint: Endpoint, errlog) -> AsyncIterator[Client]:
    try:
        await client.__aenter__()
    except BaseException as exc:  # the SDK raises from task groups; KeyboardInterrupt passes through
        cause = _cause(exc)
        if isinstance(cause, KeyboardInterrupt | SystemExit):
            raise
        said = ""
        if errlog is not None:
            errlog.seek(0)
            lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
            said = f"; it said: {lines[-1]}" if lines else ""
        raise ConnectError(
            f"cannot reach {endpoint.label()}: {' '.join(str(cause).split()) or type(cause).__name__}{said}"
        ) from None
    try:
        yield client
    finally:
        try:
            await client.__aexit__(None, None, None)
        except BaseException as exc:  # a server that went away while closing is not the caller's failure
            if isinstance(_cause(exc), KeyboardInterrupt):
                raise
