"""``template NAME`` by mail (``modello``, ``Vorlage``), through Scriba's SMTP intake and out
through a real SMTP server: the recipes listed, one written out filled in with its
defaults or the values asked for, its blanks explained, a value it refuses named — and
the proposal block of the answer, sent back as it came, proposes the rule with its code.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scriba.service import Service
from scriba.service.recipes import Recipes

from .conftest import DOMAIN, Keys, seat_all
from .test_games_by_mail import Post

GAME = "ric"
# The bonus recipe's blank of points as the cookbook words it in Italian.
PUNTI = next(b for b in Recipes(None).get("bonus_for_adoption", "it").blanks
             if b.name == "points")


@pytest.fixture
def post(mail_service: Service, keys: Keys) -> Iterator[Post]:
    with Post.running(mail_service, keys) as running:
        yield running


def _last(post: Post, address: str) -> str:
    assert post.deliver()["failed"] == 0
    return post.inbox(address)[-1]


def _block(answer: str) -> str:
    """The proposal block of an answer, as a player copies it into a letter."""
    lines = answer.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("proposta: "))
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "fine")
    return "\n".join(lines[start:end + 1]) + "\n"


def test_a_recipe_by_mail_proposed_as_it_came(mail_service: Service, post: Post) -> None:
    service = mail_service
    service.commands.create_game("equinomic", game_id=GAME, players=["Anna", "Bruno"],
                                 start="2026-03-02T09:00:00Z")
    mail = seat_all(service, GAME, ["Anna"])
    mail.update(seat_all(service, GAME, ["Bruno"], language="de"))
    game = f"scriba+{GAME}@{DOMAIN}"

    # The list, in the reader's language: each recipe by the name to write after the word.
    post.send(mail["Bruno"], game, "Hallo,\n\nVorlage\n\nGruß, Bruno\n", subject="Vorlagen?")
    listing = _last(post, mail["Bruno"])
    assert "Die Rezepte für diese Partie" in listing, listing
    assert "- bonus_for_adoption: Bonus für einen angenommenen Vorschlag" in listing
    post.send(mail["Bruno"], game, "Vorlage Braten\n")
    unknown = _last(post, mail["Bruno"])
    assert "Für diese Partie gibt es kein Rezept namens Braten." in unknown
    assert "- bonus_for_adoption: " in unknown  # and which there are

    # A value the blank refuses: named by its label, what it allows, nothing proposed.
    post.send(mail["Anna"], game, "modello bonus_for_adoption points=500\n")
    refused = _last(post, mail["Anna"])
    assert f"Non compilata: {PUNTI.label}: scrivi un numero intero da {PUNTI.minimum} a " \
        f"{PUNTI.maximum}." in refused, refused
    assert "proposta: " not in refused
    assert "    modello bonus_for_adoption points=5" in refused  # a value it takes

    # One filled in: its blanks explained, the block to send, the code fenced.
    post.send(mail["Anna"], game, "modello bonus_for_adoption points=8\n")
    answer = _last(post, mail["Anna"])
    assert f"- points: {PUNTI.label}. {PUNTI.help} Un numero intero da {PUNTI.minimum} a " \
        f"{PUNTI.maximum}. Qui: 8." in answer, answer
    assert "    modello bonus_for_adoption points=8" in answer  # how to fill it otherwise
    block = _block(answer)
    assert "guadagna 8 punti" in block and "```\ndef on_proposal_resolved" in block
    assert service.reads.proposals(GAME) == []  # asked for, not proposed

    # Sent back as it came: the rule proposed, its text and its code as the recipe wrote.
    post.send(mail["Anna"], game, f"Ecco la mia proposta.\n\n{block}\nCiao, Anna\n")
    proposals = service.reads.proposals(GAME)
    assert len(proposals) == 1, _last(post, mail["Anna"])
    rule = service.recipes.fill("bonus_for_adoption", {"points": "8"}, "it", GAME)
    [change] = proposals[0]["changes"]
    assert (change["type"], change["title"], change["text"], change["code"]) == \
        ("enact", rule.title, rule.text, rule.code)
