"""The analysis ask that names no figure (the Find level's, where the figure's words are the target's own catalog
words): the ladder takes the column the skill's threshold step names, else the one its scale fits."""

from __future__ import annotations

from certify.agents.analysis import analysis_ask, figure_column, label_column, write_analysis
from certify.agents.knowledge import Document

SKILL = (
    "Portfolio morning brief.\n"
    "4. Compare active weights in Sector Tilt vs Benchmark and flag any sector past a 140 bps talking-point "
    "threshold.\n"
    "5. Scan Idea Pipeline for high-conviction ideas."
)
SCHEMA = {
    "params": [{"paramName": "fund"}, {"paramName": "region"}],
    "schema_data": {
        "table": {
            "columnsDefs": [
                {"field": k}
                for k in ("fund", "region", "sector", "fund_weight", "benchmark_weight", "active_weight")
            ]
        }
    },
}
ROWS = [
    {
        "fund": "Keel",
        "region": "Europe",
        "sector": "Energy",
        "fund_weight": 0.07,
        "benchmark_weight": 0.01,
        "active_weight": 0.06,
    },
    {
        "fund": "Keel",
        "region": "Europe",
        "sector": "Tech",
        "fund_weight": 0.2,
        "benchmark_weight": 0.21,
        "active_weight": -0.01,
    },
]
PROMPT = (
    "Read it. Then answer with a short analysis worked through in line with the Portfolio Morning Brief skill "
    "that cites, for each row, the figure the skill's talking-point threshold applies to, compares it with the "
    "skill's talking-point threshold and ends with a verdict."
)


def test_a_plain_ask_is_read_and_its_figure_and_label_come_from_the_skill_and_the_rows():
    ask = analysis_ask(PROMPT)
    assert ask is not None and (ask.label, ask.figure, ask.name) == ("", "", "talking-point threshold")
    # benchmark_weight shares as many of the step's words and fits the scale as well: the phrase decides
    assert figure_column(ask, ROWS, SCHEMA, SKILL) == "active_weight"
    assert label_column(ROWS, SCHEMA, "active_weight") == "sector"
    skill = Document(
        kind="skill", key="portfolio-morning-brief", title="Portfolio Morning Brief", summary="", text=SKILL
    )
    text = write_analysis(ask, ROWS, SCHEMA, [skill]) or ""
    assert "Energy: active weight 0.06 is above 140 bps" in text and "Verdict: 1 of 2" in text


def test_a_named_ask_is_read_as_before():
    named = PROMPT.replace(
        "cites, for each row, the figure the skill's talking-point threshold applies to",
        "cites each sector's active weight",
    )
    ask = analysis_ask(named)
    assert ask is not None and (ask.label, ask.figure) == ("sector", "active weight")
