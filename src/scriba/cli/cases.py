"""``scriba cases GAME [N]``: the docket of a game's cases, or one case told whole — in
sentences, in the game's language (``--lang`` for another)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from scriba.cli.opened import opened_service
from scriba.cli.output import console, safe, safe_block


def cases_command(
    game: str,
    number: Annotated[str | None, typer.Argument(help="A case's number: that case whole")]
    = None,
    lang: Annotated[str | None, typer.Option(
        "--lang", help="it, de or en (default: the game's)")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="Database URL (default: $SCRIBA_DB or sqlite:///scriba.db)")] = None,
) -> None:
    """The game's cases, those waiting for a judgment first; or one case whole."""
    from scriba.service.messages import translate

    out = console()
    with opened_service(db, out, 1) as service:
        language = lang or service.reads.status(game).get("language") or "en"

        def _(text: str, **params: Any) -> str:
            return translate(text, language, **params)

        if number is None:
            docket = service.cases.docket(game, language)
            if not docket:
                out.print(_("No case yet."))
            for case in docket:
                out.print(_line(case, _))
            return
        case = service.cases.case(game, number, language)
        out.print(_line(case, _))
        for concern in case["concerns"]:
            out.print("  " + _("It concerns: {what}", what=safe(concern["text"])))
        if case["parties"]:
            out.print("  " + _("Parties: {players}", players=safe(", ".join(case["parties"]))))
        judgment = case["judgment"]
        if judgment and judgment["reasons"]:
            out.print(safe_block(judgment["reasons"]))
        for earlier in case["earlier"]:
            out.print("  " + _("Set aside ({why}): {word}", why=safe(earlier["superseded"]),
                               word=safe(earlier["word"])))
        for step in case["steps"]:
            out.print(f"  {safe((step['time'] or '')[:16].replace('T', ' '))}  "
                      f"{safe(step['text'], None)}")


def _line(case: dict[str, Any], _: Any) -> str:
    """One case on a line: its number, status, judge, judgment, question."""
    parts = [_("Case {number}", number=safe(case["label"])), safe(case["status_word"])]
    if case["judge"] or case["status"] != "closed":
        parts.append(_("judge: {player}", player=safe(case["judge"])) if case["judge"]
                     else _("no judge yet"))
    if case["judgment"] and case["judgment"]["word"]:
        parts.append(_("judgment: {word}", word=safe(case["judgment"]["word"])))
    return " · ".join(parts) + " — " + safe(case["question"])


def register(app: typer.Typer) -> None:
    app.command("cases")(cases_command)
