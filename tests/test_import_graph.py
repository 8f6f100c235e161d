"""Imports point one way: no import cycle among the modules of authoring/, certify/ and simulator/; and a
package is imported by the others through its front door (`from certify import Task`, never
`from certify.task import Task`).

The graph is read from the source with `ast`, so it holds every import a module can execute: top-level ones and
those inside functions (a lazy import is still a dependency; it only moves the failure to run time), with
relative imports resolved. Imports under `if TYPE_CHECKING:` are left out: they never execute, and they are how
an annotation names a type without depending on its module at run time.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("authoring", "certify", "simulator")

# Cycles allowed for now: none. A cycle found is named as a path.
KNOWN: set[tuple[str, str]] = set()

Graph = dict[str, set[str]]


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, tuple[Path, bool]]:
    """Every module of `packages` under `root`: dotted name -> (file, whether it is a package's __init__)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """The nodes of `tree` outside `if TYPE_CHECKING:` blocks (their `else:` branch does run)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _owner(name: str, known: dict[str, tuple[Path, bool]]) -> str | None:
    """The module of ours that a dotted name is, or lives in (`certify.task.Task` -> `certify.task`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, is_package: bool, known: dict[str, tuple[Path, bool]]) -> set[str]:
    """The modules of ours that module `name` imports. `from pkg import sub` depends on `pkg.sub` when it is a
    module, else on `pkg` itself."""
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(filter(None, (_owner(a.name, known) for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                owner = _owner(f"{base}.{alias.name}", known)
                if owner is not None:
                    targets.add(owner)
    targets.discard(name)
    return targets


def import_graph(root: Path, packages: tuple[str, ...]) -> Graph:
    known = modules(root, packages)
    return {name: imports_of(name, path, is_package, known) for name, (path, is_package) in known.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """One cycle per group of modules that import each other (a strongly connected component), as the path
    `a -> b -> ... -> a` through it, shortest first from its first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iteratively (a deep package would overflow the recursion limit).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next((e for e in edges if e in graph), None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(_path_through(graph, group) for group in groups)


def _path_through(graph: Graph, group: set[str]) -> list[str]:
    """The shortest cycle through the first module of `group` inside it (breadth first)."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & group):
            if nxt == start:
                return [*paths[node], start]
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start} in {sorted(group)}")


def describe(found: list[list[str]]) -> str:
    return "import cycles:\n" + "\n".join("  " + " -> ".join(cycle) for cycle in found)


def without(graph: Graph, edges: set[tuple[str, str]]) -> Graph:
    return {name: {t for t in targets if (name, t) not in edges} for name, targets in graph.items()}


# --- the graph itself, on a small tree ------------------------------------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_graph_resolves_imports_and_names_a_cycle(tmp_path):
    write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/cli/__init__.py": "from .main import run\n",
            "app/cli/main.py": "from . import world\nfrom ..core import engine\n",
            "app/cli/world.py": "def load():\n    from app.cli.main import run  # a lazy import counts\n",
            "app/core/__init__.py": "",
            "app/core/engine.py": (
                "import os\nfrom typing import TYPE_CHECKING\nfrom .model import Task\n"
                "if TYPE_CHECKING:\n    from app.cli import main\nelse:\n    from app.core import model\n"
            ),
            "app/core/model.py": "import app.core.engine as e\nclass Task: ...\n",
        },
    )
    graph = import_graph(tmp_path, ("app",))
    assert graph["app.cli"] == {"app.cli.main"}
    assert graph["app.cli.main"] == {"app.cli.world", "app.core.engine"}
    assert graph["app.cli.world"] == {"app.cli.main"}
    assert graph["app.core.engine"] == {"app.core.model"}, "TYPE_CHECKING imports are left out, else kept"
    assert cycles(graph) == [
        ["app.cli.main", "app.cli.world", "app.cli.main"],
        ["app.core.engine", "app.core.model", "app.core.engine"],
    ]
    assert "app.cli.main -> app.cli.world -> app.cli.main" in describe(cycles(graph))
    assert cycles(without(graph, {("app.cli.world", "app.cli.main")})) == [
        ["app.core.engine", "app.core.model", "app.core.engine"]
    ]


def test_a_long_cycle_is_named_by_its_shortest_path():
    graph = {"a": {"b"}, "b": {"c", "a2"}, "c": {"a"}, "a2": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "a2", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# --- the three packages ---------------------------------------------------------------------------------------


def test_no_import_cycle_but_the_known_ones():
    graph = import_graph(ROOT, PACKAGES)
    assert len(graph) > 100, "the packages were not found"
    found = cycles(without(graph, KNOWN))
    assert not found, describe(found)


def test_no_import_cycle():
    found = cycles(import_graph(ROOT, PACKAGES))
    assert not found, describe(found)


# --- front doors: a package's __init__ is its API ---------------------------------------------------------------

# Which packages may import which others, and only through the other's __init__.
FRONT_DOORS = {"authoring": ("certify", "simulator"), "certify": ("simulator",)}


def reaching_in(root: Path, package: str, others: tuple[str, ...]) -> list[str]:
    """`file:line module` for every import in `package` of a submodule of one of `others`."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name.split(".")[0] in others and "." in name:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_a_submodule_import_is_found(tmp_path):
    write(
        tmp_path,
        {
            "app/a.py": "from lib import Thing\nimport lib\n",
            "app/b.py": "def f():\n    from lib.inner import Thing\n    import lib.inner as i\n",
        },
    )
    assert reaching_in(tmp_path, "app", ("lib",)) == ["app/b.py:2 lib.inner", "app/b.py:3 lib.inner"]


def test_packages_are_imported_through_their_front_door():
    for package, others in FRONT_DOORS.items():
        found = reaching_in(ROOT, package, others)
        assert not found, f"{package} reaches into {', '.join(others)}:\n" + "\n".join(found)


def test_every_name_of_certifys_front_door_resolves():
    import certify

    assert len(certify.__all__) > 50
    for name in certify.__all__:
        if name in ("mcp_server", "openenv_env"):  # optional extras, imported when asked for
            continue
        assert getattr(certify, name) is not None, name
