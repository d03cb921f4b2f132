"""Importing an exported game: the whole file checked before anything is written.

An export is one JSON event per line. The import reads it as a stream (never the whole
file in memory), within :data:`MAX_IMPORT_BYTES`, and folds every event into a scratch
state while checking what the kernel itself guarantees of a live log
(:mod:`scriba.service.importcheck`, which lists the checks).

Only then are the events written, in one transaction. A refusal is
:class:`~scriba.service.errors.InvalidInput` naming the line and the reason; it leaves
nothing behind.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

from sqlalchemy import insert, select

from scriba.service import validation
from scriba.service.errors import GameExists, InvalidInput
from scriba.service.importcheck import (  # where callers have always found them
    MAX_DEPTH,
    MAX_LINE_BYTES,
    Checker,
    Forged,
)
from scriba.service.messages import translate
from scriba.store.eventstore import EventStore
from scriba.store.schema import events as events_table
from scriba.store.schema import games as games_table

__all__ = ["MAX_DEPTH", "MAX_IMPORT_BYTES", "MAX_LINE_BYTES", "MESSAGES", "import_game",
           "refused"]

MAX_IMPORT_BYTES = 32 * 2**20   # the whole file
_BATCH = 500                    # events per INSERT when writing

MESSAGES = {
    "line": "Cannot import line {line} of the file: {reason}.",
    "file": "Cannot import the file: {reason}.",
    "too_big": "the file is larger than {limit} bytes",
    "empty": "it holds no events",
}


def refused(language: str, line: int | None, reason: str) -> InvalidInput:
    reason = reason.rstrip(".")
    if line is None:
        return InvalidInput(translate(MESSAGES["file"], language, reason=reason), "file")
    return InvalidInput(translate(MESSAGES["line"], language, line=line, reason=reason),
                        "file")


def import_game(store: EventStore, source: Any, game_id: str | None = None,
                max_bytes: int = MAX_IMPORT_BYTES, name: str | None = None) -> str:
    """Check the export ``source`` (a path, a binary file, bytes, or lines), then write it
    as game ``game_id`` (default: the id in the file) called ``name`` (default: the
    file's, or "… (copy)" when a game of the database has that name already). Returns the
    game's id."""
    with tempfile.SpooledTemporaryFile(max_size=4 * 2**20) as spool:
        checker = Checker()
        for number, line in _lines(source, max_bytes, checker):
            spool.write(line)
            try:
                checker.feed(line)
            except Forged as forged:
                raise refused(checker.language, number, str(forged)) from None
        if checker.state.seq == 0:
            raise refused(checker.language, None, translate(MESSAGES["empty"], "en"))
        try:
            checker.state.to_json()
        except (TypeError, ValueError) as error:
            raise refused(checker.language, None, f"the state is not plain data ({error})") \
                from None
        new_id = validation.game_id(game_id or checker.state.game_id, checker.language)
        if name is not None:
            name = validation.text(name, "name", checker.language, validation.GAME_NAME_MAX,
                                   blank=False)
        spool.seek(0)
        _write(store, new_id, checker, spool, name)
        return new_id


def _lines(source: Any, max_bytes: int, checker: Checker) -> Iterator[tuple[int, bytes]]:
    """Numbered lines as bytes, refusing a file beyond ``max_bytes`` as soon as it shows."""
    total = 0
    for number, line in enumerate(_raw_lines(source, max_bytes), start=1):
        total += len(line)
        if total > max_bytes:
            raise refused(checker.language, None,
                          translate(MESSAGES["too_big"], checker.language, limit=max_bytes))
        if not line.strip():
            continue
        yield number, line


def _raw_lines(source: Any, max_bytes: int) -> Iterator[bytes]:
    """A path or binary file is read line by line; bytes or a str are the file's content;
    anything else is taken as its lines."""
    if isinstance(source, os.PathLike):
        with open(source, "rb") as handle:
            yield from _read_lines(handle, max_bytes)
    elif isinstance(source, bytes | bytearray):
        yield from _read_lines(io.BytesIO(source), max_bytes)
    elif hasattr(source, "readline"):
        yield from _read_lines(source, max_bytes)
    else:
        for line in source.splitlines() if isinstance(source, str) else source:
            if isinstance(line, str):
                # lone surrogates pass here so that the checker can name their line
                line = line.encode("utf-8", "surrogatepass")
            yield line if line.endswith(b"\n") else line + b"\n"


def _read_lines(handle: IO[Any], max_bytes: int) -> Iterator[bytes]:
    # readline with a bound: one 61 MB "line" must not be read into memory whole.
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            yield line  # the checker refuses it (too long); the size limit may first
            return
        yield line


def _copy_name(connection: Any, name: str, language: str) -> str:
    """``name``, or "name (copy)", "name (copy 2)", … when a game has that name already:
    two games of one server are told apart by their names on every page."""
    taken = set(connection.execute(select(games_table.c.name)).scalars())
    candidate, n = name, 1
    while candidate in taken:
        candidate = translate("{name} (copy)", language, name=name) if n == 1 else \
            translate("{name} (copy {n})", language, name=name, n=n)
        n += 1
    return candidate[:validation.GAME_NAME_MAX]


def _write(store: EventStore, game_id: str, checker: Checker, spool: IO[bytes],
           name: str | None = None) -> None:
    """Write the checked events in one transaction, in batches (bounded memory)."""
    language = checker.language
    with store.engine.begin() as connection:
        if connection.execute(select(games_table.c.id).where(games_table.c.id == game_id)).first():
            raise GameExists(validation.game_exists(game_id, language))
        name = name or _copy_name(connection, checker.state.name or game_id, language)
        connection.execute(insert(games_table), [{
            "id": game_id, "name": name[:200],
            "ruleset": checker.state.ruleset[:64], "created_at": datetime.now(UTC)}])
        batch: list[dict[str, Any]] = []
        for line in spool:
            if not line.strip():
                continue
            event = json.loads(line)
            if event["type"] == "game_created":
                event["payload"]["game_id"] = game_id
                event["payload"]["name"] = name  # the copy's own (the pages read it here)
            batch.append({"game_id": game_id, **event})
            if len(batch) >= _BATCH:
                connection.execute(insert(events_table), batch)
                batch = []
        if batch:
            connection.execute(insert(events_table), batch)
