"""What the commands share: the one-line mistake, the service opened, KEY=VALUE arguments,
files read as UTF-8 text or YAML, aligned tables, the winner's sentence and events in a
line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scriba.cli.output import safe, say

if TYPE_CHECKING:
    from scriba.service import Service


class Mistake(Exception):
    """A mistake on the command line; the message is the one line shown."""


def _service(db: str | None) -> Service:
    from scriba.service import default_db_url, open_service

    return open_service(db or default_db_url())


def _parse_args(pairs: list[str]) -> dict[str, str]:
    """KEY=VALUE pairs; values stay text (the action's declared types are applied by the
    game: ``ruling=yes`` is "yes", ``question=Rule 301: does it bind?`` is that question)."""
    args: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise Mistake(f"arguments are KEY=VALUE, not {pair!r}")
        if key in args:
            raise Mistake(f"the argument {key} is given twice")
        args[key] = value
    return args


def _read_text(path: Path, what: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise Mistake(f"cannot read the {what} {path}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Mistake(f"the {what} {path} is not UTF-8 text (byte {error.start})") from None


def _table(headers: list[str], rows: list[list[str]]) -> None:
    """Aligned columns, never cut: long cells push the line out and the terminal wraps
    it; cells are already made safe."""
    widths = [max([len(h)] + [len(_plain(r[i])) for r in rows]) for i, h in enumerate(headers)]
    say("[bold]" + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
        .rstrip() + "[/bold]")
    for row in rows:
        say("  ".join(cell + " " * (w - len(_plain(cell)))
                      for cell, w in zip(row, widths, strict=True)).rstrip())


def winner_sentence(winners: list[str], ended: Any = False) -> str:
    """Who won, as a sentence ("Anna wins." / "No winner yet.")."""
    if winners:
        names = ", ".join(safe(w) for w in winners)
        if ended:
            return f"{names} won."
        return f"{names} {'wins' if len(winners) == 1 else 'win'}."
    return "The game is over without a winner." if ended else "No winner yet."


def language_name(code: str) -> str:
    """A language's English name ("it" → "Italian")."""
    from babel import Locale

    return str(Locale("en").languages.get(code, code))


def _plain(markup: str) -> str:
    from rich.text import Text

    return Text.from_markup(markup).plain


def _yaml(text: str, path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise Mistake(f"{path} is not valid YAML{where}") from None


def _event_line(event: dict[str, Any], with_time: bool = False) -> None:
    when = f" {event['time']}" if with_time else ""
    say(f"[dim]{event['seq']:>5}{when}[/dim] {safe(event['type'])} "
        f"{safe(event['actor'] or '')} {safe(_brief(event['payload']), None)}")


def _brief(payload: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in payload.items() if k not in ("rules", "changes")},
                      ensure_ascii=False, default=str)
    return text if len(text) < 160 else text[:157] + "..."
