"""Who may import whom in ``src/scriba``, followed through every import.

The import graph: every ``import`` and ``from … import`` of every module, at module level
and inside functions alike (an import hidden in a function to dodge a cycle is still a
dependency); ``if TYPE_CHECKING:`` blocks name types, run nothing, and are left out.
Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so those count as
imported too. Imports by name at run time (``importlib``) are not seen: the app finds its
page modules and the CLI its command modules that way, each inside its own interface.

The layers, from the bottom:

- below everything: ``scriba.errors`` and ``scriba.catalogs`` (they need nothing of
  Scriba's); the service names them ``scriba.service.errors`` / ``.catalogs``;
- the engine: ``scriba.kernel``, ``scriba.rulecode``, ``scriba.store`` — with what only
  the service loads: the bundled rulesets (``scriba.rulesets``) and Agora's ruleset
  format (``scriba.agora``);
- the service, ``scriba.service``: the one way in (``scriba.service.flr`` is the way to
  the Agora format);
- the interfaces: ``scriba.cli``, ``scriba.web``, ``scriba.mail``;
- tools beside the product, not part of it: the records research (``scriba.research``)
  and the benchmarks (``scriba.bench``). They drive the
  service and look at the engine directly, on purpose; the CLI runs them as developer
  commands.

The rules tested:

1. *Interfaces reach the engine only through the service*: no chain of imports leads from
   an interface module to a module of ``kernel``, ``rulecode`` or ``store`` without
   passing through a module of ``scriba.service`` — or, for the CLI alone, of a tool.
   The web and mail interfaces reach no tool at all.
2. Nothing in the product (the engine, the service, web, mail) imports a tool.
3. No import cycle between modules, and none between packages (``scriba.X``); above the
   engine, none even through imports that only name types.
"""

from __future__ import annotations

import ast
from collections import deque
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "scriba"
INTERFACES = ("scriba.cli", "scriba.web", "scriba.mail")
ENGINE = ("scriba.kernel", "scriba.rulecode", "scriba.store")
SERVICE = "scriba.service"
TOOLS = ("scriba.research", "scriba.bench")


def within(module: str, packages: str | tuple[str, ...]) -> bool:
    """``module`` is one of ``packages`` or inside one."""
    packages = (packages,) if isinstance(packages, str) else packages
    return any(module == p or module.startswith(p + ".") for p in packages)


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                hidden |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return hidden


def imported_modules(path: Path, package: str | None = None,
                     types: bool = False) -> list[tuple[int, str]]:
    """Every module an import statement of ``path`` names, relative ones resolved: for
    ``from x import y`` both ``x`` and ``x.y`` (``y`` may be a module or a name); with
    ``types``, those under ``if TYPE_CHECKING:`` too."""
    package = package or ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = set() if types else _type_checking_only(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


@cache
def graph(types: bool = False) -> dict[str, dict[str, int]]:
    """module -> {module it imports: line}, Scriba's modules only, with the packages
    whose ``__init__`` an import runs (not the importer's own, already running); with
    ``types``, the imports that only name types too."""
    known = modules()
    edges: dict[str, dict[str, int]] = {}
    for importer, path in known.items():
        targets = edges.setdefault(importer, {})
        for line, name in imported_modules(path, types=types):
            while name and name not in known:  # ``x.y`` where ``y`` is a name: ``x``
                name = name.rpartition(".")[0]
            if not name:
                continue
            parts = name.split(".")
            for depth in range(len(parts), 0, -1):  # the module named first, then its packages
                target = ".".join(parts[:depth])
                if target in known and target != importer \
                        and not importer.startswith(target + "."):
                    targets.setdefault(target, line)
    return edges


def chain(path: list[str], types: bool = False) -> str:
    edges = graph(types)
    return " -> ".join(f"{a} (line {edges[a][b]})" for a, b in zip(path, path[1:], strict=False)) \
        + f" -> {path[-1]}"


def crossing(start: str, edges: dict[str, dict[str, int]] | None = None) -> list[str] | None:
    """The shortest chain of imports from ``start`` to what its interface may not reach
    except through a gate (the service; for the CLI also the tools), or None."""
    edges = graph() if edges is None else edges
    cli = within(start, "scriba.cli")
    gates = (SERVICE, *TOOLS) if cli else (SERVICE,)
    forbidden = ENGINE if cli else (*ENGINE, *TOOLS)
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for target in edges.get(module, {}):
            if target in came_from or within(target, gates):
                continue
            came_from[target] = module
            if within(target, forbidden):
                path = [target]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])  # type: ignore[arg-type]
                return path[::-1]
            queue.append(target)
    return None


