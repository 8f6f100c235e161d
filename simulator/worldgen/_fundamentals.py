"""Plumbline Fundamentals: a small deterministic company model and the row builders of its widgets."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._common import SpecError, stable_seed

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_SEASON = {1: 0.97, 2: 1.0, 3: 1.01, 4: 1.05}


def _quarter_end(label: str) -> dt.date:
    year, q = int(label[:4]), int(label[-1])
    month = q * 3
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return nxt - dt.timedelta(days=1)


def fiscal_label(label: str, fy_end: int) -> str:
    """Calendar quarter -> the company's fiscal quarter label, e.g. 2026Q1 with a June year end -> FQ3'26."""
    end_month = int(label[-1]) * 3
    year = int(label[:4])
    fq = ((end_month - fy_end - 1) % 12) // 3 + 1
    fy = year if end_month <= fy_end else year + 1
    return f"FQ{fq}'{fy % 100:02d}"


@dataclass(frozen=True)
class Quarter:
    label: str
    revenue: float
    gross_profit: float
    operating_income: float
    net_income: float
    eps: float
    cash: float
    debt: float
    total_assets: float
    equity: float
    operating_cash_flow: float
    capex: float
    buybacks: float
    dividends_paid: float
    dividend_per_share: float
    shares_open: float
    shares_issued: float
    shares_repurchased: float
    shares_close: float
    price: float
    segments: dict[str, float]
    geographies: dict[str, float]
    kpis: dict[str, float]
    consensus_revenue: float
    consensus_eps: float
    consensus_ebitda: float
    guide_low: float
    guide_high: float
    price_reaction: float

    @property
    def fcf(self) -> float:
        return self.operating_cash_flow - self.capex

    @property
    def ebitda(self) -> float:
        return self.operating_income + 0.045 * self.revenue


class FundamentalsModel:
    """Quarterly figures of every covered company, derived from its profile and a seeded random stream."""

    def __init__(
        self,
        spec: Mapping[str, Any],
        companies: Sequence[Mapping[str, str]],
        seed: str,
        vocab: Mapping[str, Sequence[str]],
    ) -> None:
        self.spec = spec
        self.vocab = vocab
        self.seed = seed
        self.quarters: list[str] = list(spec["model_quarters"])
        self.shown: list[str] = self.quarters[4:]
        self.profiles: dict[str, Mapping[str, Any]] = dict(spec["companies"])
        self.meta = {c["ticker"]: c for c in companies if c["ticker"] in self.profiles}
        if set(self.meta) != set(self.profiles):
            raise SpecError("fundamentals: every modelled ticker must be listed under companies")
        self.series: dict[str, list[Quarter]] = {t: self._simulate(t) for t in self.profiles}

    def rng(self, *parts: object) -> random.Random:
        return random.Random(stable_seed(self.seed, *parts))

    def _simulate(self, ticker: str) -> list[Quarter]:
        p = self.profiles[ticker]
        rng = self.rng("model", ticker)
        out: list[Quarter] = []
        cash, debt, shares, price = float(p["cash"]), float(p["debt"]), float(p["shares"]), float(p["price"])
        seg_w = dict(p["segments"])
        for i, label in enumerate(self.quarters):
            revenue = (
                p["revenue"] * (1 + p["growth"]) ** i * _SEASON[int(label[-1])] * rng.uniform(0.985, 1.015)
            )
            gross = revenue * (p["gross_margin"] + rng.uniform(-0.012, 0.012))
            op_inc = revenue * (p["op_margin"] + rng.uniform(-0.015, 0.015))
            net = (op_inc - debt * 0.011) * (1 - p["tax"])
            issued = round(shares * rng.uniform(0.0005, 0.004), 1)
            repurchased = (
                round(shares * rng.uniform(0.0, 0.012), 1) if p["dividend"] or p["op_margin"] > 0.2 else 0.0
            )
            shares_close = shares + issued - repurchased
            eps = net / ((shares + shares_close) / 2)
            ocf = net * rng.uniform(1.1, 1.35) + revenue * 0.03
            capex = revenue * p["capex"] * rng.uniform(0.85, 1.15)
            dps = round(p["dividend"] * (1 + 0.02 * (i // 4)), 2)
            dividends = dps * shares_close
            buybacks = repurchased * price
            cash = max(150.0, cash + ocf - capex - dividends - buybacks + rng.uniform(-60, 60))
            debt = max(0.0, debt + rng.uniform(-80, 60))
            assets = (cash + revenue * 2.4 + debt * 0.6) * rng.uniform(0.98, 1.02)
            equity = assets - debt - revenue * 0.55
            seg_w = {k: max(0.03, v + rng.uniform(-0.008, 0.008)) for k, v in seg_w.items()}
            total = sum(seg_w.values())
            segments = {k: revenue * v / total for k, v in seg_w.items()}
            geo_total = sum(p["geographies"].values())
            geographies = {
                k: revenue * v / geo_total * rng.uniform(0.97, 1.03) for k, v in p["geographies"].items()
            }
            geo_scale = revenue / sum(geographies.values())
            geographies = {k: v * geo_scale for k, v in geographies.items()}
            kpis = {}
            for name, base, unit, growth in p["kpis"]:
                value = base * (1 + growth) ** i * rng.uniform(0.985, 1.015)
                kpis[name] = round(value, 4 if unit == "ratio" else 1)
            price = max(4.0, price * rng.uniform(0.9, 1.12))
            cons_rev = revenue * rng.uniform(0.975, 1.02)
            mid = revenue * rng.uniform(0.975, 1.025)
            out.append(
                Quarter(
                    label=label,
                    revenue=revenue,
                    gross_profit=gross,
                    operating_income=op_inc,
                    net_income=net,
                    eps=eps,
                    cash=cash,
                    debt=debt,
                    total_assets=assets,
                    equity=equity,
                    operating_cash_flow=ocf,
                    capex=capex,
                    buybacks=buybacks,
                    dividends_paid=dividends,
                    dividend_per_share=dps,
                    shares_open=shares,
                    shares_issued=issued,
                    shares_repurchased=repurchased,
                    shares_close=shares_close,
                    price=price,
                    segments=segments,
                    geographies=geographies,
                    kpis=kpis,
                    consensus_revenue=cons_rev,
                    consensus_eps=eps * rng.uniform(0.94, 1.05),
                    consensus_ebitda=(op_inc + 0.045 * revenue) * rng.uniform(0.96, 1.04),
                    guide_low=mid * 0.985,
                    guide_high=mid * 1.015,
                    price_reaction=round(rng.gauss(0.0, 0.045), 4),
                )
            )
            shares = shares_close
        return out

    def quarter(self, ticker: str, label: str) -> Quarter:
        return self.series[ticker][self.quarters.index(label)]

    def year_ago(self, ticker: str, label: str) -> Quarter:
        return self.series[ticker][self.quarters.index(label) - 4]

    def fiscal(self, ticker: str, label: str) -> str:
        return fiscal_label(label, int(self.profiles[ticker]["fy_end"]))


def _m(x: float) -> float:
    return round(x, 1)


def _growth(now: float, before: float) -> float:
    return round(now / before - 1, 4) if before else 0.0


def _sid(ticker: str, code: str) -> str:
    return f"{ticker}.{code}"


def _ref(model: FundamentalsModel, ticker: str, label: str) -> str:
    doc = "10-K" if model.fiscal(ticker, label).startswith("FQ4") else "10-Q"
    return f"{ticker}-{doc}-{label}"


Builder = Callable[[FundamentalsModel, Mapping[str, Any]], list[dict[str, Any]]]
_BUILDERS: dict[str, Builder] = {}


def _builder(name: str) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        _BUILDERS[name] = fn
        return fn

    return register


def _per_quarter(
    model: FundamentalsModel, make: Callable[[str, str, Quarter, Quarter], list[dict[str, Any]]]
):
    rows: list[dict[str, Any]] = []
    for ticker in model.profiles:
        for label in model.shown:
            base = {"ticker": ticker, "period": label, "fiscal_period": model.fiscal(ticker, label)}
            for row in make(ticker, label, model.quarter(ticker, label), model.year_ago(ticker, label)):
                rows.append({**base, **row})
    return rows


@_builder("income_statement")
def _income(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        items = [
            ("Revenue", "REV", q.revenue, ya.revenue, "$m"),
            ("Gross Profit", "GP", q.gross_profit, ya.gross_profit, "$m"),
            ("Operating Income", "EBIT", q.operating_income, ya.operating_income, "$m"),
            ("Net Income", "NI", q.net_income, ya.net_income, "$m"),
            ("Diluted EPS", "EPS", q.eps, ya.eps, "$"),
        ]
        return [
            {
                "line_item": name,
                "value": round(v, 2) if unit == "$" else _m(v),
                "unit": unit,
                "yoy_growth": _growth(v, old),
                "series_id": _sid(t, code),
                "filing_ref": _ref(model, t, label),
            }
            for name, code, v, old, unit in items
        ]

    return _per_quarter(model, make)


def _statement_lines(
    model: FundamentalsModel, items: Callable[[Quarter], list[tuple[str, str, float]]]
) -> list[dict[str, Any]]:
    """Rows of a statement whose lines are (name, series code, value in $m) per quarter."""

    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        return [
            {
                "line_item": n,
                "value": _m(v),
                "unit": "$m",
                "series_id": _sid(t, c),
                "filing_ref": _ref(model, t, label),
            }
            for n, c, v in items(q)
        ]

    return _per_quarter(model, make)


@_builder("balance_sheet")
def _balance(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _statement_lines(
        model,
        lambda q: [
            ("Cash and Equivalents", "CASH", q.cash),
            ("Total Debt", "DEBT", q.debt),
            ("Total Assets", "TA", q.total_assets),
            ("Shareholders' Equity", "EQ", q.equity),
        ],
    )


@_builder("cash_flow")
def _cash_flow(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _statement_lines(
        model,
        lambda q: [
            ("Operating Cash Flow", "OCF", q.operating_cash_flow),
            ("Capital Expenditure", "CAPEX", -q.capex),
            ("Free Cash Flow", "FCF", q.fcf),
            ("Share Buybacks", "BB", -q.buybacks),
        ],
    )


@_builder("segments")
def _segments(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        return [
            {
                "segment": s,
                "revenue_musd": _m(v),
                "share_of_total": round(v / q.revenue, 4),
                "yoy_growth": _growth(v, ya.segments[s]),
                "series_id": _sid(t, "SEG." + "".join(w[0] for w in s.split())),
            }
            for s, v in q.segments.items()
        ]

    return _per_quarter(model, make)


@_builder("geographies")
def _geographies(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        return [
            {
                "geography": g,
                "revenue_musd": _m(v),
                "share_of_total": round(v / q.revenue, 4),
                "yoy_growth": _growth(v, ya.geographies[g]),
            }
            for g, v in q.geographies.items()
        ]

    return _per_quarter(model, make)


@_builder("kpis")
def _kpis(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        units = {name: unit for name, _b, unit, _g in model.profiles[t]["kpis"]}
        return [
            {"kpi": k, "value": v, "unit": units[k], "yoy_change": _growth(v, ya.kpis[k])}
            for k, v in q.kpis.items()
        ]

    return _per_quarter(model, make)


@_builder("margin_trend")
def _margin_trend(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            q = model.quarter(t, label)
            rows.append(
                {
                    "ticker": t,
                    "quarter": label,
                    "gross_margin": round(q.gross_profit / q.revenue, 4),
                    "operating_margin": round(q.operating_income / q.revenue, 4),
                    "net_margin": round(q.net_income / q.revenue, 4),
                }
            )
    return rows


@_builder("segment_trend")
def _segment_trend(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            for s, v in model.quarter(t, label).segments.items():
                rows.append({"ticker": t, "quarter": label, "segment": s, "revenue_musd": _m(v)})
    return rows


def _valuation(q: Quarter) -> dict[str, float | None]:
    mcap = q.price * q.shares_close
    ev = mcap + q.debt - q.cash
    return {
        "market_cap_musd": _m(mcap),
        "ev_musd": _m(ev),
        "ev_to_sales": round(ev / (4 * q.revenue), 2),
        "ev_to_ebitda": round(ev / (4 * q.ebitda), 1),
        "pe": round(q.price / (4 * q.eps), 1) if q.eps > 0 else None,
        "fcf_yield": round(4 * q.fcf / mcap, 4),
    }


@_builder("multiples")
def _multiples(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    names = {
        "ev_to_sales": "EV to Sales",
        "ev_to_ebitda": "EV to EBITDA",
        "pe": "Price to Earnings",
        "fcf_yield": "Free Cash Flow Yield",
    }

    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        now, before = _valuation(q), _valuation(ya)
        return [
            {"multiple": names[k], "value": now[k], "year_ago": before[k], "share_price": round(q.price, 2)}
            for k in names
            if now[k] is not None
        ]

    return _per_quarter(model, make)


@_builder("peers")
def _peers(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t, meta in model.meta.items():
        for label in model.shown:
            q, ya = model.quarter(t, label), model.year_ago(t, label)
            val = _valuation(q)
            rows.append(
                {
                    "sector": meta["sector"],
                    "period": label,
                    "ticker": t,
                    "company": meta["name"],
                    "revenue_growth": _growth(q.revenue, ya.revenue),
                    "operating_margin": round(q.operating_income / q.revenue, 4),
                    "ev_to_ebitda": val["ev_to_ebitda"],
                    "fcf_yield": val["fcf_yield"],
                }
            )
    return rows


@_builder("capital_returns")
def _capital_returns(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        returned = q.dividends_paid + q.buybacks
        return [
            {"item": "Dividends Paid", "value": _m(q.dividends_paid), "unit": "$m"},
            {"item": "Share Buybacks", "value": _m(q.buybacks), "unit": "$m"},
            {
                "item": "Share of Free Cash Flow Returned",
                "value": round(returned / q.fcf, 4) if q.fcf > 0 else 0.0,
                "unit": "ratio",
            },
        ]

    return _per_quarter(model, make)


@_builder("share_bridge")
def _share_bridge(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        return [
            {"component": "Opening Shares", "shares_m": round(q.shares_open, 1)},
            {"component": "Issued", "shares_m": q.shares_issued},
            {"component": "Repurchased", "shares_m": -q.shares_repurchased},
            {"component": "Closing Shares", "shares_m": round(q.shares_close, 1)},
        ]

    return _per_quarter(model, make)


@_builder("consensus")
def _consensus(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        items = [
            ("Revenue", q.consensus_revenue, q.revenue, "$m"),
            ("EBITDA", q.consensus_ebitda, q.ebitda, "$m"),
            ("Diluted EPS", q.consensus_eps, q.eps, "$"),
        ]
        return [
            {
                "metric": n,
                "consensus": round(c, 2) if u == "$" else _m(c),
                "actual": round(a, 2) if u == "$" else _m(a),
                "surprise_pct": round(a / c - 1, 4),
                "unit": u,
            }
            for n, c, a, u in items
        ]

    return _per_quarter(model, make)


@_builder("revisions")
def _revisions(model: FundamentalsModel, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for window in ("30D", "60D", "90D"):
            rng = model.rng("revisions", t, window)
            scale = {"30D": 1.0, "60D": 1.6, "90D": 2.2}[window]
            for year in ("FY2026", "FY2027"):
                for metric in ("Revenue", "Diluted EPS"):
                    rows.append(
                        {
                            "ticker": t,
                            "window": window,
                            "fiscal_year": year,
                            "metric": metric,
                            "revision_pct": round(rng.gauss(0.002, 0.012) * scale, 4),
                            "analysts_up": rng.randint(0, 9),
                            "analysts_down": rng.randint(0, 7),
                        }
                    )
    return rows


@_builder("surprises")
def _surprises(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            q = model.quarter(t, label)
            rows.append(
                {
                    "ticker": t,
                    "quarter": label,
                    "fiscal_period": model.fiscal(t, label),
                    "eps_consensus": round(q.consensus_eps, 2),
                    "eps_actual": round(q.eps, 2),
                    "surprise_pct": round(q.eps / q.consensus_eps - 1, 4),
                    "next_day_move": q.price_reaction,
                }
            )
    return rows


@_builder("ratings")
def _ratings(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("ratings", t)
        price = model.quarter(t, model.shown[-1]).price
        for rating, bias in (("Buy", 1.22), ("Hold", 1.04), ("Sell", 0.86)):
            rows.append(
                {
                    "ticker": t,
                    "rating": rating,
                    "brokers": rng.randint(1, 14),
                    "average_target": round(price * bias * rng.uniform(0.95, 1.05), 2),
                }
            )
    return rows


@_builder("guidance")
def _guidance(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    def make(t: str, label: str, q: Quarter, ya: Quarter) -> list[dict[str, Any]]:
        verdict = "Above" if q.revenue > q.guide_high else "Below" if q.revenue < q.guide_low else "Within"
        margin = q.operating_income / q.revenue
        m_low, m_high = round(margin - 0.012, 4), round(margin + 0.006, 4)
        return [
            {
                "metric": "Revenue",
                "guidance_low": _m(q.guide_low),
                "guidance_high": _m(q.guide_high),
                "actual": _m(q.revenue),
                "unit": "$m",
                "verdict": verdict,
            },
            {
                "metric": "Operating Margin",
                "guidance_low": m_low,
                "guidance_high": m_high,
                "actual": round(margin, 4),
                "unit": "ratio",
                "verdict": "Within",
            },
        ]

    return _per_quarter(model, make)


@_builder("outlook")
def _outlook(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("outlook", t)
        last = model.quarter(t, model.shown[-1])
        mid = last.revenue * (1 + model.profiles[t]["growth"]) * rng.uniform(0.99, 1.03)
        cons = mid * rng.uniform(0.97, 1.03)
        rows.append(
            {
                "ticker": t,
                "quarter": model.spec["next_quarter"],
                "metric": "Revenue",
                "guidance_low": _m(mid * 0.985),
                "guidance_high": _m(mid * 1.015),
                "consensus": _m(cons),
                "gap_to_midpoint": round(mid / cons - 1, 4),
            }
        )
        eps_mid = last.eps * rng.uniform(0.98, 1.06)
        eps_cons = eps_mid * rng.uniform(0.96, 1.04)
        rows.append(
            {
                "ticker": t,
                "quarter": model.spec["next_quarter"],
                "metric": "Diluted EPS",
                "guidance_low": round(eps_mid * 0.97, 2),
                "guidance_high": round(eps_mid * 1.03, 2),
                "consensus": round(eps_cons, 2),
                "gap_to_midpoint": round(eps_mid / eps_cons - 1, 4),
            }
        )
    return rows


@_builder("commitments")
def _commitments(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("commitments", t)
        # one promise per quarter it was made in, so the widget can be cut to any quarter the app offers
        for label in model.shown:
            rows.append(
                {
                    "ticker": t,
                    "commitment": rng.choice(model.spec["commitments"]),
                    "period": label,
                    "progress": rng.choice(["Delivered", "On Track", "At Risk", "Missed"]),
                }
            )
    return rows


@_builder("guidance_accuracy")
def _guidance_accuracy(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            q = model.quarter(t, label)
            mid = (q.guide_low + q.guide_high) / 2
            rows.append(
                {
                    "ticker": t,
                    "quarter": label,
                    "guidance_midpoint": _m(mid),
                    "reported": _m(q.revenue),
                    "miss_pct": round(q.revenue / mid - 1, 4),
                }
            )
    return rows


@_builder("reporting_calendar")
def _reporting_calendar(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    nxt = model.spec["next_quarter"]
    for t, meta in model.meta.items():
        rng = model.rng("calendar", t)
        date = _quarter_end(nxt) + dt.timedelta(days=rng.randint(20, 40))
        while date.weekday() >= 5:
            date += dt.timedelta(days=1)
        rows.append(
            {
                "sector": meta["sector"],
                "ticker": t,
                "company": meta["name"],
                "report_date": date.isoformat(),
                "quarter": nxt,
                "fiscal_period": model.fiscal(t, nxt),
                "timing": rng.choice(["Before Open", "After Close"]),
            }
        )
    return rows


@_builder("investor_events")
def _investor_events(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("events", t)
        for event in rng.sample(model.spec["events"], 3):
            day = dt.date(2026, 6, 1) + dt.timedelta(days=rng.randint(0, 120))
            rows.append(
                {
                    "ticker": t,
                    "event": event,
                    "date": day.isoformat(),
                    "format": rng.choice(["In person", "Webcast", "Hybrid"]),
                }
            )
    return rows


@_builder("dividends")
def _dividends(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            q = model.quarter(t, label)
            ex = _quarter_end(label) - dt.timedelta(days=18)
            rows.append(
                {
                    "ticker": t,
                    "quarter": label,
                    "ex_date": ex.isoformat(),
                    "amount_per_share": q.dividend_per_share,
                }
            )
    return rows


@_builder("filings")
def _filings(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    pages = {
        "10-K": (120, 210),
        "10-Q": (40, 80),
        "8-K": (3, 12),
        "Earnings Call": (14, 26),
        "Investor Presentation": (18, 44),
    }
    for t, meta in model.meta.items():
        for doc in pages:
            rng = model.rng("filings", t, doc)
            count = 1 if doc == "10-K" else 2 if doc == "Investor Presentation" else 3
            labels = model.shown[-count:]
            if doc == "10-K":
                labels = [next(lb for lb in reversed(model.shown) if model.fiscal(t, lb).startswith("FQ4"))]
            for label in labels:
                filed = _quarter_end(label) + dt.timedelta(days=rng.randint(25, 45))
                rows.append(
                    {
                        "ticker": t,
                        "doc_type": doc,
                        "document_id": f"{t}-{doc.replace(' ', '')}-{label}",
                        "title": f"{meta['name']} {doc} for {model.fiscal(t, label)}",
                        "period": label,
                        "filed": filed.isoformat(),
                        "pages": rng.randint(*pages[doc]),
                    }
                )
    return rows


@_builder("filing_changes")
def _filing_changes(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for doc in ("10-K", "10-Q", "8-K", "Earnings Call", "Investor Presentation"):
            rng = model.rng("changes", t, doc)
            for section in rng.sample(model.spec["filing_sections"], 2):
                rows.append(
                    {
                        "ticker": t,
                        "doc_type": doc,
                        "section": section,
                        "change": rng.choice(model.spec["filing_changes"]),
                    }
                )
    return rows


@_builder("risk_factors")
def _risk_factors(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            rng = model.rng("risk", t, label)
            for factor in rng.sample(model.spec["risk_factors"], rng.randint(1, 3)):
                rows.append(
                    {
                        "ticker": t,
                        "period": label,
                        "risk_factor": factor,
                        "change": rng.choice(["Added", "Expanded", "Narrowed", "Removed"]),
                    }
                )
    return rows


@_builder("transcript")
def _transcript(model: FundamentalsModel, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    topics = model.vocab["transcript_topic"]
    quotes = model.vocab["transcript_quote"]
    rows = []
    for t in model.profiles:
        for label in model.shown:
            rng = model.rng("transcript", t, label)
            for topic in rng.sample(topics, 3):
                rows.append(
                    {
                        "ticker": t,
                        "period": label,
                        "speaker": rng.choice(["CEO", "CFO", "Analyst"]),
                        "topic": topic,
                        "excerpt": rng.choice(quotes),
                    }
                )
    return rows


@_builder("sentiment")
def _sentiment(model: FundamentalsModel, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            rng = model.rng("sentiment", t, label)
            for topic in rng.sample(model.vocab["transcript_topic"], 3):
                rows.append(
                    {"ticker": t, "period": label, "topic": topic, "score": round(rng.uniform(-0.6, 0.9), 2)}
                )
    return rows


@_builder("questions")
def _questions(model: FundamentalsModel, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        for label in model.shown:
            rng = model.rng("questions", t, label)
            for firm in rng.sample(model.vocab["brokers"], 2):
                rows.append(
                    {
                        "ticker": t,
                        "period": label,
                        "broker": firm,
                        "topic": rng.choice(model.vocab["transcript_topic"]),
                        "follow_up": rng.choice(["Yes", "No"]),
                    }
                )
    return rows


@_builder("holders")
def _holders(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("holders", t)
        shares = model.quarter(t, model.shown[-1]).shares_close
        for holder in rng.sample(model.spec["holders"], 5):
            stake = rng.uniform(0.012, 0.085)
            rows.append(
                {
                    "ticker": t,
                    "holder": holder,
                    "shares_m": round(shares * stake, 1),
                    "pct_outstanding": round(stake, 4),
                    "change_shares_m": round(shares * stake * rng.uniform(-0.12, 0.12), 2),
                }
            )
    return rows


@_builder("insiders")
def _insiders(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("insiders", t)
        price = model.quarter(t, model.shown[-1]).price
        for role, name in rng.sample(model.spec["insiders"], 3):
            day = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 140))
            rows.append(
                {
                    "ticker": t,
                    "insider": name,
                    "role": role,
                    "side": rng.choice(["Buy", "Sell", "Sell"]),
                    "shares": rng.randint(5, 400) * 100,
                    "price": round(price * rng.uniform(0.92, 1.06), 2),
                    "date": day.isoformat(),
                }
            )
    return rows


@_builder("short_interest")
def _short_interest(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in model.profiles:
        rng = model.rng("short", t)
        level = rng.uniform(0.01, 0.09)
        for label in model.shown:
            level = max(0.004, level * rng.uniform(0.85, 1.18))
            rows.append(
                {
                    "ticker": t,
                    "date": _quarter_end(label).isoformat(),
                    "short_pct_float": round(level, 4),
                    "days_to_cover": round(rng.uniform(0.8, 7.5), 1),
                }
            )
    return rows


@_builder("directory")
def _directory(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    last = model.shown[-1]
    return [
        {
            "ticker": t,
            "name": meta["name"],
            "sector": meta["sector"],
            "fiscal_year_end": _MONTHS[int(model.profiles[t]["fy_end"]) - 1],
            "latest_quarter": last,
            "latest_fiscal_quarter": model.fiscal(t, last),
        }
        for t, meta in model.meta.items()
    ]


@_builder("series")
def _series(model: FundamentalsModel, _: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    fixed = {
        "Income Statement": [
            ("Revenue", "REV"),
            ("Gross Profit", "GP"),
            ("Operating Income", "EBIT"),
            ("Net Income", "NI"),
            ("Diluted EPS", "EPS"),
        ],
        "Balance Sheet": [
            ("Cash and Equivalents", "CASH"),
            ("Total Debt", "DEBT"),
            ("Total Assets", "TA"),
            ("Shareholders' Equity", "EQ"),
        ],
        "Cash Flow": [
            ("Operating Cash Flow", "OCF"),
            ("Capital Expenditure", "CAPEX"),
            ("Free Cash Flow", "FCF"),
            ("Share Buybacks", "BB"),
        ],
    }
    for t, p in model.profiles.items():
        for category, items in fixed.items():
            rows.extend(
                {"ticker": t, "category": category, "series": n, "series_id": _sid(t, c)} for n, c in items
            )
        for i, (name, _b, _u, _g) in enumerate(p["kpis"], 1):
            rows.append(
                {"ticker": t, "category": "Operating KPI", "series": name, "series_id": _sid(t, f"KPI{i}")}
            )
        for s in p["segments"]:
            rows.append(
                {
                    "ticker": t,
                    "category": "Segment",
                    "series": f"{s} revenue",
                    "series_id": _sid(t, "SEG." + "".join(w[0] for w in s.split())),
                }
            )
    return rows


def row_builder(model: FundamentalsModel):
    """A catalog row builder serving the `gen` names above from one model."""

    def build(
        gen: str, entry: Mapping[str, Any], key_params: Sequence[tuple[str, Sequence[Any]]]
    ) -> list[dict[str, Any]]:
        if gen not in _BUILDERS:
            raise SpecError(f"unknown fundamentals row builder {gen!r}")
        return _BUILDERS[gen](model, entry)

    return build
