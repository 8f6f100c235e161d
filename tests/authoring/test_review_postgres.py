"""Two processes claiming one review item in a Postgres checkpoint store: exactly one wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from authoring.review import Claims
from authoring.run import checkpointer

ROOT = Path(__file__).resolve().parents[2]

CLAIMANT = """
import sys
from authoring.review import Claims
from authoring.run import checkpointer

url, who = sys.argv[1:3]
with checkpointer(url) as saver:
    claims = Claims(saver)
    print("ready", flush=True)
    sys.stdin.readline()
    print(claims.claim("item:x1", who), flush=True)
    sys.stdin.readline()  # alive, holding what it won, until the test has tried to take it
"""


def test_two_processes_claiming_one_item_exactly_one_wins(postgres_database):
    url = postgres_database()
    with checkpointer(url) as saver:
        Claims(saver)  # the store and its tables, made once before the race
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIMANT, url, f"reviewer{i}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    for racer in racers:
        assert racer.stdout.readline().strip() == "ready"
    for racer in racers:
        racer.stdin.write("go\n")
        racer.stdin.flush()
    results = [racer.stdout.readline().strip() for racer in racers]
    assert sorted(results) == ["False", "True"], results

    with checkpointer(url) as saver:
        claims = Claims(saver)
        assert claims.claim("item:x1", "late") is False, "the living winner's claim holds"
        for racer in racers:
            racer.communicate("done\n", timeout=60)
        # the winner has exited: a claim left by a process that is gone (on this machine) is taken over at once
        assert claims.claim("item:x1", "late") is True
        claims.release("item:x1")
        assert claims.claim("item:x1", "later") is True