@pytest.mark.parametrize("interface", INTERFACES)
def test_interfaces_reach_the_engine_only_through_the_service(interface):
    starts = [m for m in modules() if within(m, interface)]
    assert starts, f"no {interface} in the tree"
    found = [chain(path) for path in map(crossing, starts) if path is not None]
    assert found == [], "\n".join(found)


def test_nothing_in_the_product_imports_a_tool():
    found = [f"{module} (line {line}) imports {target}"
             for module, targets in graph().items() for target, line in targets.items()
             if within(target, TOOLS) and not within(module, (*TOOLS, "scriba.cli"))]
    assert found == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that comes back to its start) per strongly connected part."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm; the graph is a few hundred nodes
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = set()
            while True:
                member = stack.pop()
                part.add(member)
                if member == node:
                    break
            if len(part) > 1:
                parts.append(part)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    found = []
    for part in parts:
        start = min(part)
        came_from: dict[str, str] = {}
        queue = deque([start])
        while queue and start not in came_from:
            node = queue.popleft()
            for target in sorted(edges.get(node, ())):
                if target in part and target not in came_from:
                    came_from[target] = node
                    queue.append(target)
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(came_from[path[-1]])
        found.append(path[::-1])
    return found


def test_no_module_imports_itself_through_others():
    found = [chain(path) for path in cycles({m: set(t) for m, t in graph().items()})]
    assert found == [], "\n".join(found)


def test_no_module_needs_itself_even_for_a_type():
    """A cycle closed by a type-only import is still two modules built around each other
    (as ``service.py`` and ``accounts.py`` once were): the service's parts are given what
    they use, through a Protocol where they need only a few of another's methods. Checked
    above the engine (the kernel's engine and reaction loop still name each other's types)."""
    edges = {m: {t for t in targets if not within(t, ENGINE)}
             for m, targets in graph(types=True).items() if not within(m, ENGINE)}
    found = [chain(path, types=True) for path in cycles(edges)]
    assert found == [], "\n".join(found)


def test_no_package_imports_itself_through_others():
    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for module, targets in graph().items():
        edges.setdefault(package(module), set()).update(
            package(t) for t in targets if package(t) != package(module))
    found = [" -> ".join(path) for path in cycles(edges)]
    assert found == [], "\n".join(found)


def test_the_checker_sees_every_form_of_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from typing import TYPE_CHECKING\n"
                      "import scriba.kernel.engine\nfrom scriba.store import eventstore\n"
                      "if TYPE_CHECKING:\n    from scriba.mail import intake\n"
                      "def f():\n    from scriba import rulecode\n"
                      "    from ..kernel import state\n")
    modules_named = [m for _, m in imported_modules(sample, "scriba.cli")]
    assert "scriba.kernel.engine" in modules_named and "scriba.store" in modules_named
    assert "scriba.rulecode" in modules_named and "scriba.kernel" in modules_named
    assert not any(m.startswith("scriba.mail") for m in modules_named)
    typed = [m for _, m in imported_modules(sample, "scriba.cli", types=True)]
    assert "scriba.mail.intake" in typed


def test_the_checker_finds_a_cycle_and_a_crossing():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    edges = {"scriba.cli.a": {"scriba.cli.b": 1, "scriba.service.flr": 2},
             "scriba.cli.b": {"scriba.agora.flr": 1}, "scriba.agora.flr": {"scriba.kernel": 1},
             "scriba.service.flr": {"scriba.kernel": 1},
             "scriba.web.a": {"scriba.research.agora": 1}, "scriba.cli.c": {"scriba.bench": 1},
             "scriba.bench": {"scriba.store": 1}}
    assert crossing("scriba.cli.a", edges) == [
        "scriba.cli.a", "scriba.cli.b", "scriba.agora.flr", "scriba.kernel"]
    assert crossing("scriba.cli.b", {**edges, "scriba.cli.b": {"scriba.service": 1}}) is None
    assert crossing("scriba.web.a", edges) == ["scriba.web.a", "scriba.research.agora"]
    assert crossing("scriba.cli.c", edges) is None  # a tool the CLI runs
