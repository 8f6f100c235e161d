"""What a model's tokens cost, so a run reports money next to pass rates.

Prices are USD per one million tokens. The built-in table covers a few common hosted models and goes stale,
and it is unverified: its rates (the cached-input ones included) were entered by hand from OpenAI's list prices
as the author knew them (standard tier, 2025), and nothing in this project has checked them against the
provider's current price page — it is developed without network access. A cost computed from them is an
estimate; for figures to quote, supply checked prices. The table can be overridden: a JSON file named by
TASKFORGE_PRICES (`{"<model>": {"input": 2.5, "output": 10, "cached_input": 1.25}}`) and then an explicit
mapping, each entry replacing the built-in one for that model. Prompt tokens a server reports as read from its
prefix cache are priced at `cached_input` (providers charge a fraction of the input price for them, which is
why an episode's history is appended, never rewritten); a price without it charges them as input. A model with
no price (a local Ollama or vLLM model, a new release) costs 0 and carries a note, so a zero never passes for a
measured cost without saying so.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

PRICES_ENV = "TASKFORGE_PRICES"
_DATE_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="USD per 1M prompt tokens")
    output: float = Field(ge=0, description="USD per 1M completion tokens")
    cached_input: float | None = Field(
        default=None,
        ge=0,
        description="USD per 1M prompt tokens served from the prefix cache; None: as input",
    )


# UNVERIFIED (see the module's docstring): hand-entered list prices, standard tier, as known in 2025; not
# checked against a live price page here. Override with TASKFORGE_PRICES rather than trusting them for money.
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": Price(input=2.50, output=10.00, cached_input=1.25),
    "gpt-4o-mini": Price(input=0.15, output=0.60, cached_input=0.075),
    "gpt-4.1": Price(input=2.00, output=8.00, cached_input=0.50),
    "gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10),
    "gpt-4.1-nano": Price(input=0.10, output=0.40, cached_input=0.025),
    "o3-mini": Price(input=1.10, output=4.40, cached_input=0.55),
    "o4-mini": Price(input=1.10, output=4.40, cached_input=0.275),
    "gpt-5": Price(input=1.25, output=10.00, cached_input=0.125),
    "gpt-5-mini": Price(input=0.25, output=2.00, cached_input=0.025),
    "gpt-5-nano": Price(input=0.05, output=0.40, cached_input=0.005),
}


def _parse_table(raw: Any, source: str) -> dict[str, Price]:
    if not isinstance(raw, Mapping):
        raise ValueError(
            f"{source}: a price table must be a JSON object mapping model names to "
            '{"input": <USD per 1M>, "output": <USD per 1M>}'
        )
    table: dict[str, Price] = {}
    for model, entry in raw.items():
        try:
            table[str(model)] = entry if isinstance(entry, Price) else Price.model_validate(entry)
        except ValidationError as exc:
            errors = exc.errors()
            err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
            field = ".".join(str(p) for p in err["loc"]) or "(entry)"
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise ValueError(f"{source}: {model}.{field}: {msg}") from exc
    return table


class PriceTable:
    """Model name → price, with the overrides already applied."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self.prices = dict(prices)

    @classmethod
    def load(cls, overrides: Mapping[str, Any] | None = None, path: str | Path | None = None) -> PriceTable:
        """Built-in prices, then the file (`path`, else $TASKFORGE_PRICES), then `overrides`."""
        prices = dict(DEFAULT_PRICES)
        file = path if path is not None else os.environ.get(PRICES_ENV) or None
        if file is not None:
            file = Path(file)
            try:
                raw = json.loads(file.read_text(encoding="utf-8"))
            except OSError as exc:
                raise ValueError(
                    f"{file}: cannot read the price table ({PRICES_ENV}): {exc.strerror or exc}"
                ) from exc
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{file}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"
                ) from exc
            prices.update(_parse_table(raw, str(file)))
        if overrides:
            prices.update(_parse_table(overrides, "price overrides"))
        return cls(prices)

    def price(self, model: str) -> Price | None:
        """Exact name first, then the name without a release date (`gpt-4o-2024-08-06` → `gpt-4o`)."""
        found = self.prices.get(model)
        if found is None:
            found = self.prices.get(_DATE_SUFFIX.sub("", model))
        return found

    def cost(self, model: str, tokens_in: int, tokens_out: int, tokens_cached: int = 0) -> float:
        """USD for one reply; `tokens_cached` is the part of `tokens_in` the server read from its prefix cache
        (as OpenAI, vLLM and llama.cpp report it, a part of the prompt tokens, not beside them)."""
        price = self.price(model)
        if price is None:
            return 0.0
        cached = min(max(tokens_cached, 0), tokens_in)
        cached_price = price.input if price.cached_input is None else price.cached_input
        return (
            (tokens_in - cached) * price.input + cached * cached_price + tokens_out * price.output
        ) / 1_000_000

    def note(self, model: str) -> str | None:
        """Why the cost of `model` reads 0, when it does."""
        if self.price(model) is not None:
            return None
        return (
            f"no price for model '{model}': its cost is recorded as 0 (add it to a JSON price table named by "
            f"{PRICES_ENV})"
        )
