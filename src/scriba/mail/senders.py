"""Who wrote a letter, and how to answer them: the games there are, the player whose
registered address sent it (for the officer, the holder named ``as NAME``), the game's and
the seat's language, the note that tells a registered address to confirm a held letter.
The base of :class:`scriba.mail.intake.Intake`."""

from __future__ import annotations

from scriba.mail.cleanup import strip_quotes
from scriba.mail.letter import Letter
from scriba.mail.replies import say
from scriba.service import Service
from scriba.service.errors import ServiceError
from scriba.service.letters import LetterContext, game_address


class Senders:
    def __init__(self, service: Service) -> None:
        self.service = service
        self.mailroom = service.mailroom
        self.outbox = service.outbox
        self.clock = self.outbox.clock  # one clock for letters' ages and replies' keys

    # --- who and which game ---------------------------------------------------------
    def _games(self) -> set[str]:
        return {g["id"] for g in self.service.reads.games()}

    def _claimed_player(self, game: str, sender: str, text: str = "") -> str | None:
        """The player whose registered address sent the letter; for the game's officer,
        the office holder who is not a player (Anderwelt's GM), or the one named on the
        letter's first line ``as NAME``."""
        try:
            player = self.service.seats.player_for_email(game, sender)
            if player is not None:
                return player
            if not any(s.role == "officer" and s.email == sender
                       for s in self.service.seats.seats(game)):
                return None
            status = self.service.reads.status(game)
        except ServiceError:
            return None
        holders = {str(h) for h in status["offices"].values() if h}
        first = next((line.strip() for line in strip_quotes(text).split("\n")
                      if line.strip()), "")
        if first.lower().startswith("as ") and first[3:].strip() in holders:
            return first[3:].strip()
        outsiders = sorted(holders - set(status["players"]))
        return outsiders[0] if len(outsiders) == 1 else None

    def _registered(self, game: str, actor: str, sender: str) -> str | None:
        try:
            registered = self.service.seats.email_for_player(game, actor)
        except ServiceError:
            registered = None
        return registered or (sender if self._claimed_player(game, sender) == actor
                              else None)

    def _hold(self, context: LetterContext, game: str, claimed: str | None,
              letter: Letter) -> None:
        if claimed is None:
            return
        registered = self._registered(game, claimed, letter.sender)
        if not registered:
            return
        personal = game_address(game, self.mailroom.secret(game, claimed))
        text = say("held", context.language, game=game, subject=letter.subject[:200],
                   date=letter.date[:60], personal=personal)
        # at most one a player an hour: forged letters must not become a mail bomb
        hour = self.clock().strftime("%Y-%m-%dT%H")
        self.outbox.reply(context, "held", text, key=f"held:{game}:{claimed}:{hour}",
                          recipient=registered)

    def _day(self) -> str:
        return self.clock().strftime("%Y-%m-%d")

    def _game_language(self, game: str) -> str:
        try:
            return str(self.service.reads.status(game).get("language") or "en")
        except ServiceError:
            return "en"

    def _language(self, game: str, player: str | None, default: str) -> str:
        if player is None:
            return default
        try:
            for seat in self.service.seats.seats(game):
                if seat.player == player and seat.language:
                    return seat.language
        except ServiceError:
            pass
        return default
