"""`world show --facts` tags each piece with check's verdict on a `sets` fact there, and the tag is check's own
judgement (issue 21): for every way a story can come to the piece — the source it names (the piece's document,
or one whose passage sends the reader there, the hop check follows) and its target's parameter (the option list
and default a widget gives it) — the tag says refused exactly when check's refusals do (the skimmers' rule,
`factcheck.ground._skimmed_errors`, and the default rule an add or a read is held to), and "accepted" only when
every way is accepted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from authoring.factcheck.ground import _skimmed_errors
from authoring.factcheck.model import Governance
from authoring.groundable import _documents, groundable, is_default, referred
from authoring.overlay import world_for
from certify import option_mentions
from simulator import DEFAULT_WORLD, World, option_values

SERVICING = Path(__file__).parent / "fixtures" / "outsider6_asset_servicing_lead"


def _routes(world: World, kind: str, ref: str) -> list[tuple[str, str | None]]:
    """Every (source named, holder) check grounds a fact of the document `kind:ref` under, found here from the
    documents' text with check's own hop reader."""
    out: list[tuple[str, str | None]] = [(f"{kind}:{ref}", None)]
    if kind == "resource":
        out += [
            (f"{k}:{r}", f"resource:{ref}")
            for k, r, _, text, _ in _documents(world)
            if (k, r) != (kind, ref) and ref in referred(text)
        ]
    return out


def _params(world: World, name: str, value: str) -> list[dict]:
    """Every widget parameter of the world named `name` that takes `value`: the targets a story grounding the
    piece's value could have."""
    return [
        param
        for fixture in world.backends.values()
        for widget in fixture.catalog.widgets.values()
        if (param := widget.param(name)) is not None and value in [str(o) for o in option_values(param)]
    ]


@pytest.mark.parametrize("where", ["default", "outsider6_overlay"])
def test_every_tag_is_check_s_verdict_for_every_way_a_story_comes_to_the_piece(where):
    world = World.load(DEFAULT_WORLD if where == "default" else world_for(SERVICING, None))
    judged = refused = accepted = mixed = 0
    for g in groundable(world):
        for x in g.sets:
            params: list[dict | None] = [None] if x.param == "tab" else _params(world, x.param, x.value)
            verdicts = []
            for named, holder in _routes(world, g.kind, g.ref):
                for param in params:
                    kind, ref = named.split(":", 1)
                    gov = Governance(
                        kind, ref, "", "", g.position, sets=x.param, value=x.value, holder=holder
                    )
                    target = SimpleNamespace(
                        widget=SimpleNamespace(param=lambda n, p=param, k=x.param: p if n == k else None),
                        params={} if param is None else {x.param: x.value},
                    )
                    # check's reading of the passage (the option it states first) and its refusals by reading
                    # and by default
                    said = [] if param is None else option_mentions(g.text, param, as_written=True)
                    check_refuses = (
                        (param is not None and (not said or str(said[0].value) != x.value))
                        or bool(_skimmed_errors(world, "story.md", gov, [target]))
                        or (param is not None and is_default(param, x.value))
                    )
                    tag = x.refusal(named, param)
                    assert tag is not None, (
                        g.ref,
                        g.position,
                        x.param,
                        x.value,
                        named,
                        "no verdict for this way",
                    )
                    assert bool(tag) == check_refuses, (g.ref, g.position, x.param, x.value, named, tag)
                    verdicts.append(check_refuses)
                    judged += 1
            ways = {
                (
                    named,
                    () if p is None else tuple(str(o) for o in option_values(p)),
                    None if p is None else p.get("value"),
                )
                for named, _ in _routes(world, g.kind, g.ref)
                for p in params
            }
            listed = {(v.named, v.options, v.default) for v in x.verdicts}
            assert listed == {(n, o, None if d is None else str(d)) for n, o, d in ways}, (
                g.ref,
                g.position,
                x,
            )
            if not verdicts:
                continue
            if not any(verdicts):
                assert x.refused == "" and ": refused" not in x.tag()
                accepted += 1
            elif all(verdicts):
                assert x.refused and "accepted" not in x.refused
                refused += 1
            else:
                assert x.refused and "; accepted (" in x.refused, x.refused
                mixed += 1
    assert judged and refused and accepted
    if where == "default":
        assert mixed, (
            "the default world has pieces whose verdict depends on the way (the resource index's hop)"
        )
