"""The one way a letter comes in, whether by SMTP/LMTP, a pipe or IMAP.

1. keep the bytes (the mailroom; unique Message-ID: a second delivery is not decided);
2. claim the letter (exactly one worker decides it);
3. never answer automatic mail (Auto-Submitted, Precedence, null sender, daemons, our
   own mail come back: ``X-Loop``);
4. the game from ``scriba+GAME[.SECRET]@domain`` (envelope or headers) or ``[GAME]`` in
   the subject;
5. the player: the personal address's secret (any recipient), or the From's registered
   address with a DKIM signature of its domain (:mod:`scriba.mail.auth`); otherwise the
   letter is held and the registered address told how to confirm it (once an hour); an
   unknown sender gets one short answer a day;
6. the letter's identity (its signature, or for a personal address its From, Date and
   text) recorded, unique: the same letter again under any Message-ID is not decided;
7. a signed letter acts only in a game its signed To or Cc names (not the envelope's),
   and only when its signed Date is recent (``DATE_WINDOW``); otherwise the sender is
   told why;
8. each command in order through ``service.commands.perform(..., channel="mail",
   request_id="MESSAGE_ID#N")``, each answered in one reply threaded under the letter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scriba.mail import strangers
from scriba.mail.addresses import route, signed_games
from scriba.mail.auth import DATE_WINDOW, Signature, dated_within, verified_signature
from scriba.mail.letter import (
    Letter,
    message_id_of,
    read_letter,
    unsigned_identity,
)
from scriba.mail.performing import Performing
from scriba.mail.replies import say
from scriba.service import Service
from scriba.service.inbound import MAX_LETTER_BYTES, envelope_sender
from scriba.service.letters import LetterContext, game_address, mail_domain

MAX_BYTES = MAX_LETTER_BYTES
log = logging.getLogger(__name__)


@dataclass
class Received:
    message_id: str
    status: str  # decided | duplicate | held | ignored | refused
    game: str | None = None
    player: str | None = None
    answers: list[str] = field(default_factory=list)


class Intake(Performing):
    """Every letter's one way in. Who wrote it is found by
    :class:`~scriba.mail.senders.Senders`; what it asks is done by
    :class:`~scriba.mail.performing.Performing`."""

    def __init__(self, service: Service, dnsfunc: Callable[..., Any] | None = None,
                 max_bytes: int = MAX_BYTES) -> None:
        super().__init__(service)
        self.dnsfunc = dnsfunc
        self.max_bytes = max_bytes

    # --- the one entry --------------------------------------------------------------
    def receive(self, raw: bytes, channel: str, envelope_from: str | None = None,
                envelope_to: list[str] | None = None) -> Received:
        size = len(raw)
        oversize = size > self.max_bytes
        kept_bytes = raw if not oversize else _headers_only(raw)
        message_id = message_id_of(raw)
        kept = self.mailroom.keep(kept_bytes, message_id, channel,
                                  sender=envelope_sender(envelope_from),
                                  recipient=",".join(envelope_to or [])[:320])
        if not kept.new and kept.status not in ("kept", "deciding"):
            return Received(message_id, "duplicate")
        if kept.status == "deciding":
            self.mailroom.reopen(kept.id)  # a crash left it half done: decide it again
        return self._take(kept.id, kept_bytes, size, oversize, envelope_from, envelope_to)

    def recover(self) -> list[Received]:
        """Decide the letters a crash left kept but undecided."""
        out = []
        for letter_id in self.mailroom.unfinished():
            self.mailroom.reopen(letter_id)
            out.append(self._take_kept(letter_id))
        return out

    def decide_kept(self) -> list[Received]:
        """Decide the letters kept and not yet taken: those a pipe delivery only keeps
        (:mod:`scriba.service.inbound`). Run each round of ``scriba mail serve`` and by
        ``scriba mail send``; a letter another worker is deciding is left to it (the
        claim decides who takes one), and one that fails is left kept for the next round."""
        out = []
        try:
            waiting = self.mailroom.unfinished(("kept",))
        except Exception:  # noqa: BLE001 - the database is away: the next round tries again
            log.exception("mail: the kept letters cannot be read")
            return out
        for letter_id in waiting:
            try:
                out.append(self._take_kept(letter_id))
            except Exception:  # noqa: BLE001 - one letter must not stop the others
                log.exception("mail: letter %s not decided; tried again next round",
                              letter_id)
        return out

    def _take_kept(self, letter_id: int) -> Received:
        raw, sender, recipient = self.mailroom.envelope(letter_id)
        envelope_from = None if not sender else ("" if sender == "<>" else sender)
        return self._take(letter_id, raw, len(raw), False, envelope_from,
                          [a for a in recipient.split(",") if a] or None)

    def _take(self, letter_id: int, raw: bytes, size: int, oversize: bool,
              envelope_from: str | None, envelope_to: list[str] | None) -> Received:
        if not self.mailroom.claim(letter_id):
            return Received(message_id_of(raw), "duplicate")
        try:
            return self._decide(letter_id, raw, size, oversize, envelope_from, envelope_to)
        except Exception:
            self.mailroom.reopen(letter_id)  # left for the next attempt, never lost
            raise

    # --- deciding -------------------------------------------------------------------
    def _decide(self, letter_id: int, raw: bytes, size: int, oversize: bool,
                envelope_from: str | None, envelope_to: list[str] | None) -> Received:
        letter = read_letter(raw, envelope_from, envelope_to,
                             loop_mark=game_address(None))
        finish = self.mailroom.finish
        if letter.automatic or letter.looped:
            why = letter.automatic or "X-Loop"
            finish(letter_id, "ignored", f"automatic mail ({why}): not answered")
            return Received(letter.message_id, "ignored")
        game, player = route(letter.recipients, letter.subject, self._games(),
                             self.mailroom.player_for_secret)
        context = LetterContext(message_id=letter.message_id, reply_to=letter.sender,
                                language="en", subject=letter.subject,
                                references=letter.references, game_id=game)
        if game is None:
            self.outbox.reply(context, "no_game", say("no_game", "en", domain=mail_domain()),
                              key=f"no_game:{letter.sender}:{self._day()}")
            finish(letter_id, "refused", "no game")
            return Received(letter.message_id, "refused")
        context.language = self._game_language(game)
        signature: Signature | None = None
        if player is not None:
            # a personal address acts for its player's registered From only: nobody acts
            # as another player by writing to their address
            owner = self._claimed_player(game, letter.sender, letter.text)
            if owner != player:
                context.player = owner  # the answer goes to the sender's own seat, if any
                return self._not_yours(letter_id, context, letter)
            auth, identity = "address", unsigned_identity(letter)
        else:
            claimed = self._claimed_player(game, letter.sender, letter.text)
            if claimed is None:
                return self._unknown(letter_id, context, letter)
            context.language = self._language(game, claimed, context.language)
            context.player = claimed
            signature = verified_signature(raw, letter.sender.rpartition("@")[2],
                                           self.dnsfunc)
            if signature is None:
                self._hold(context, game, claimed, letter)
                finish(letter_id, "held", "not authenticated", game, claimed)
                return Received(letter.message_id, "held", game, claimed)
            auth, identity = f"dkim:{signature.domain}", signature.identity
        if identity is not None:
            first = self.mailroom.identify(letter_id, identity)
            if first is not None:  # the same letter again: kept, never decided twice
                finish(letter_id, "duplicate", f"the same letter as letter {first}", game)
                return Received(letter.message_id, "duplicate", game)
        if signature is not None:
            refused = self._signed(letter_id, context, letter, signature)
            if refused is not None:
                return refused
            game, player = context.game_id or game, context.player
        context.player = player
        if oversize:
            self.outbox.reply(context, "too_large", say(
                "too_large", context.language, size=f"{size / 1048576:.1f}",
                limit=f"{self.max_bytes / 1048576:.0f}"))
            finish(letter_id, "refused", f"too large: {size} bytes", game, player, auth)
            return Received(letter.message_id, "refused", game, player)
        answers = self._commands(context, game, player, letter)
        self.outbox.close_receipt(context)
        finish(letter_id, "decided", "\n".join(answers), game, player, auth)
        return Received(letter.message_id, "decided", game, player, answers)

    def _signed(self, letter_id: int, context: LetterContext, letter: Letter,
                signature: Signature) -> Received | None:
        """A signed letter acts in a game its signed To or Cc names, and only while its
        signed Date is recent; None when it may act (``context`` then names the game)."""
        finish = self.mailroom.finish
        games = signed_games(signature.headers, self._games(), mail_domain())
        if not games:
            self.outbox.reply(context, "not_addressed", say(
                "not_addressed", context.language, game=context.game_id,
                address=game_address(context.game_id)))
            finish(letter_id, "refused", "the signed To and Cc name no game",
                   context.game_id)
            return Received(letter.message_id, "refused", context.game_id)
        if context.game_id not in games:  # the envelope is not signed: the headers say
            game = games[0]
            context.game_id = game
            context.language = self._game_language(game)
            claimed = self._claimed_player(game, letter.sender, letter.text)
            if claimed is None:
                return self._unknown(letter_id, context, letter)
            context.language = self._language(game, claimed, context.language)
            context.player = claimed
        date = signature.headers.get("date", "")
        if not dated_within(date, self.clock()):
            self.outbox.reply(context, "stale", say(
                "stale", context.language, date=date[:60] or "—",
                days=DATE_WINDOW.days))
            finish(letter_id, "refused", f"signed Date out of range: {date[:60]}",
                   context.game_id)
            return Received(letter.message_id, "refused", context.game_id)
        return None

    def _unknown(self, letter_id: int, context: LetterContext, letter: Letter) -> Received:
        game = context.game_id
        answered = strangers.stranger(self, letter_id, context, letter)  # rules, to join
        if answered is not None:
            return Received(letter.message_id, answered, game)
        self.outbox.reply(context, "unknown_sender", say(
            "unknown_sender", context.language, game=game, sender=letter.sender) + "\n\n"
            + say("requests_hint", context.language),
            key=f"unknown:{game}:{letter.sender}:{self._day()}")
        self.mailroom.finish(letter_id, "refused", "unknown sender", game)
        return Received(letter.message_id, "refused", game)

    def _not_yours(self, letter_id: int, context: LetterContext, letter: Letter) -> Received:
        game = context.game_id
        self.outbox.reply(context, "not_yours", say(
            "not_yours", context.language, game=game, sender=letter.sender),
            key=f"not_yours:{game}:{letter.sender}:{self._day()}")
        self.mailroom.finish(letter_id, "refused", "a personal address of another sender",
                             game)
        return Received(letter.message_id, "refused", game)


def _headers_only(raw: bytes) -> bytes:
    end = raw.find(b"\r\n\r\n")
    end = raw.find(b"\n\n") if end < 0 else end
    head = raw[:end] if 0 <= end < 256 * 1024 else raw[:64 * 1024]
    return head + b"\r\n\r\n[body not kept: the letter was larger than the limit]\r\n"
