"""`openai:<model>`: a model judge behind any OpenAI-compatible endpoint, through the one model client.

One vote is one conversation: the template's instructions and the filled case, at temperature 0 where the
model allows it, asking for the protocol as structured output where the server has it (the client falls back
to `json_object`, then plain text, and the parser accepts either form of the protocol and nothing else). A reply
that breaks the protocol is shown back with what is wrong and asked again, at most `max_repairs` times. A
transport failure (the endpoint down after the SDK's own retries) is retried `transport_retries` times and is
never a vote; when it persists, or the budget is spent, or the request is refused, the judge raises
`JudgeUnavailable`, which says nothing about the answer. Each vote of a majority is a fresh reply: its cache
entry is tagged with the vote's number, so a resumed audit reads its votes back but never copies one vote into
the next.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..model_client import (
    Completion,
    ModelClient,
    ModelConfig,
    ModelRefused,
    ModelRequestError,
    ModelUnavailable,
)
from ..pricing import PriceTable
from .case import JudgeCase
from .protocol import JudgeReply, ProtocolError, parse_reply
from .template import REPAIR, SYSTEM, TEMPLATE_SHA256, TEMPLATE_VERSION
from .verdict import JudgeSpend, JudgeUnavailable, Judgment

if TYPE_CHECKING:
    import httpx2
    import openai

DEFAULT_CACHE_DIR = Path(".taskforge") / "model-cache"


class ModelJudgeConfig(ModelConfig):
    """The model client's generation config with the judge's defaults, its retries and what it may spend."""

    timeout_s: float = Field(default=120.0, gt=0, description="seconds per HTTP attempt")
    max_retries: int = Field(
        default=3, ge=0, description="the SDK's retries of one request (429, 5xx, timeouts)"
    )
    transport_retries: int = Field(
        default=2, ge=0, description="further requests after the SDK's retries are spent; never votes"
    )
    max_repairs: int = Field(default=2, ge=0, description="re-asks after a reply that breaks the protocol")
    max_calls: int = Field(default=2000, ge=1, description="model requests over the judge's life")
    max_cost: float | None = Field(default=20.0, gt=0, description="USD over the judge's life")


class ModelJudge:
    """One configured model judge; tests inject `client` or `http_client` (a scripted server)."""

    deterministic = False

    def __init__(
        self,
        config: ModelJudgeConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        http_client: httpx2.AsyncClient | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.config = config
        self.name = self.identity = f"openai:{config.model}"
        self.label = f"{self.name} (model judge, template v{TEMPLATE_VERSION})"
        self.model = ModelClient(config, client=client, http_client=http_client, prices=prices)
        self.spend = JudgeSpend()
        note = self.model.prices.note(config.model)
        self._notes = [note] if note else []

    @property
    def notes(self) -> list[str]:
        return [*self._notes, *self.model.notes]

    async def check(self) -> None:
        """The preflight (EndpointUnusable when the endpoint cannot be used); leaves no client behind."""
        try:
            await self.model.check()
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        await self.model.aclose()

    async def judge(self, case: JudgeCase, vote: int = 0) -> Judgment:
        points = case.points()
        base: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": case.render()},
        ]
        messages = base
        spend = JudgeSpend()
        transport = repairs = 0
        tag = None if vote == 0 else f"vote-{vote}"
        while True:
            self._within_budget(spend)
            try:
                completion = await self.model.complete(messages, reply=JudgeReply, cache_tag=tag)
            except ModelUnavailable as exc:
                spend.transport_retries += 1
                self.spend.transport_retries += 1
                transport += 1
                if transport > self.config.transport_retries:
                    raise JudgeUnavailable(
                        exc.reason, f"{self.name}: {exc} ({transport} attempt(s), no verdict)", spend
                    ) from exc
                continue
            except (ModelRefused, ModelRequestError) as exc:
                raise JudgeUnavailable(exc.reason, f"{self.name}: {exc}", spend) from exc
            self._charge(spend, completion)
            try:
                labels, verdict = parse_reply(completion.text, points)
            except ProtocolError as exc:
                spend.malformed += 1
                self.spend.malformed += 1
                repairs += 1
                if repairs > self.config.max_repairs:
                    raise JudgeUnavailable(
                        "malformed",
                        f"{self.name}: {repairs} repl(ies) broke the protocol; the last: {exc}",
                        spend,
                    ) from exc
                messages = [
                    *base,
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": REPAIR.format(error=exc, count=len(points))},
                ]
                continue
            addressed = sum(p.label == "ADDRESSED" for p in labels)
            return Judgment(
                judge=self.identity,
                deterministic=False,
                template_sha256=TEMPLATE_SHA256,
                case_sha256=case.sha256(),
                verdict=verdict,
                labels=labels,
                votes=[verdict],
                summary=f"{addressed} of {len(labels)} key point(s) addressed"
                + "".join(f"; {p.label}: {p.reason}" for p in labels if p.label != "ADDRESSED")[:500],
                spend=spend,
            )

    def _within_budget(self, spend: JudgeSpend) -> None:
        cfg, life = self.config, self.spend
        if life.calls >= cfg.max_calls:
            raise JudgeUnavailable(
                "budget", f"{self.name}: {life.calls} judge calls (cap {cfg.max_calls})", spend
            )
        if cfg.max_cost is not None and life.cost >= cfg.max_cost:
            raise JudgeUnavailable(
                "budget", f"{self.name}: ${life.cost:.2f} spent on judging (cap ${cfg.max_cost:.2f})", spend
            )

    def _charge(self, spend: JudgeSpend, completion: Completion) -> None:
        cached = completion.cached
        one = JudgeSpend(
            calls=0 if cached else 1,
            cached=1 if cached else 0,
            tokens_in=0 if cached else completion.tokens_in,
            tokens_out=0 if cached else completion.tokens_out,
            cost=completion.cost,
        )
        spend.add(one)
        self.spend.add(one)
