"""Harbor's oracle for an exported taskforge task (run by solve.sh; standard library only).

Plays the task's reference calls, then its final answer, over MCP (Streamable HTTP: the initialize handshake,
then one POST per request on the session) against the workspace sidecar named in reference.json, or at
$TASKFORGE_MCP_URL. The sidecar grades the episode as it grades any agent's; this script only reports what
each call returned.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import urllib.request
from itertools import count
from pathlib import Path
from typing import Literal, overload

PROTOCOL = "2025-06-18"


class Session:
    def __init__(self, url: str) -> None:
        self.url = url
        self.id: str | None = None
        self.protocol = PROTOCOL
        self.ids = count(1)

    @overload
    def send(self, method: str, params: dict | None = None, *, notify: Literal[False] = False) -> dict: ...
    @overload
    def send(self, method: str, params: dict | None = None, *, notify: Literal[True]) -> None: ...
    def send(self, method: str, params: dict | None = None, *, notify: bool = False) -> dict | None:
        body: dict = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            body["id"] = next(self.ids)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": self.protocol,
        }
        if self.id:
            headers["Mcp-Session-Id"] = self.id
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        with urllib.request.urlopen(request, timeout=120) as response:
            self.id = response.headers.get("Mcp-Session-Id") or self.id
            kind = response.headers.get("Content-Type", "")
            raw = response.read().decode("utf-8")
        if notify:
            return None
        messages = (
            [
                json.loads(line[5:])
                for line in raw.splitlines()
                if line.startswith("data:") and line[5:].strip()
            ]
            if kind.startswith("text/event-stream")
            else [json.loads(raw)]
        )
        for message in messages:
            if message.get("id") == body["id"]:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error'].get('message')}")
                return message["result"]
        raise RuntimeError(f"{method}: no response in {raw[:200]!r}")

    def close(self) -> None:
        if self.id:
            request = urllib.request.Request(self.url, headers={"Mcp-Session-Id": self.id}, method="DELETE")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(request, timeout=30).close()


def main(reference_file: str) -> int:
    reference = json.loads(Path(reference_file).read_text(encoding="utf-8"))
    session = Session(os.environ.get("TASKFORGE_MCP_URL") or reference["url"])
    hello = session.send(
        "initialize",
        {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "taskforge-oracle", "version": "1"},
        },
    )
    session.protocol = hello.get("protocolVersion", PROTOCOL)
    session.send("notifications/initialized", notify=True)
    failed = 0
    try:
        for step in [*reference["steps"], {"tool": "final_answer", "args": {"text": reference["answer"]}}]:
            result = session.send("tools/call", {"name": step["tool"], "arguments": step["args"]})
            envelope = result.get("structuredContent") or {}
            ok = not result.get("isError") and envelope.get("ok", True)
            failed += not ok
            print(f"{step['tool']}: {'ok' if ok else envelope.get('message') or 'failed'}")
    finally:
        session.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
