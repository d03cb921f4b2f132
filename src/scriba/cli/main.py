"""The ``scriba`` command: a thin shell over :class:`scriba.service.Service`.

It speaks to people: player text is printed, never interpreted (:mod:`scriba.cli.output`);
every mistake is one clear line on standard error and a non-zero exit, never a traceback
(``SCRIBA_DEBUG=1`` shows it); commands answer in sentences in the game's language.
Heavy modules (the service, its database, the Agora tools) are imported only by the
commands that need them, so that ``scriba --help`` starts at once.

The commands live in modules by job: :mod:`scriba.cli.games` (make and play),
:mod:`scriba.cli.reading` (read a game), :mod:`scriba.cli.upkeep` (files, database, tools),
on the groups of :mod:`scriba.cli.apps`; this module puts them together and runs them.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import typer

# The command modules register their commands on the apps as they are imported, in this
# order (the order of ``--help``); they import nothing heavy at load time.
from scriba.cli import games, reading, upkeep  # noqa: F401
from scriba.cli.apps import cli, export_app, import_app
from scriba.cli.common import Mistake
from scriba.cli.output import fail

# Command groups of other modules, registered only when the command line needs them
# (their imports are heavy): (module, the first words that need it, help for --help).
# Each module has ``register(app)``; the Agora one ``register(app, import_app, export_app)``.
EXTRAS: list[tuple[str, tuple[str, ...], dict[str, str]]] = [
    ("scriba.cli.agora", ("agora", "import", "export"),
     {"agora": "Agora Nomic: re-tally its recorded votes."}),
    ("scriba.cli.web", ("serve", "token", "revoke", "officer"),  # the web server, tokens
     {"serve": "Serve the web pages and the API.", "token": "Print a new API token.",
      "revoke": "Revoke API tokens.", "officer": "Make an account a game's officer."}),
    ("scriba.cli.publish", ("publish",),  # the public pages as a static site
     {"publish": "Write a game's public pages as a static site."}),
    ("scriba.cli.mail", ("mail",),  # letters in and out
     {"mail": "Play by e-mail: receive, serve, fetch and send letters."}),
    ("scriba.cli.checkrule", ("check-rule",),  # a rule's code checked, not proposed
     {"check-rule": "Check a rule's code without proposing it."}),
    ("scriba.cli.cases", ("cases",),  # the docket, one case
     {"cases": "A game's cases: the docket, or one case whole."}),
    ("scriba.cli.correct", ("correct",),  # the record corrected, the game recomputed
     {"correct": "Correct a game's record: the game recomputed, the difference shown."}),
    ("scriba.cli.fork", ("fork",),  # a new game with another's history up to a point
     {"fork": "Fork a game: a new game with its history up to a point, played apart."}),
    ("scriba.cli.simulate", ("simulate",),  # bots play a ruleset; what went wrong
     {"simulate": "Let bots play a ruleset and report stalls, runaways and errors."}),
]


# --- the whole command ----------------------------------------------------------------

_registered: set[str] = set()


def register_extras(argv: list[str] | None = None) -> typer.Typer:
    """Register the other modules' command groups: all of them, or (given the command
    line) those it needs, with a one-line stand-in for the others in ``--help``."""
    first = next((a for a in argv if not a.startswith("-")), None) if argv is not None \
        else None
    for module_name, words, stand_ins in EXTRAS:
        if module_name in _registered:
            continue
        if argv is None or first in words:
            module = importlib.import_module(module_name)
            if module_name == "scriba.cli.agora":
                module.register(cli, import_app, export_app)
            else:
                module.register(cli)
            _registered.add(module_name)
        elif f"stand-in {module_name}" not in _registered:
            for word, help_text in stand_ins.items():
                cli.command(word, help=help_text, context_settings={
                    "allow_extra_args": True, "ignore_unknown_options": True})(_stand_in)
            _registered.add(f"stand-in {module_name}")
    return cli


def _stand_in() -> None:  # never run: the real group replaces it when its word is given
    raise Mistake("this command is not available")


def __getattr__(name: str) -> Any:
    # ``from scriba.cli.main import app`` (tests, embedding) gets every command.
    if name == "app":
        return register_extras()
    raise AttributeError(name)


def main() -> None:
    argv = sys.argv[1:]
    if argv[:2] == ["mail", "receive"]:
        # a mail server starts this once per letter: answered before typer builds its
        # commands (see scriba.cli.mail.receive_argv)
        from scriba.cli.mail import receive_argv

        code = receive_argv(argv[2:])
        if code is not None:
            sys.exit(code)
    register_extras(argv)
    try:
        cli(args=argv, standalone_mode=True)
    except SystemExit:
        raise
    except Exception as error:  # noqa: BLE001 - every mistake is one line, never a traceback
        if os.environ.get("SCRIBA_DEBUG"):
            raise
        fail(_explain(error))
        sys.exit(1 if _is_refusal(error) else 2)


def _is_refusal(error: Exception) -> bool:
    from scriba.service.errors import NotAllowed

    return isinstance(error, NotAllowed)


def _explain(error: Exception) -> str:
    from scriba.service.errors import ServiceError

    if isinstance(error, ServiceError | Mistake):
        return str(error)
    if isinstance(error, OSError):
        return f"{error.filename or ''}: {error.strerror or error}".lstrip(": ")
    if isinstance(error, ValueError | LookupError | TypeError):
        return f"{error}"
    return f"Scriba failed: {type(error).__name__}: {error} (SCRIBA_DEBUG=1 shows where)"


if __name__ == "__main__":
    main()
