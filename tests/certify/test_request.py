"""How the offline agents read: a request's sentences, fenced-off twins, stated vs stale values, policy phrases,
described widgets; a document's policy values, asked steps and cross-references; a build; BM25 ranking."""

from __future__ import annotations

from certify.agents import knowledge
from certify.agents.building import build_spec
from certify.agents.request import (
    Op,
    Target,
    find_described,
    named_targets,
    operations,
    policies,
    read_request,
    sentences,
    stale_values,
    stated_values,
)
from certify.agents.retrieval import BM25, stem, terms

STATUS = {
    "paramName": "status",
    "label": "Status",
    "options": [{"label": v, "value": v} for v in ("Open", "Working", "Cancelled", "Closed")],
}
DESK = {
    "paramName": "desk",
    "label": "Desk",
    "options": [{"label": v, "value": v} for v in ("Credit Flow", "Cash Equities", "Listed Derivatives")],
}
LIMIT = {
    "paramName": "limit_type",
    "label": "Limit Type",
    "options": [{"label": v, "value": v} for v in ("Leverage", "Liquidity", "Issuer")],
}
CATALOG = [
    {
        "origin": "Tide",
        "widget_id": "orders",
        "name": "Working Orders",
        "category": "Blotter",
        "description": "Orders on the desk with side, size and the limit price.",
    },
    {
        "origin": "Tide",
        "widget_id": "fills",
        "name": "Fill Log",
        "category": "Blotter",
        "description": "Every execution with quantity, price and venue.",
    },
    {
        "origin": "Tide",
        "widget_id": "limits",
        "name": "Desk Limit Usage",
        "category": "Limits",
        "description": "Each desk limit and how much of it is used.",
    },
]


def op_for(request, name: str) -> Op:
    widget = next(w for w in CATALOG if w["name"] == name)
    target = Target(widget, request.live([request.prompt.find(name)]))
    return Op("update", target, target.positions[0])


def test_sentences_keep_abbreviations_together():
    text = "Cut to client St. Brennan Endowment. Then leave a note."
    assert [text[a:b] for a, b in sentences(text)] == [
        "Cut to client St. Brennan Endowment.",
        "Then leave a note.",
    ]


def test_twin_clauses_are_fenced_off_but_a_note_about_leaving_things_alone_is_not():
    r = read_request(
        "Add Working Orders with status Cancelled. Do not touch the second Working Orders (status "
        "Working): that one is right. Leave a Desk Note recording what a sweep must leave alone."
    )
    assert len(r.twins) == 1 and "second" in r.prompt[r.twins[0][0] : r.twins[0][1]]
    targets = named_targets(r, CATALOG)
    assert [t.widget_id for t in targets] == ["orders"] and len(targets[0].positions) == 1


def test_stated_values_skip_what_the_widget_currently_shows():
    r = read_request(
        "Reset the Desk Limit Usage from Tide that currently shows desk Credit Flow, limit type "
        "Leverage by setting desk to Credit Flow and limit type to Liquidity."
    )
    op = op_for(r, "Desk Limit Usage")
    schema = {"params": [DESK, LIMIT]}
    assert stated_values(r, op, schema, [op.target]) == {"desk": "Credit Flow", "limit_type": "Liquidity"}
    assert stale_values(r, op, schema) == {"desk": "Credit Flow", "limit_type": "Leverage"}


def test_an_option_inside_a_name_or_in_lower_case_prose_is_not_stated():
    r = read_request(
        "On the open Blotter dashboard, add Working Orders from Tide with desk set to Listed "
        "Derivatives and status per the pulled-orders rule."
    )
    r.name([w["name"] for w in CATALOG])
    op = op_for(r, "Working Orders")
    assert stated_values(r, op, {"params": [DESK, STATUS]}, [op.target]) == {"desk": "Listed Derivatives"}


def test_policy_phrases_are_found_but_a_question_is_not_a_policy():
    found = policies(
        "switch it back to desk Credit Flow, the limit type the exit-horizon limit calls for; status "
        "per the pulled-orders rule, and region: whatever the London-session rule says. Record what "
        "the last step of its workflow says."
    )
    assert [p.phrase for p in found] == ["exit-horizon limit", "pulled-orders rule", "London-session rule"]


SCHEMAS = {
    "orders": {
        "params": [{"paramName": "status", "label": "Status"}],
        "schema_data": {"table": {"columnsDefs": [{"headerName": "Ticker"}, {"headerName": "Limit Price"}]}},
    },
    "fills": {
        "params": [{"paramName": "desk", "label": "Desk"}],
        "schema_data": {"table": {"columnsDefs": [{"headerName": "Venue"}, {"headerName": "Fill Qty"}]}},
    },
}


