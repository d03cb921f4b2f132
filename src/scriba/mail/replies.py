"""The front's own sentences (the rules' answers come from the service), written in
English; Italian and German in locale/*/LC_MESSAGES/mail.po (the ``mail`` Babel domain)."""

from __future__ import annotations

from scriba.service.outbox import mail_text

_TEXT: dict[str, str] = {
    "no_game": "Scriba could not tell which game your letter is for. Write to "
               "scriba+GAME@{domain} or put [GAME] in the subject.",
    "unknown_sender": "Scriba received your letter for the game {game}, but {sender} "
                      "is not the address of any of its players, so nothing was done. "
                      "The game's officer can add you.",
    "held": "A letter claiming to come from you arrived for the game {game} "
            "(subject: {subject}; date: {date}). It could not be authenticated (no "
            "valid DKIM signature of your domain), so nothing was done. If you wrote "
            "it, send it again to your personal address {personal}.",
    "held_receipt": "Your letter was kept but not acted on: it could not be "
                    "authenticated. Your registered address has been told how to "
                    "confirm it.",
    "too_large": "Your letter is {size} MB; Scriba takes letters up to {limit} MB. "
                 "Nothing was done: please send it again without the large "
                 "attachment (rule code goes in a .star file or a ``` block).",
    "unclear": "Not understood: \"{line}\" — expected: {expected}",
    "nothing": "Scriba found no command in your letter. Expected: {expected}",
    "mode": "Mail preference set: {mode}.",
    "failed": "Not done: {reason}",
}


def say(key: str, language: str, **params: object) -> str:
    return mail_text(_TEXT[key], language).format(**params)
