"""`scriba import flr` refuses what is not an Agora ruleset, saying at which line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from scriba.cli.main import app

HEAD = ("THE FULL LOGICAL RULESET\n\nDate of this ruleset: 5 Jul 2026\n\n"
        + "=" * 72 + "\nCategory\n" + "-" * 72 + "\n")


def _import(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["import", "flr", str(path), "--db",
                                      f"sqlite:///{tmp_path / 'g.db'}"])
    return result.exit_code, " ".join(result.output.split())


def test_text_that_is_no_ruleset_is_refused(tmp_path: Path) -> None:
    code, output = _import(tmp_path, "hello\nthis is not an FLR\n")
    assert code == 2
    assert "line 3: reached the end without a category separator" in output
    assert "created game" not in output


def test_a_broken_rule_header_is_refused_with_its_line(tmp_path: Path) -> None:
    code, output = _import(tmp_path, HEAD + "\nRool 1/0 (Power=3)\nA title\n\nText.\n")
    assert code == 2
    assert "line 9: not a rule header" in output and "Rool 1/0" in output
