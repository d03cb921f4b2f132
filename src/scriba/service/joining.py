"""Asking to join a game by mail, as the seeds' newcomers did (DecameroNomic rule 4: "dopo
averne fatto richiesta all'Umile Scriba"; Anderwelt R.7(2)).

A stranger's request (:mod:`scriba.mail.requests`) goes to the ruleset's way in when it
has one — an action of kind ``join``, else the one action the rules open to anyone (a
request for admission, an application) — and otherwise to the officer's queue, which the
officer sees (``scriba mail requests``, the officer page) and accepts. Either way an
account without a password is made for the sender's address at once, and the request is
kept as the letter's row in the mailroom (status ``join_rules`` or ``join_queued``; the
address to seat in its result). When the player then joins the game — at once, when the
rules admit them later, or when the officer accepts — the seat is bound in the same
transaction (:meth:`MailJoins.on_commit`), so the newcomer's mail starts with their
first event as a player.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update

from scriba.service import validation
from scriba.service.errors import NotAllowed, NotFound, ServiceError
from scriba.service.inputs import Outcome
from scriba.service.mailroom import Mailroom
from scriba.service.profile import normalize_email
from scriba.service.reads import Reads
from scriba.service.seats import Seats
from scriba.store.accounts import AccountRow, SeatRow
from scriba.store.mail import Letter

RULES, QUEUED, DONE, DECLINED = "join_rules", "join_queued", "join_done", "join_declined"


@dataclass
class JoinAnswer:
    way: str  # "rules": given to the rules' action | "queued": the officer's | "refused"
    player: str
    outcome: Outcome | None = None  # the rules' decision, when they had a say
    reason: str = ""


class MailJoins:
    """The mail's way into a game; registered as a commit listener to bind the seats."""

    def __init__(self, store: Any, commands: Any, reads: Reads, seats: Seats,
                 mailroom: Mailroom) -> None:
        self._session = store.session
        self.commands = commands
        self.reads = reads
        self.seats = seats
        self.mailroom = mailroom

    def way_in(self, game_id: str) -> str | None:
        """The action that lets a non-player in or ask to be let in, if the rules have one."""
        actions = self.reads.declared_actions(game_id)
        joins = [a.name for a in actions if a.kind == "join"]
        anyone = [a.name for a in actions if "anyone" in a.who and a.kind != "leave"]
        if joins:
            return joins[0]
        return anyone[0] if len(anyone) == 1 else None

    def ask(self, game_id: str, letter_id: int, email: str, name: str, text: str = "",
            channel: str = "mail", request_id: str | None = None) -> JoinAnswer:
        """A stranger at ``email`` asks to play as ``name``: the rules' action, or the queue."""
        status = self.reads.status(game_id)
        language = str(status.get("language") or "en")
        try:
            name = validation.new_player(name, status["players"], language)
        except ServiceError as error:
            return JoinAnswer("refused", name, reason=str(error))
        email = normalize_email(email)
        self.seats._account_for(email, name, language)  # noqa: SLF001 - the same service
        action = self.way_in(game_id)
        if action is None:
            self.mailroom.finish(letter_id, QUEUED, email, game_id, name)
            return JoinAnswer("queued", name)
        declared = next(a for a in self.reads.declared_actions(game_id) if a.name == action)
        # the letter's words for a text, the name asked for a required name (Nomic3's
        # surname); a way in that asks for more is refused by the rules, with their reason
        args: dict[str, Any] = {k: name for k, kind in declared.params.items()
                                if kind == "str" and k != "text"}
        if "text" in declared.params and text.strip():
            args["text"] = text[:5000]
        # kept before it is decided: a seat the rules give at once is bound by on_commit
        self.mailroom.finish(letter_id, RULES, email, game_id, name)
        outcome = self.commands.perform(game_id, name, action, args, channel=channel,
                                        request_id=request_id)
        if not outcome.accepted:
            self.mailroom.finish(letter_id, "refused", outcome.message, game_id, name)
            return JoinAnswer("refused", name, outcome, outcome.message)
        return JoinAnswer("rules", name, outcome)

    # --- the officer's queue --------------------------------------------------------
    def queue(self, game_id: str) -> list[dict[str, Any]]:
        """The requests waiting for the officer: id, player, address, when received."""
        with self._session() as session:
            rows = session.scalars(select(Letter).where(
                Letter.game_id == game_id, Letter.status == QUEUED).order_by(Letter.id))
            return [{"id": r.id, "player": r.player, "email": r.result,
                     "received": r.received_at} for r in rows]

    def accept(self, game_id: str, request: int) -> Outcome:
        """The officer admits the player a queued request asked for (seated with them)."""
        found = next((r for r in self.queue(game_id) if r["id"] == request), None)
        if found is None:
            raise NotFound(f"There is no request {request} waiting in {game_id}.")
        outcome = self.commands.add_player(game_id, found["player"])
        if not outcome.accepted:
            raise NotAllowed(outcome.message)
        self.seats.seat(game_id, found["player"], found["email"])  # if on_commit did not
        self.mailroom.finish(request, DONE, found["email"], game_id, found["player"])
        return outcome

    def decline(self, game_id: str, request: int) -> None:
        found = next((r for r in self.queue(game_id) if r["id"] == request), None)
        if found is None:
            raise NotFound(f"There is no request {request} waiting in {game_id}.")
        self.mailroom.finish(request, DECLINED, found["email"], game_id, found["player"])

    # --- the commit listener --------------------------------------------------------
    def on_commit(self, connection: Any, game_id: str, events: list[dict[str, Any]],
                  outcome: Any) -> None:
        """Seat a player who joined in these events after asking by mail."""
        joined = {e["payload"].get("player") for e in events if e["type"] == "player_joined"}
        if not joined:
            return
        letters = Letter.__table__
        rows = connection.execute(select(letters.c.id, letters.c.player, letters.c.result)
                                  .where(letters.c.game_id == game_id,
                                         letters.c.status.in_((RULES, QUEUED)),
                                         letters.c.player.in_(joined))).all()
        seats, accounts = SeatRow.__table__, AccountRow.__table__
        for letter_id, player, email in rows:
            account = connection.execute(select(accounts.c.id).where(
                accounts.c.email == email)).scalar()
            taken = connection.execute(select(seats.c.id).where(
                seats.c.game_id == game_id,
                (seats.c.player == player) | ((seats.c.account_id == account)
                                              & (seats.c.role == "player")))).first()
            if account is not None and taken is None:
                connection.execute(insert(seats).values(game_id=game_id, account_id=account,
                                                        role="player", player=player))
            connection.execute(update(letters).where(letters.c.id == letter_id)
                               .values(status=DONE))