def test_a_described_widget_is_found_by_what_it_serves_not_by_its_description():
    # "executions" and "quantity" are the fill log's catalog words; the schema says which serves a limit price
    r = read_request(
        "On the open board, put up the executions with their quantity and limit price from Tide's Blotter "
        "with status Working."
    )
    found = find_described(r, CATALOG, [], set(), SCHEMAS)
    assert [t.widget_id for t in found] == ["orders"] and "limit price" in found[0].described
    # with no schema read, nothing is matched on the catalog's words
    assert find_described(r, CATALOG, [], set(), {}) == []


def test_policy_value_takes_the_phrase_s_own_value_not_its_neighbour_s():
    text = (
        "Under the pulled-orders rule, working-order views show status Cancelled; under the live-orders rule "
        "they show status Working.\n| Rule | Status |\n| closed-book rule | Closed |"
    )
    others = [p.phrase for p in policies(text)]
    assert knowledge.policy_value(text, "the pulled-orders rule", STATUS, others).value == "Cancelled"
    assert knowledge.policy_value(text, "live-orders rule", STATUS, others).value == "Working"
    assert knowledge.policy_value(text, "Closed-book rule", STATUS, others).value == "Closed"
    assert knowledge.policy_value(text, "the open-book rule", STATUS, others) is None
    heading = "## The quiet-book rule\nViews use status Open."
    assert knowledge.policy_value(heading, "quiet-book rule", STATUS, []).value == "Open"


SKILL = (
    "Capital allocation workflow.\n1. Pull fundamentals for the ticker.\n"
    "2. For each quarter, add Share Buybacks and Dividends Paid together into a total.\n"
    "3. Compare that total against Free Cash Flow for the same quarter.\n"
    "4. Use share count drift as buyback evidence: a falling count corroborates the buyback line.\n"
    "5. Cite every figure via the Desk Conventions resource, see openbb://workspace/desk/conventions."
)


def test_the_asked_step_by_position_or_by_the_words_of_the_question():
    assert knowledge.asked_unit(SKILL, "what the last step of its workflow says").startswith(
        "Cite every figure"
    )
    assert knowledge.asked_unit(SKILL, "what its first step says") == "Pull fundamentals for the ticker."
    assert knowledge.asked_unit(SKILL, "step 3").startswith("Compare that total")
    unit = knowledge.asked_unit(
        SKILL,
        "which payout line its comparison adds to Share Buybacks before testing the "
        "total against Free Cash Flow",
    )
    assert "Dividends Paid" in unit


def test_cross_references_lead_to_a_known_document():
    docs = [
        knowledge.Document(
            "resource", "openbb://workspace/desk/conventions", "conventions", "desk conventions"
        ),
        knowledge.Document("skill", "close-checklist", "Close Checklist", "Close Checklist"),
    ]
    last = knowledge.units(SKILL)[-1]
    assert knowledge.cross_reference(last, docs) is docs[0]
    assert knowledge.cross_reference("Sign off with the amber ledger stamp.", docs) is None
    assert [d.key for d in knowledge.resources("| Desk | openbb://workspace/desk/conventions. |")] == [
        "openbb://workspace/desk/conventions"
    ]


def test_build_specs_in_the_forms_prompts_use():
    for prompt in (
        "Add a Kill Check Service backend serving a Pulled Order Tracker table, publish Kill Check App "
        "with Pulled Order Tracker on its Pulled tab, and instantiate the app. Add the built Pulled Order "
        "Tracker to the blotter.",
        "Register Kill Check Service (serving a Pulled Order Tracker table), publish Kill Check App with "
        "Pulled Order Tracker on a Pulled tab, instantiate it, and pin the built Pulled Order Tracker.",
    ):
        spec = build_spec(prompt)
        assert spec is not None and (spec.backend, spec.widget, spec.widget_type, spec.app, spec.tab) == (
            "Kill Check Service",
            "Pulled Order Tracker",
            "table",
            "Kill Check App",
            "Pulled",
        )
        assert spec.place and spec.widget_id == "pulled_order_tracker" and spec.tab_id == "pulled"
        assert spec.apps_json()[0]["tabs"]["pulled"]["layout"][0]["i"] == "pulled_order_tracker"
    assert build_spec("Add Working Orders to the board.") is None


def test_bm25_ranks_by_shared_stemmed_words():
    assert stem("flags") == "flag" and stem("citations") == stem("cited") and stem("ss") == "ss"
    assert terms("The Venue's flags") == ["venue", "flag"]
    ranking = BM25(
        [
            "Venue Toxicity Flags: venues where prices move against us",
            "Fill Log: every execution",
            "Venue Mix: where the desk trades",
        ]
    ).rank("toxic venue flags")
    assert [i for i, _ in ranking] == [0, 2]


