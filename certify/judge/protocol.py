"""The judge's reply protocol and the parser that accepts nothing else.

A reply labels every key point, in order, ADDRESSED / OMITTED / UNSUPPORTED with a reason, and ends with the
verdict; PASS is allowed only when every label is ADDRESSED. It comes as text

    KEY POINT 1: ADDRESSED - the answer states utilisation 97.97% and compares it with the 85% line
    KEY POINT 2: OMITTED - no owner is named
    VERDICT: FAIL

or, where the server has structured outputs, as the same content in JSON (`JudgeReply`). Anything else — a
preamble, a missing or extra point, two verdicts, a PASS over a point that is not ADDRESSED — is malformed and
is asked again; it never becomes a verdict.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .verdict import Label, PointLabel, Verdict

PROTOCOL_HELP = """\
Reply protocol (nothing else may appear in your reply):
KEY POINT 1: <ADDRESSED|OMITTED|UNSUPPORTED> - <one sentence: why>
KEY POINT 2: <ADDRESSED|OMITTED|UNSUPPORTED> - <one sentence: why>
(one line per key point, numbered as given, in order)
VERDICT: <PASS|FAIL>
When you are asked for JSON, give the same content as {"key_points": [{"point": 1, "reason": "...", "label": \
"..."}, ...], "verdict": "PASS|FAIL"}."""

_POINT = re.compile(r"^KEY POINT (\d+): (ADDRESSED|OMITTED|UNSUPPORTED)(?:\s*(?:-|—|–|:)\s*(.*))?$")
_VERDICT = re.compile(r"^VERDICT: (PASS|FAIL)$")


class PointReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    point: int = Field(description="the key point's number, as given")
    reason: str = Field(description="why, first: the label follows from it")
    label: Label


class JudgeReply(BaseModel):
    """The protocol as JSON, for servers with structured outputs."""

    model_config = ConfigDict(extra="forbid")

    key_points: list[PointReply]
    verdict: Verdict


class ProtocolError(ValueError):
    """A reply that does not follow the protocol; the message says what is wrong, for the re-ask."""


def parse_reply(text: str, points: list[str]) -> tuple[list[PointLabel], Verdict]:
    """The labels and verdict of a reply judging `points`, or ProtocolError."""
    body = text.strip()
    if not body:
        raise ProtocolError("the reply is empty")
    if body.startswith("{"):
        try:
            reply = JudgeReply.model_validate(json.loads(body))
        except (ValueError, ValidationError) as exc:
            raise ProtocolError(f"the JSON reply is not the protocol's ({_first(exc)})") from exc
        numbered = [(p.point, p.label, p.reason) for p in reply.key_points]
        verdict = reply.verdict
    else:
        numbered, verdict = _parse_text(body)
    expected = list(range(1, len(points) + 1))
    if [n for n, _, _ in numbered] != expected:
        raise ProtocolError(
            f"the key points must be numbered {expected[0]} to {expected[-1]} in order, once each; got "
            f"{[n for n, _, _ in numbered]}"
            if expected
            else "there are no key points to label"
        )
    labels = [
        PointLabel(point=points[n - 1], label=label, reason=reason.strip()) for n, label, reason in numbered
    ]
    if verdict == "PASS" and any(p.label != "ADDRESSED" for p in labels):
        raise ProtocolError("the verdict is PASS but not every key point is ADDRESSED")
    return labels, verdict


def _parse_text(body: str) -> tuple[list[tuple[int, Label, str]], Verdict]:
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    *head, last = lines
    verdict = _VERDICT.match(last)
    if verdict is None:
        raise ProtocolError(f"the last line must be 'VERDICT: PASS' or 'VERDICT: FAIL', not {last[:80]!r}")
    numbered: list[tuple[int, Label, str]] = []
    for line in head:
        m = _POINT.match(line)
        if m is None:
            raise ProtocolError(f"a line is neither a KEY POINT line nor the verdict: {line[:80]!r}")
        numbered.append((int(m.group(1)), m.group(2), m.group(3) or ""))  # type: ignore[arg-type]
    return numbered, verdict.group(1)  # type: ignore[return-value]


def _first(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
    return str(exc).splitlines()[0]
