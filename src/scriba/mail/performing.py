"""What a letter asks, done: its commands read in the game's words, each performed in
order as its player (exactly once, by request id), a preference of the seat changed,
questions (the rules, the standings) answered, or how to write a command said when
nothing was understood; each answer a part of the one reply."""

from __future__ import annotations

from typing import Any

from scriba.mail import requests, strangers
from scriba.mail.commands import Command, Preference
from scriba.mail.letter import Letter
from scriba.mail.reading import how_to_write, note, read_commands
from scriba.mail.replies import say
from scriba.mail.senders import Senders
from scriba.service.errors import ServiceError
from scriba.service.letters import LetterContext, current_letter
from scriba.service.receipts import understood
from scriba.service.rules_letter import make_letter

MAX_COMMANDS = 50


class Performing(Senders):
    def _commands(self, context: LetterContext, game: str, player: str,
                  letter: Letter) -> list[str]:
        try:
            # Every action the rules declare, not only what the seat may do now: a letter
            # naming a move the rules refuse gets their refusal, not "nothing understood".
            actions = self.service.reads.declared_actions(game)
            labels = self.service.reads.words(game, context.language).action_texts
        except ServiceError:
            actions, labels = [], {}
        # prose (greetings, sign-offs) is passed over; lines meant as commands and not
        # understood are listed in one note at the end, in the game's words
        reading = read_commands(letter.text, letter.subject, actions, labels,
                                context.language, letter.attachments, author=player,
                                limit=MAX_COMMANDS)
        items = reading.items[:MAX_COMMANDS]
        unclear = note(reading, context.language)
        asked = requests.split(letter.text)[0] if not items else []
        if asked:  # no command, but the rules, the standings...: answered, not "nothing"
            context.n, context.line = 0, ""
            text = strangers.answer_requests(self, context, game, asked)
            self.outbox.reply(context, "requests", text, key=f"requests:{letter.message_id}")
            return [text]
        if not items:
            # Said once a day: an autoresponder that strips its headers cannot loop.
            context.n, context.line = 0, ""
            try:  # the moves this writer's seat permits, by their labels
                only = {a.name for a in self.service.reads.permitted_actions(game, player)}
            except ServiceError:
                only = None
            text = "\n\n".join(t for t in (say("nothing", context.language), unclear,
                                            how_to_write(reading.grammar, context.language,
                                                         only)) if t)
            self.outbox.reply(context, "unclear", text,
                              key=f"nothing:{game}:{letter.sender}:{self._day()}")
            return [text]
        # one e-mail is one letter to the rules, however many commands it carries
        together = make_letter(letter.message_id, [(i.action, i.args) for i in items
                                                   if isinstance(i, Command)])
        answers: list[str] = []
        for n, item in enumerate(items, start=1):
            context.n, context.line = n, item.text[:500]
            if self.outbox.answered(letter.message_id, n):
                continue  # decided before a crash: never twice
            if isinstance(item, Preference):
                text = self._preference(game, player, item.mode, context.language)
                self.outbox.add_part(context, text)
            else:
                text = self._perform(context, game, player, item, letter, together)
            answers.append(text)
        if unclear:  # the one note, after the answers
            context.n, context.line = len(items) + 1, ""
            if not self.outbox.answered(letter.message_id, context.n):
                self.outbox.add_part(context, unclear)
            answers.append(unclear)
        return answers

    def _perform(self, context: LetterContext, game: str, player: str, item: Command,
                 letter: Letter, together: dict[str, Any] | None = None) -> str:
        token = current_letter.set(context)
        try:
            outcome = self.service.commands.perform(
                game, player, item.action, item.args, channel="mail",
                raw=letter.text[:100000], request_id=f"{letter.message_id}#{context.n}",
                letter=together)
        except ServiceError as error:
            text = say("failed", context.language, reason=str(error),
                       what=self._understood(game, item, context.language))
            self.outbox.add_part(context, text)
            return text
        finally:
            current_letter.reset(token)
        return outcome.message if not outcome.accepted else "accepted"

    def _understood(self, game: str, item: Command, language: str) -> str:
        """The command as read, in the game's words (for a refusal before the rules)."""
        try:
            return understood(item.action, item.args, self.service.reads.words(game, language))
        except ServiceError:
            return item.text[:200]

    def _preference(self, game: str, player: str, mode: str, language: str) -> str:
        try:
            seat = next(s for s in self.service.seats.seats(game) if s.player == player)
            self.service.accounts.update_preferences(seat.account_id, mail_mode=mode)
        except (StopIteration, ServiceError) as error:
            return say("failed", language, reason=str(error) or mode, what=mode)
        return say("mode", language, mode=mode)
