"""The service is the whole boundary: interfaces (cli/, web/, mail/) import nothing from
the kernel, the store or the rule-code sandbox — not even inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "scriba"
INTERFACES = ("cli", "web", "mail")
FORBIDDEN = ("scriba.kernel", "scriba.store", "scriba.rulecode")


def imported_modules(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """Every module an import statement of ``path`` names, relative ones resolved."""
    package = package or ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


def interface_files(interface: str) -> list[Path]:
    return sorted((SRC / interface).rglob("*.py")) if (SRC / interface).is_dir() else []


@pytest.mark.parametrize("interface", INTERFACES)
def test_interfaces_import_only_the_service(interface):
    files = interface_files(interface)
    if not files:
        pytest.skip(f"no {interface}/ in this branch")
    crossings = [f"{path.relative_to(SRC)}:{line} imports {module}"
                 for path in files for line, module in imported_modules(path)
                 if module.startswith(FORBIDDEN) or module in ("scriba.kernel", "scriba.store",
                                                                "scriba.rulecode")]
    assert crossings == []


def test_the_checker_sees_every_form_of_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import scriba.kernel.engine\nfrom scriba.store import eventstore\n"
                      "def f():\n    from scriba import rulecode\n"
                      "    from ..kernel import state\n")
    modules = [m for _, m in imported_modules(sample, "scriba.cli")]
    assert "scriba.kernel.engine" in modules and "scriba.store" in modules
    assert "scriba.rulecode" in modules and "scriba.kernel" in modules
