"""``scriba check-rule FILE [--game G]``: a rule's code checked without proposing it, as the
propose form's check button does (service.checks): does it compile, what would adopting it
do now. Errors name the line and show it with a caret."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scriba.cli.apps import DbOption
from scriba.cli.common import Mistake, _read_text, _service
from scriba.cli.output import safe_block, say

if TYPE_CHECKING:
    from scriba.service import Service


def register(app: typer.Typer) -> None:
    app.command("check-rule")(check_rule_command)


def check_rule_command(
    file: Annotated[Path, typer.Argument(help="A file with the rule's code (Starlark)")],
    game: Annotated[str | None, typer.Option(
        help="Check it as a new rule proposed in this game: the rules' checks, the dry "
             "run")] = None,
    player: Annotated[str | None, typer.Option(
        help="Who proposes it (default: the first player who may propose now)")] = None,
    title: str = typer.Option("", help="The rule's title"),
    text: str = typer.Option("", help="The rule's text"),
    lang: str = typer.Option(None, help="Language of the answer: en, it, de (default: the "
                             "game's, or English)"),
    db: str = DbOption,
) -> None:
    """Check a rule's code without proposing it: does it compile, what would adopting it
    do now. Errors name the line and show it with a caret."""
    code = _read_text(file, "rule file")
    service = _service(db)
    if game is None:
        checked = service.checks.code(code, lang or "en")
    else:
        player, action = _proposer(service, game, player)
        checked = service.checks.proposal(game, player, action, {"changes": [
            {"enact": {"title": title or file.stem, "text": text or title or file.stem,
                       "code": code}}]}, lang)
    for line in _checked_lines(checked):
        say(safe_block(line))
    if checked["refused"]:
        raise typer.Exit(1)


def _proposer(service: Service, game: str, player: str | None) -> tuple[str, str]:
    """The player who proposes (given, or the first who may now) and their propose action."""
    players = [player] if player else service.reads.load(game).players
    for name in players:
        action = next((a.name for a in service.reads.actions_for(game, name)
                       if a.kind == "propose"), None)
        if action is not None:
            return name, action
    if player:
        raise Mistake(f"{player} may not propose now in {game}")
    raise Mistake(f"nobody may propose now in {game}")


def _checked_lines(checked: dict[str, Any]) -> list[str]:
    """What the check found, as an author reads it (the check button's words)."""
    lines = []
    if checked["refused"]:
        lines.append(checked["refused"])
    lines += checked["warnings"]
    dry = checked.get("dry_run")
    if dry is not None:
        lines.append("If it were adopted now:")
        lines += [f"  {e['text']}" for e in dry["events"]]
        lines += [a.get("explained") or a["message"] for a in dry["aborted"]]
        lines += [f"A change would fail: {f['reason']}" for f in dry["failed_changes"]]
    elif not checked["refused"] and not checked["warnings"]:
        lines.append("The code compiles.")
    return lines
