"""Accounts, seats, invitations and API tokens through the service (SQLite in memory)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from scriba.service.accounts import normalize_email
from scriba.service.errors import InvalidInput, NotAllowed, NotFound, UnknownGame
from scriba.store.accounts import AccountRow, ApiTokenRow


@pytest.fixture
def game(service):
    service.create_game("equinomic", game_id="g", players=["Anna", "Bruno"],
                        start="2026-01-01T00:00:00Z")
    return "g"


def test_emails_are_normalised_and_checked() -> None:
    assert normalize_email("  Anna@Example.ORG ") == "Anna@example.org"
    assert normalize_email("e\u0301@x.it") == "\u00e9@x.it"  # NFC
    for bad in ["", "anna", "anna@", "@x.org", "a@b", "a b@x.org", "a@x..org",
                "a@-x.org", "a\u202e@x.org", "a" * 300 + "@x.org", b"\xff@x.org", 5]:
        with pytest.raises(InvalidInput):
            normalize_email(bad)


def test_password_is_hashed_and_checked(service) -> None:
    accounts = service.accounts
    made = accounts.create_account("Anna@Example.org", "Anna", "correct horse")
    assert accounts.authenticate("anna@EXAMPLE.org", "correct horse") is None  # local part kept
    assert accounts.authenticate("Anna@example.org", "correct horse").id == made.id
    assert accounts.authenticate("Anna@example.org", "wrong horse!") is None
    assert accounts.authenticate("nobody@example.org", "correct horse") is None
    with service.store.session() as session:
        stored = session.scalars(select(AccountRow.password_hash)).one()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    with pytest.raises(NotAllowed):
        accounts.create_account("Anna@example.org", "Other", "another pw")
    with pytest.raises(InvalidInput):
        accounts.create_account("b@example.org", "B", "short")
    with pytest.raises(InvalidInput):
        accounts.create_account("c@example.org", "bad\u200bname", "long enough")


def test_preferences(service) -> None:
    account = service.accounts.create_account("a@x.org", "A", "password1")
    updated = service.accounts.update_preferences(account.id, language="it",
                                                  timezone="Europe/Rome", mail_mode="digest")
    assert (updated.language, updated.timezone, updated.mail_mode) == \
        ("it", "Europe/Rome", "digest")
    for bad in [{"language": "xx"}, {"timezone": "Mars/Base"}, {"timezone": "../../etc"},
                {"mail_mode": "spam"}]:
        with pytest.raises(InvalidInput):
            service.accounts.update_preferences(account.id, **bad)


def test_seats_and_roles(service, game) -> None:
    accounts = service.accounts
    anna = accounts.seat(game, "Anna", "anna@x.org")
    assert not anna.has_password
    assert accounts.role(anna.id, game).kind == "player"
    assert accounts.role(anna.id, game).player == "Anna"
    assert accounts.player_for_email(game, "anna@X.org") == "Anna"
    assert accounts.email_for_player(game, "Anna") == "anna@x.org"
    officer = accounts.create_account("scriba@x.org", "Scriba", "password1")
    accounts.set_officer(game, officer.id)
    assert accounts.role(officer.id, game).kind == "officer"
    assert accounts.role(None, game).kind == "reader"
    assert {(s.role, s.player) for s in accounts.seats(game)} == \
        {("player", "Anna"), ("officer", None)}
    with pytest.raises(NotFound):
        accounts.seat(game, "Nobody", "n@x.org")
    with pytest.raises(UnknownGame):
        accounts.seat("nogame", "Anna", "anna@x.org")


def test_invitation_once(service, game) -> None:
    accounts = service.accounts
    token = accounts.invite(game, "carla@x.org", "Carla")
    assert accounts.invitation(token).player == "Carla"
    account = accounts.accept_invitation(token, "carla's secret", "Carla C.")
    assert account.display_name == "Carla C."
    assert "Carla" in service.load(game).players
    assert accounts.role(account.id, game).player == "Carla"
    assert accounts.authenticate("carla@x.org", "carla's secret") is not None
    with pytest.raises(NotAllowed):
        accounts.accept_invitation(token, "another secret", "Mallory")
    with pytest.raises(NotFound):
        accounts.accept_invitation("x" * 43, "another secret")


def test_invitation_cannot_take_over_an_account(service, game) -> None:
    accounts = service.accounts
    accounts.create_account("bruno@x.org", "Bruno", "bruno's password")
    token = accounts.invite(game, "bruno@x.org", "Bruno")
    with pytest.raises(NotAllowed):
        accounts.accept_invitation(token, "attacker's password")
    assert accounts.authenticate("bruno@x.org", "attacker's password") is None
    # the invitation was not spent by the failed attempt
    assert accounts.accept_invitation(token, "bruno's password").email == "bruno@x.org"


def test_tokens_hashed_and_revocable(service, game) -> None:
    accounts = service.accounts
    accounts.seat(game, "Anna", "anna@x.org")
    token = accounts.new_token(game, "Anna", "bot")
    account, game_id, player = accounts.token_identity(token)
    assert (account.email, game_id, player) == ("anna@x.org", game, "Anna")
    with service.store.session() as session:
        assert token not in session.scalars(select(ApiTokenRow.token_hash)).one()
    forged = token[:-1] + ("B" if token.endswith("A") else "A")  # one character off
    assert accounts.token_identity(forged) is None
    assert accounts.token_identity("garbage") is None
    assert accounts.revoke_token(token)
    assert accounts.token_identity(token) is None
    bare = accounts.new_token(game, "Bruno")  # a player without an account
    assert accounts.token_identity(bare)[0] is None
    with pytest.raises(NotFound):
        accounts.new_token(game, "Nobody")


def test_server_secret_is_made_once(service) -> None:
    first = service.accounts.server_secret()
    assert len(first) >= 48 and service.accounts.server_secret() == first
