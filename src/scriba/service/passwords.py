"""What a password must be, and how it is kept: argon2id hashes (argon2-cffi); a new
password must be hard to guess — zxcvbn's score at least 3, judged against the person's
own address and name too, so a password made of them is refused."""

from __future__ import annotations

import functools
import re
import secrets
import threading
from typing import Any

from argon2 import PasswordHasher

from scriba.service.errors import InvalidInput
from scriba.service.messages import translate

PASSWORD_MIN = 8
PASSWORD_MAX = 1024          # argon2 hashes anything, but a megabyte password is an attack
PASSWORD_SCORE = 3           # zxcvbn: "safely unguessable", about 10^8 guesses or more
_JUDGED = 72                 # zxcvbn judges at most this many characters (its own limit)
# zxcvbn keeps the user's own words in a module-level dictionary while it judges.
_zxcvbn_lock = threading.Lock()
_hasher = PasswordHasher()


@functools.cache
def dummy_hash() -> str:
    """Verified against when the address is unknown, so both failures take the same time;
    made on first use, not at import: an argon2 hash is half a second of every CLI start."""
    return _hasher.hash(secrets.token_urlsafe(16))


WEAK_PASSWORD = ("This password is too easy to guess. Choose a longer one, for example a "
                 "few unusual words that do not include your name or address.")


def check_password(value: Any, language: str = "en", own_words: tuple[str, ...] = ()) -> str:
    """The password if it is hard to guess, else InvalidInput in ``language``.

    ``own_words`` (the person's address and name) count as guessed: a password made of
    them is refused."""
    if not isinstance(value, str):
        raise InvalidInput(translate("The password must be text.", language), "password")
    if len(value) < PASSWORD_MIN:
        raise InvalidInput(translate("The password is too short: at least {min} characters.",
                                     language, min=PASSWORD_MIN), "password")
    if len(value) > PASSWORD_MAX:
        raise InvalidInput(translate("The password is too long: at most {max} characters.",
                                     language, max=PASSWORD_MAX), "password")
    words = [w[:100] for word in own_words if word
             for w in (word, *re.split(r"[@.+_\-\s]+", word)) if len(w) > 2]
    from zxcvbn import zxcvbn  # here, not at import: ~60 ms of every start, for a sign-up

    with _zxcvbn_lock:
        verdict = zxcvbn(value[:_JUDGED], user_inputs=[*words, "scriba", "nomic"])
    if verdict["score"] < PASSWORD_SCORE:
        message = translate(WEAK_PASSWORD, language)
        if language == "en":  # zxcvbn speaks English only: its advice for English readers
            advice = verdict["feedback"]
            message = " ".join(part for part in [message, advice.get("warning"),
                                                 *advice.get("suggestions", [])] if part)
        raise InvalidInput(message, "password")
    return value
