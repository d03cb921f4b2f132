"""The front's own sentences (the rules' answers come from the service), written in
English; Italian and German in locale/*/LC_MESSAGES/mail.po (the ``mail`` Babel domain)."""

from __future__ import annotations

from scriba.service.letters import mail_text

_TEXT: dict[str, str] = {
    "no_game": "Scriba could not tell which game your letter is for. Write to "
               "scriba+GAME@{domain} or put [GAME] in the subject.",
    "unknown_sender": "Scriba received your letter for the game {game}, but {sender} "
                      "is not the address of any of its players, so nothing was done. "
                      "The game's officer can add you.",
    "requests_hint": "Anyone may ask Scriba by mail, writing on a line of its own: "
                     "\"rules\", \"rule 3\", \"proposals\" or \"standings\"; and to "
                     "play, \"join as NAME\".",
    "join_unsigned": "Your request to join the game {game} was not acted on: Scriba could "
                     "not tell that it comes from you (no valid DKIM signature of your "
                     "address's domain). Please ask the game's officer.",
    "join_refused": "Refused: you cannot join the game {game} so. {reason}",
    "join_queued": "Your request to join the game {game} as {player} is with its "
                   "officer, who will admit you; you will then receive its mail here.",
    "join_rules": "Your request to join the game {game} as {player} was given to its "
                  "rules; when they admit you, you will receive its mail here.",
    "not_yours": "Refused: your letter went to the personal address of a player of the "
                 "game {game}, and {sender} is not that player's registered address. "
                 "Nothing was done: each player writes to their own address (the "
                 "Reply-To of the game's mail they receive).",
    "held": "A letter claiming to come from you arrived for the game {game} "
            "(subject: {subject}; date: {date}). It could not be authenticated (no "
            "valid DKIM signature of your domain covering its From, To and Date), so "
            "nothing was done. If you wrote it, send it again to your personal address "
            "{personal}. Other such letters within the hour are kept without another "
            "notice.",
    "held_receipt": "Your letter was kept but not acted on: it could not be "
                    "authenticated. Your registered address has been told how to "
                    "confirm it.",
    "not_addressed": "Your letter was not acted on: the game's address {address} is "
                     "not in its To or Cc, and Scriba acts on a signed letter only in a "
                     "game it names there (a copy sent as Bcc or forwarded does not "
                     "count). Please write to {address}.",
    "stale": "Your letter dated {date} was not acted on: Scriba acts on a signed letter "
             "only if it was written in the last {days} days (and is not dated in the "
             "future), so that nobody can send an old letter of yours again. If you "
             "still want it done, please write it again.",
    "too_large": "Your letter is {size} MB; Scriba takes letters up to {limit} MB. "
                 "Nothing was done: please send it again without the large "
                 "attachment (rule code goes in a .star file or a ``` block).",
    "nothing": "Scriba found no command in your letter, so nothing was done.",
    "unclear_head": "Scriba did not understand these lines of your letter and did nothing "
                    "with them:",
    "votes_with": "in this game one votes with: {words}.",
    "vote_form": "a vote names the proposal and one of: {words} (for example: {example}).",
    "vote_example": "vote 3 {choice}",
    "propose_example": "proposal: Title, then the text, then a line \"end\"",
    "takes": "\u201c{action}\u201d takes: {params}.",
    "judge_form": "a judgment names the case's number and one of: {words} (for example: "
                  "\u201c{action} 3 {word} because \u2026\u201d).",
    "did_you_mean": "did you mean \u201c{action}\u201d?",
    "how_to_write": "In this game you can write, one per line: a vote (\u201c{vote}\u201d); "
                    "a proposal (\u201c{propose}\u201d); or an action by its name: "
                    "{actions}.",
    "forward_skipped": "The forwarded letter in yours was skipped: Scriba acts on a "
                       "forwarded command only when it is the letter's only one. Write "
                       "the commands you want done as your own.",
    "mode": "Mail preference set: {mode}.",
    "quoted": "\u201c{text}\u201d",
    "failed": "Refused: {what} \u2014 {reason}",
}


def say(key: str, language: str, **params: object) -> str:
    return mail_text(_TEXT[key], language).format(**params)
