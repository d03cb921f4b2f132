"""Rate limits that slow attackers down without locking people out: sign-ins per address
and per client address, games started per account.

Each limit is a list of tiers in the ``limits`` library's notation, shortest window first
(``5/minute;20/hour;100/day``), counted with its fixed-window strategy in the database
(:mod:`scriba.store.ratelimit`), so every server process shares them. An attempt is
counted *before* it is evaluated (before the password is checked), so simultaneous
attempts cannot all slip through. Tiers are hit in order of their windows and the first
that refuses stops the attempt: a refused attempt fills only the shortest window, so a
burst costs its sender (and the address it targets) a short wait, and only attempts that
were let through add up towards the longer waits. A sign-in with the right password gives
its attempt back (:meth:`Limiter.give_back`): only failures add up, so people who sign in
often, or many people behind one address, are never slowed by their own successes.

The settings (environment variables; each a ``limits`` string, or a number for games):

- ``SCRIBA_SIGNIN_LIMITS``: sign-ins per address, default ``5/minute;20/hour;100/day``;
- ``SCRIBA_SIGNIN_IP_LIMITS``: sign-ins per client address, default ``30/minute;300/hour``
  (looser: behind a proxy that does not forward addresses every person shares one);
- ``SCRIBA_GAMES_PER_DAY``: games an account may start from the web per day, default 10;
- ``SCRIBA_STRANGER_LIMITS``: letters answered to one address that plays no game (asking
  for the rules, to join), default ``5/hour;20/day``; and 200 a day per game, whoever.
"""

from __future__ import annotations

import ipaddress
import math
import os
import time
from collections.abc import Mapping
from typing import Any

from limits import RateLimitItem, parse_many
from limits.strategies import FixedWindowRateLimiter

from scriba.service.errors import InvalidInput, ServiceError
from scriba.service.profile import normalize_email
from scriba.store.ratelimit import DatabaseStorage

STRANGER_LIMITS = "5/hour;20/day"
STRANGERS_PER_GAME = "200/day"
SIGNIN_LIMITS = "5/minute;20/hour;100/day"
SIGNIN_IP_LIMITS = "30/minute;300/hour"
GAMES_PER_DAY = 10


class RateLimited(ServiceError):
    """Too many attempts: ``retry_after`` seconds until the next one may be made."""

    def __init__(self, message: str, retry_after: int, what: str) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.what = what  # "signin" | "new_game" | "stranger"


def tiers(setting: str, name: str) -> list[RateLimitItem]:
    """A ``limits`` string as tiers, shortest window first; refused with the setting's name."""
    try:
        items = parse_many(setting)
    except ValueError:
        raise InvalidInput(f"{name} must be limits like 5/minute;20/hour, not "
                           f"{setting[:80]!r}.", name) from None
    if any(item.amount < 1 for item in items):
        raise InvalidInput(f"{name}: every limit allows at least one attempt.", name)
    return sorted(items, key=lambda item: item.get_expiry())


def signin_key(email: str) -> str:
    """The address as sign-in reads it (so ``anna@example.org.`` is ``anna@example.org``);
    an address that is not one keys on its case-folded text."""
    try:
        return normalize_email(email)
    except InvalidInput:
        return str(email).strip().casefold()


def client_key(client: str) -> str:
    """A client address; an IPv6 address counts by its /64, which one client holds whole."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client[:100]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


class Limiter:
    """The service's rate limits, kept in the database behind ``engine``."""

    def __init__(self, engine: Any, settings: Mapping[str, str] | None = None) -> None:
        settings = os.environ if settings is None else settings
        self.signin_tiers = tiers(settings.get("SCRIBA_SIGNIN_LIMITS") or SIGNIN_LIMITS,
                                  "SCRIBA_SIGNIN_LIMITS")
        self.signin_ip_tiers = tiers(
            settings.get("SCRIBA_SIGNIN_IP_LIMITS") or SIGNIN_IP_LIMITS,
            "SCRIBA_SIGNIN_IP_LIMITS")
        games = settings.get("SCRIBA_GAMES_PER_DAY") or str(GAMES_PER_DAY)
        if not games.isdigit() or int(games) < 1:
            raise InvalidInput(f"SCRIBA_GAMES_PER_DAY must be a whole number from 1, not "
                               f"{games[:40]!r}.", "SCRIBA_GAMES_PER_DAY")
        self.game_tiers = tiers(f"{int(games)}/day", "SCRIBA_GAMES_PER_DAY")
        self.stranger_tiers = tiers(
            settings.get("SCRIBA_STRANGER_LIMITS") or STRANGER_LIMITS, "SCRIBA_STRANGER_LIMITS")
        self.strangers_game_tiers = tiers(STRANGERS_PER_GAME, "strangers per game")
        self.storage = DatabaseStorage(engine)
        self.strategy = FixedWindowRateLimiter(self.storage)

    def signin(self, email: str, client: str) -> list[str]:
        """Count a sign-in attempt for ``email`` from ``client``: the counters it filled
        (for :meth:`give_back`); RateLimited if it is one too many."""
        return self._hit("signin", [(item, "signin-address", signin_key(email))
                             for item in self.signin_tiers] +
                  [(item, "signin-client", client_key(client))
                   for item in self.signin_ip_tiers],
                  "Too many sign-in attempts; try again in {seconds} seconds.")

    def new_game(self, account_id: int) -> None:
        """Count a game started by the account; RateLimited past the day's allowance."""
        self._hit("new_game", [(item, "new-game", str(account_id))
                               for item in self.game_tiers],
                  "You have started as many games as one may in a day; try again in "
                  "{seconds} seconds.")

    def stranger(self, sender: str, game_id: str) -> None:
        """Count a letter from someone who does not play, to be answered; RateLimited when
        one too many (for that address, or for the game): it is then not answered."""
        self._hit("stranger", [(item, "mail-stranger", signin_key(sender))
                               for item in self.stranger_tiers] +
                  [(item, "mail-strangers", game_id) for item in self.strangers_game_tiers],
                  "Too many letters; try again in {seconds} seconds.")

    def give_back(self, counted: list[str]) -> None:
        """The attempt turned out right (the password was): take it off its counters."""
        for key in counted:
            self.storage.decr(key)

    def _hit(self, what: str, hits: list[tuple[RateLimitItem, str, str]],
             message: str) -> list[str]:
        # Shortest window first, whichever key it counts: a refusal stops the attempt
        # before it fills any longer window.
        counted = []
        for item, kind, identifier in sorted(hits, key=lambda hit: hit[0].get_expiry()):
            if not self.strategy.hit(item, kind, identifier):
                reset = self.strategy.get_window_stats(item, kind, identifier).reset_time
                wait = max(1, math.ceil(reset - time.time()))
                raise RateLimited(message.format(seconds=wait), wait, what)
            counted.append(item.key_for(kind, identifier))
        return counted
