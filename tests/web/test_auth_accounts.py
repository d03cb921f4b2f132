"""Accounts, seats, invitations, API tokens, sessions, password strength and resets through
the service (SQLite in memory)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from scriba.service.errors import InvalidInput, NotAllowed, NotFound, UnknownGame
from scriba.service.profile import normalize_email
from scriba.store.accounts import AccountRow, ApiTokenRow, PasswordResetRow, WebSessionRow


@pytest.fixture
def game(service):
    service.commands.create_game("equinomic", game_id="g", players=["Anna", "Bruno"],
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
    with service.commands.store.session() as session:
        stored = session.scalars(select(AccountRow.password_hash)).one()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    with pytest.raises(NotAllowed):
        accounts.create_account("Anna@example.org", "Other", "another quiet evening")
    with pytest.raises(InvalidInput):
        accounts.create_account("b@example.org", "B", "short")
    with pytest.raises(InvalidInput):
        accounts.create_account("c@example.org", "bad\u200bname", "long enough by far")


def test_preferences(service) -> None:
    account = service.accounts.create_account("a@x.org", "A", "plum tree at noon")
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
    seats = service.seats
    anna = seats.seat(game, "Anna", "anna@x.org")
    assert not anna.has_password
    assert seats.role(anna.id, game).kind == "player"
    assert seats.role(anna.id, game).player == "Anna"
    assert seats.player_for_email(game, "anna@X.org") == "Anna"
    assert seats.email_for_player(game, "Anna") == "anna@x.org"
    officer = accounts.create_account("scriba@x.org", "Scriba", "plum tree at noon")
    seats.set_officer(game, officer.id)
    assert seats.role(officer.id, game).kind == "officer"
    assert seats.role(None, game).kind == "reader"
    assert {(s.role, s.player) for s in seats.seats(game)} == \
        {("player", "Anna"), ("officer", None)}
    with pytest.raises(NotFound):
        seats.seat(game, "Nobody", "n@x.org")
    with pytest.raises(UnknownGame):
        seats.seat("nogame", "Anna", "anna@x.org")


def test_invitation_once(service, game) -> None:
    accounts = service.accounts
    seats = service.seats
    token = seats.invite(game, "carla@x.org", "Carla")
    assert seats.invitation(token).player == "Carla"
    account = seats.accept_invitation(token, "carla's secret", "Carla C.")
    assert account.display_name == "Carla C."
    assert "Carla" in service.reads.load(game).players
    assert seats.role(account.id, game).player == "Carla"
    assert accounts.authenticate("carla@x.org", "carla's secret") is not None
    with pytest.raises(NotAllowed):
        seats.accept_invitation(token, "another secret", "Mallory")
    with pytest.raises(NotFound):
        seats.accept_invitation("x" * 43, "another secret")


def test_invitation_cannot_take_over_an_account(service, game) -> None:
    accounts = service.accounts
    seats = service.seats
    accounts.create_account("bruno@x.org", "Bruno", "bruno's password")
    token = seats.invite(game, "bruno@x.org", "Bruno")
    with pytest.raises(NotAllowed):
        seats.accept_invitation(token, "attacker's password")
    assert accounts.authenticate("bruno@x.org", "attacker's password") is None
    # the invitation was not spent by the failed attempt
    assert seats.accept_invitation(token, "bruno's password").email == "bruno@x.org"


def test_tokens_hashed_and_revocable(service, game) -> None:
    seats = service.seats
    seats.seat(game, "Anna", "anna@x.org")
    token = seats.new_token(game, "Anna", "bot")
    account, game_id, player = seats.token_identity(token)
    assert (account.email, game_id, player) == ("anna@x.org", game, "Anna")
    with service.commands.store.session() as session:
        assert token not in session.scalars(select(ApiTokenRow.token_hash)).one()
    forged = token[:-1] + ("B" if token.endswith("A") else "A")  # one character off
    assert seats.token_identity(forged) is None
    assert seats.token_identity("garbage") is None
    assert seats.revoke_token(token)
    assert seats.token_identity(token) is None
    bare = seats.new_token(game, "Bruno")  # a player without an account
    assert seats.token_identity(bare)[0] is None
    with pytest.raises(NotFound):
        seats.new_token(game, "Nobody")


@pytest.mark.parametrize(("language", "words"), [
    ("en", "too easy to guess"), ("it", "troppo facile da indovinare"),
    ("de", "zu leicht zu erraten")])
def test_guessable_passwords_are_refused_everywhere_one_is_set(service, game, language,
                                                               words) -> None:
    accounts = service.accounts
    seats = service.seats
    for weak in ["12345678", "password1", "qwertyuiop"]:
        with pytest.raises(InvalidInput, match=words):
            accounts.create_account("d@x.org", "Dora", weak, language=language)
    # the person's own address and name count as guessed
    with pytest.raises(InvalidInput, match=words):
        accounts.create_account("dorabellini@x.org", "Dora Bellini", "dorabellini2026",
                                language=language)
    dora = accounts.create_account("d@x.org", "Dora", "plum tree at noon", language=language)
    with pytest.raises(InvalidInput, match=words):
        accounts.set_password(dora.id, "12345678")
    with pytest.raises(InvalidInput, match=words):
        accounts.change_password(dora.id, "plum tree at noon", "12345678", language)
    token = seats.invite(game, "emma@x.org", "Emma")
    with pytest.raises(InvalidInput, match=words):
        seats.accept_invitation(token, "12345678", None, language)
    assert not seats.invitation(token).used  # a refused password does not spend it
    assert accounts.authenticate("d@x.org", "plum tree at noon") is not None


def test_english_readers_also_get_zxcvbns_advice(service) -> None:
    with pytest.raises(InvalidInput) as refusal:
        service.accounts.create_account("d@x.org", "Dora", "12345678")
    assert "common password" in str(refusal.value)
    with pytest.raises(InvalidInput) as refusal:
        service.accounts.create_account("d@x.org", "Dora", "12345678", language="it")
    assert "common" not in str(refusal.value)


def test_sessions_live_in_the_database_and_end(service) -> None:
    accounts = service.accounts
    anna = accounts.create_account("anna@x.org", "Anna", "plum tree at noon")
    key, made = accounts.start_session(anna.id, "Firefox, Linux")
    assert len(key) >= 43 and made.id != key and len(made.csrf) >= 43
    assert accounts.web_session(key).account.id == anna.id
    with service.commands.store.session() as session:
        assert key not in {row.id for row in session.scalars(select(WebSessionRow))}
    other, _ = accounts.start_session(anna.id, "curl/8")
    assert {s.client for s in accounts.sessions(anna.id)} == {"Firefox, Linux", "curl/8"}
    accounts.change_password(anna.id, "plum tree at noon", "apricot dusk lantern", "en",
                             keep_session=made.id)
    assert accounts.web_session(key) is not None and accounts.web_session(other) is None
    with pytest.raises(NotAllowed):
        accounts.change_password(anna.id, "plum tree at noon", "another quiet evening", "en")
    assert accounts.end_session(made.id, account_id=anna.id + 1) is False  # not theirs
    assert accounts.end_session(made.id, account_id=anna.id)
    assert accounts.web_session(key) is None and accounts.sessions(anna.id) == []
    for bad in [None, "", "x" * 43, "x" * 10_000, 5]:
        assert accounts.web_session(bad) is None


def test_a_session_expires_and_last_seen_is_not_written_each_time(service) -> None:
    accounts = service.accounts
    anna = accounts.create_account("anna@x.org", "Anna", "plum tree at noon")
    key, made = accounts.start_session(anna.id)
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    with service.commands.store.session.begin() as session:
        session.execute(update(WebSessionRow).values(seen_at=two_hours_ago))
    assert accounts.web_session(key).seen_at > two_hours_ago  # seen now: written
    seen = accounts.web_session(key).seen_at
    assert accounts.web_session(key).seen_at == seen  # within the hour: not written again
    with service.commands.store.session.begin() as session:
        session.execute(update(WebSessionRow).values(
            expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    assert accounts.web_session(key) is None


def test_a_seat_taken_away_revokes_its_tokens_and_ends_the_sessions(service, game) -> None:
    accounts = service.accounts
    seats = service.seats
    anna = seats.seat(game, "Anna", "anna@x.org")
    anna_token = seats.new_token(game, "Anna")
    anna_key, _ = accounts.start_session(anna.id)
    bruno = seats.seat(game, "Bruno", "bruno@x.org")
    bruno_token = seats.new_token(game, "Bruno")
    bruno_key, _ = accounts.start_session(bruno.id)
    seats.seat(game, "Anna", "anna@x.org")  # the same again: nothing changes
    assert seats.token_identity(anna_token) and accounts.web_session(anna_key)
    seats.seat(game, "Anna", "mallory@x.org")  # rebound to another address
    assert seats.token_identity(anna_token) is None
    assert accounts.web_session(anna_key) is None
    assert seats.role(anna.id, game).kind == "reader"
    assert seats.token_identity(bruno_token) and accounts.web_session(bruno_key)
    assert seats.unseat(game, "Bruno") and not seats.unseat(game, "Bruno")
    assert seats.token_identity(bruno_token) is None
    assert accounts.web_session(bruno_key) is None


def test_a_reset_link_is_mailed_once_a_quarter_hour_and_works_once(service) -> None:
    accounts = service.accounts
    anna = accounts.create_account("anna@x.org", "Anna", "plum tree at noon", language="it")
    links: list[str] = []
    accounts.request_password_reset("anna@x.org", lambda token: links.append(token) or token)
    accounts.request_password_reset("anna@x.org", links.append)  # within the quarter hour
    accounts.request_password_reset("nobody@x.org", links.append)  # no account: nothing
    accounts.request_password_reset("not an address", links.append)
    mails = service.outbox.messages(kind="password_reset")
    assert len(links) == 1 and len(mails) == 1
    assert mails[0]["recipient"] == "anna@x.org" and links[0] in mails[0]["body"]
    assert "Apri questo link" in mails[0]["body"]  # the account's language
    with service.commands.store.session() as session:
        assert links[0] not in {r.token_hash for r in session.scalars(select(PasswordResetRow))}
    key, _ = accounts.start_session(anna.id)
    assert accounts.password_reset(links[0]).id == anna.id
    with pytest.raises(InvalidInput):
        accounts.reset_password(links[0], "12345678", "en")
    assert accounts.reset_password(links[0], "apricot dusk lantern", "en").id == anna.id
    assert accounts.web_session(key) is None
    assert accounts.authenticate("anna@x.org", "apricot dusk lantern") is not None
    with pytest.raises(NotAllowed, match="already been used"):
        accounts.reset_password(links[0], "another quiet evening", "en")
    with pytest.raises(NotFound):
        accounts.password_reset("x" * 43)