def test_a_description_that_points_at_a_notes_entry_is_the_widget_the_entry_names():
    from certify.agents.request import pointed

    pool = [{"widget_id": "a", "name": "Trade Ideas"}, {"widget_id": "b", "name": "Limit Utilization"}]
    notes = [("Desk Shortlist", "Desk Shortlist\nFirst look: Limit Utilization\nSecond look: Trade Ideas")]
    said = "the widget the Desk Shortlist lists for the second look"
    assert pointed(said, pool, notes) == pool[0]
    assert pointed("the widget listed for the first look on the Desk Shortlist", pool, notes) == pool[1]
    # a phrase naming no note, or an entry naming no widget of the pool, points at nothing
    assert pointed("the widget listed for the second look", pool, notes) is None
    assert pointed(said, pool[1:], notes) is None


def test_a_copy_clause_asks_one_more_instance_of_the_widget_it_copies():
    schema = {"params": [DESK, STATUS]}
    prompt = (
        "On the blotter, fix Working Orders by setting desk Credit Flow and status per the tidy-up rule, plus a "
        "copy beside it per the interim rule."
    )
    request = read_request(prompt)
    request.name([w["name"] for w in CATALOG])
    targets = named_targets(request, CATALOG)
    ops = operations(request, targets, {"orders": [{"widget_uuid": "w1"}]})
    assert [(o.kind, o.target.widget_id, o.clause is not None) for o in ops] == [
        ("update", "orders", False),
        ("create", "orders", True),
    ]
    # the copy stands on the same stated values (its own rule decides the rest)
    assert stated_values(request, ops[1], schema, targets) == {"desk": "Credit Flow"}
    # a clause about several widgets names the one it copies; the name said there asks nothing of its own
    several = read_request(
        "Add Fill Log and Working Orders with desk Credit Flow and status per the tidy-up rule, and a copy of "
        "the Working Orders under the interim rule."
    )
    ops = operations(several, named_targets(several, CATALOG), {})
    assert [(o.kind, o.target.widget_id, o.clause is not None) for o in ops] == [
        ("create", "fills", False),
        ("create", "orders", False),
        ("create", "orders", True),
    ]
    # the verb that asks for the copy is the copy's: the named widget is still read (the clause ends at a colon)
    read = read_request(
        "My question sits in Working Orders with desk Credit Flow and status per the tidy-up rule, and add a copy "
        "per the interim rule: read it, then record the first row as returned in Desk Note."
    )
    read.name([w["name"] for w in CATALOG])
    ops = operations(read, named_targets(read, CATALOG), {})
    assert [(o.kind, o.clause is not None) for o in ops] == [("read", False), ("create", True)]
    # beside a read, a sentence of its own asks for the copy by name
    apart = read_request(
        "Read Working Orders with desk Credit Flow and status per the tidy-up rule and record the first row as "
        "returned in Desk Note. Also add a copy of the Working Orders per the interim rule."
    )
    apart.name([w["name"] for w in CATALOG])
    ops = operations(apart, named_targets(apart, CATALOG), {})
    assert [(o.kind, o.target.widget_id, o.clause is not None) for o in ops] == [
        ("read", "orders", False),
        ("create", "orders", True),
    ]
    # a copy a twin's clause mentions is already on the board: nothing to add
    fenced = read_request(
        "Add Working Orders with desk Credit Flow. There is also a copy of Working Orders on desk Cash Equities "
        "that must stay."
    )
    assert [o.clause for o in operations(fenced, named_targets(fenced, CATALOG), {})] == [None]


def test_a_policy_phrase_with_a_twin_word_fences_nothing_off():
    """ "the second-reader export policy" is the persona's name for a rule: the sentence that says it still asks
    for the widget (outsider4's data platform lead: the Derive rung did nothing on it)."""
    from certify.agents.request import read_request

    prompt = (
        "The open Export Sign-off dashboard should carry Export Review Queue; put it, cut to the status the "
        "second-reader export policy calls for and period MTD, with a copy beside it per the trial policy."
    )
    request = read_request(prompt)
    assert request.twins == []
    assert [p.phrase for p in request.policies] == ["second-reader export policy", "trial policy"]
    # a real fence is still read
    fenced = read_request(
        "Add Cash Ladder for fund Keel. The second Cash Ladder on the board stays as it is."
    )
    assert len(fenced.twins) == 1


def test_the_note_is_the_name_the_request_gives_it_not_a_widget_named_like_a_note():
    from certify.agents.reading import note_name

    called = (
        "consult Contact Log for client X and record the date of the first row in a briefing note called "
        "Promise IR Note. Add a copy of the Contact Log too."
    )
    assert note_name(called) == "Promise IR Note"
    unnamed = (
        "write the date of the top row into Promise IR Note on the board. Further down, a second Contact Log "
        "from the desk answers another question, so do not edit it."
    )
    assert note_name(unnamed, ["Contact Log", "Client Flows"]) == "Promise IR Note"
    # without the catalog, a mention ending like a note's is all a reader has
    assert note_name(unnamed) == "Contact Log"
