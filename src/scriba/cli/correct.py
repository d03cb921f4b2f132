"""``scriba correct GAME --annul SEQ | --add-json '{...}' | --set-json '{...}' --reason TEXT
[--dry-run] [--by NAME]``: the officer corrects a game's record. The game is recomputed
from the correction's point and the difference told in sentences, in the game's language
(``--lang`` for another); ``--dry-run`` shows it and changes nothing."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any

import typer

from scriba.cli.apps import DbOption
from scriba.cli.common import Mistake, _service
from scriba.cli.output import safe_block, say


def register(app: typer.Typer) -> None:
    app.command("correct")(correct_command)


def correct_command(
    game: str,
    reason: Annotated[str, typer.Option(help="Why the record is corrected (told to every "
                                              "player)")],
    annul: Annotated[int | None, typer.Option(
        help="Annul the player's command of this event (its number in the log)")] = None,
    add_json: Annotated[str | None, typer.Option(
        "--add-json", help='Add a lost command: {"at": TIME, "actor": P, "action": A, '
                           '"args": {...}}')] = None,
    set_json: Annotated[str | None, typer.Option(
        "--set-json", help='Set what the record should have said: {"at": TIME, "vars": '
                           '{...}, "players": {P: {...}}, "offices": {...}}')] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show the difference; change nothing")] = False,
    by: Annotated[str | None, typer.Option(help="Who corrects (default: the officer)")]
    = None,
    lang: Annotated[str | None, typer.Option(help="it, de or en (default: the game's)")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="The answer as JSON")] = False,
    db: str = DbOption,
) -> None:
    """Correct a game's record: the game recomputed, the difference shown (and, unless
    --dry-run, recorded and announced to every player)."""
    correction = _correction(annul, add_json, set_json)
    service = _service(db)
    try:
        corrections = service.corrections
        preview = corrections.preview(game, correction, by, reason)
        if not dry_run:
            preview = corrections.confirm(game, correction, by, preview.through,
                                          reason=reason)
        if as_json:
            shown = {k: v for k, v in asdict(preview).items() if k != "patch"}
            say(safe_block(json.dumps(shown, ensure_ascii=False, indent=2)))
            return
        heading, lines = corrections.describe(game, preview, lang)
        say(f"[bold]{safe_block(heading)}[/bold]")
        for line in lines:
            say(safe_block(line))
    finally:
        service.close()


def _correction(annul: int | None, add_json: str | None, set_json: str | None
                ) -> dict[str, Any]:
    given = [x for x in (annul, add_json, set_json) if x is not None]
    if len(given) != 1:
        raise Mistake("Say one correction: --annul EVENT, --add-json or --set-json.")
    if annul is not None:
        return {"kind": "annul", "event": annul}
    text = add_json if add_json is not None else set_json
    try:
        value = json.loads(str(text))
    except ValueError:
        raise Mistake("The correction is not valid JSON.") from None
    if not isinstance(value, dict):
        raise Mistake("The correction must be a JSON object: {...}.")
    return {**value, "kind": "add" if add_json is not None else "set"}
