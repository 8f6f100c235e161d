"""The process's long-lived heap kept away from the cyclic garbage collector while a command works over it."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Allocations between two collections of the youngest generation while the heap is settled (Python's default
# is 700).
YOUNG = 10_000


@contextmanager
def settled_heap() -> Iterator[None]:
    """For the length of a run, what is alive when it starts (modules, the world and its indexes, the compiled
    graph) is out of reach of the cyclic garbage collector: each full collection walked all of it again, and a
    few of them cost a persona run as much CPU as its gates. What the run allocates is collected as usual; at
    the end everything goes back under the collector, so a long-lived process keeps nothing it would free.
    Enter it once the world is loaded: `taskforge author` and `taskforge certify` both do. The youngest
    generation is collected less often meanwhile (`YOUNG`): a run makes and drops millions of small containers
    (envelopes, rows, check results), almost none of them in cycles, and a collection every 700 of them cost a
    certification a few percent of its CPU for nothing."""
    was = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(was[0], YOUNG), *was[1:])
    try:
        yield
    finally:
        gc.set_threshold(*was)
        gc.unfreeze()


@contextmanager
def settled_after_loading() -> Iterator[Callable[[], None]]:
    """`settled_heap` for a command that loads its modules and world inside it (`taskforge check`): the cyclic
    collector is off while they load (its full collections walked them again and again as they were made, a
    sixth of a `check --draft`'s CPU); `settled()` then freezes them out of its reach and turns it back on for
    what the command makes after. On the way out they are handed back, and the collector is as it was, so a
    process that runs many checks (the tests) collects them as usual."""
    was = gc.isenabled()
    gc.disable()

    def settled() -> None:
        gc.freeze()
        if was:
            gc.enable()

    try:
        yield settled
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
