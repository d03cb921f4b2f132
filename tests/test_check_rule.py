"""``scriba check-rule FILE [--game G]``: a rule's code checked from the command line as the
propose form's button checks it — the error told with its line and caret, or the dry run."""

from __future__ import annotations

from pathlib import Path

from test_cli import scriba

BROKEN = "def on_rule_changed(game, event):\n    i = 0\n    while i < 3:\n        i += 1\n" \
         "    return []\n"
POINT = ("def on_rule_changed(game, event):\n    cause = event[\"cause\"]\n"
         "    if cause.get(\"kind\") != \"proposal\":\n        return []\n"
         "    return [std.add_var(\"points\", 1, player=cause[\"author\"])]\n")


def test_check_rule_tells_the_error_with_its_line_and_caret(tmp_path: Path) -> None:
    rule = tmp_path / "bonus.star"
    rule.write_text(BROKEN, encoding="utf-8")
    result = scriba("check-rule", str(rule), "--lang", "it", db=tmp_path / "s.db",
                    check=False)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "Il codice della nuova regola non compila:",
        "Riga 3, colonna 5: `while` è Python, ma il codice delle regole è Starlark, che non "
        "ha `while`.",
        "    3 |     while i < 3:",
        "      |     ^^^^^",
        "Ripeti su una lista o un intervallo: `for player in game[\"active_players\"]:` "
        "oppure `for i in range(10):`."]


def test_check_rule_in_a_game_shows_the_dry_run_and_records_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    scriba("new", "suber", "--game", "g", "-p", "Anna", "-p", "Bruno", "--start",
           "2026-03-01T10:00:00Z", db=db)
    rule = tmp_path / "point.star"
    rule.write_text(POINT, encoding="utf-8")
    result = scriba("check-rule", str(rule), "--game", "g", "--title", "A point", db=db)
    assert result.stdout.splitlines() == [
        "If it were adopted now:",
        "  Proposal 301 is adopted.",
        "  Rule 301 (“A point”) is enacted by proposal 301 of Anna.",
        "  Anna: points +1 (now 1). (rule 301)"]
    log = scriba("log", "g", db=db).stdout
    assert "proposal_submitted" not in log and "301" not in log
    refused = scriba("check-rule", str(rule), "--game", "g", "--player", "Bruno", db=db,
                     check=False)
    assert refused.returncode != 0 and "Bruno may not propose now in g" in refused.stderr
