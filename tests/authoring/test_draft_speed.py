"""`check --draft` in seconds (issue 21): what a draft skips, and the caches it leans on, which must never answer
for content they were not computed from."""

from __future__ import annotations

import importlib
import sys
from types import SimpleNamespace

import pytest

from authoring.graph import calls

fairness_node = importlib.import_module("authoring.graph.nodes.fairness")


@pytest.mark.parametrize(("writes", "drawn"), [(True, ["record"]), (False, [])])
def test_the_staircase_picture_is_drawn_ahead_only_for_a_run_that_writes(monkeypatch, writes, drawn):
    """A draft stops before `finalize`: it gets the calibration worked out ahead (its items need it), never the
    picture only a commit writes."""
    pictured: list[str] = []
    worked_out: list[str] = []

    def calibration(run, tasks):
        worked_out.append("calibration")
        return "record", None

    monkeypatch.setattr(fairness_node, "calibration", calibration)
    monkeypatch.setattr(fairness_node, "png", lambda record: pictured.append(record))
    run = SimpleNamespace(
        options=SimpleNamespace(frontier_agent=None), rehearsable=lambda: True, writes=writes
    )
    fairness_node.draw_ahead(run, [])
    assert worked_out == ["calibration"] and pictured == drawn


def test_an_sdk_error_is_retried_without_the_sdk_being_imported_for_it():
    """The retry policy recognises the model SDK's transient errors once a model driver has imported the SDK; a
    run of rule drivers never imports it, and no other error is transient."""
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert calls._transient(openai.APIConnectionError(request=request))
    assert calls._transient(openai.APITimeoutError(request=request))
    assert not calls._transient(ValueError("a role's reply that does not parse is not infrastructure"))
    assert "openai" in sys.modules  # the premise: the SDK's errors exist only where the SDK was imported


def test_a_draft_never_imports_the_model_sdk_or_the_plotting_library():
    """What `check --draft` imports for nothing was a third of its CPU: in a fresh interpreter, the draft's
    modules load neither the model SDK nor matplotlib (a model driver and a commit import them themselves)."""
    import subprocess

    code = (
        "import sys, authoring.cli.stories, authoring.checks, authoring.draft; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'matplotlib'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
