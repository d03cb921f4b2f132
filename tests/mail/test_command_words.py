"""Commands by the words players use: the actions' declared labels in any language (case
and accents aside), verb forms and abbreviations; and where a proposal's text ends."""

from __future__ import annotations

from scriba.mail.commands import Command, Unclear, parse
from scriba.mail.reading import Reading, note
from scriba.service.reads import ActionInfo

VOTE = ActionInfo("vote", "vote", ["player"], {"proposal": "proposal", "choice": "any",
                                               "rating": "int?"},
                  {"favorevole": "for", "contrario": "against", "for": "for",
                   "against": "against", "abstain": "abstain"})
VOTE_DE = ActionInfo("vote", "vote", ["player"], {"proposal": "proposal", "choice": "any",
                                                  "deferral": "str?"},
                     {"ja": "for", "nein": "against", "enthaltung": "abstain"})
PROPOSE = ActionInfo("propose", "propose", ["player"],
                     {"changes": "changes", "label": "str?", "title": "str?",
                      "letter": "int?"})
GIVE = ActionInfo("give_nomica", "plain", ["player"], {"to": "player", "amount": "int"})
DEPOSIT = ActionInfo("deposit", "plain", ["player"], {"amount": "int", "days": "int"})
PRESS = ActionInfo("press", "plain", ["player"], {"text": "str"})
NUMBER = ActionInfo("nomic_number", "plain", ["player"], {"number": "int"})
LABELS = {
    "propose": {"label": {"it": "Proponi una legge", "de": "Regeländerung vorschlagen"},
                "params": {"letter": {"label": {"it": "Lettera", "de": "Brief"}}}},
    "vote": {"label": {"it": "Vota", "de": "Abstimmen"},
             "params": {"rating": {"label": {"it": "Gradimento"}}}},
    "give_nomica": {"label": {"it": "Cedi Nomica", "en": "Give Nomica"},
                    "params": {"to": {"label": {"it": "A"}},
                               "amount": {"label": {"it": "Quanti N"}}}},
    "deposit": {"label": {"it": "Deposita in Banca"},
                "params": {"days": {"label": {"it": "Giornate"}}}},
    "press": {"label": {"de": "Presse"}},
    "nomic_number": {"label": {"de": "Nomiczahl abgeben"},
                     "params": {"number": {"label": {"de": "Nomiczahl"}}}},
}
IT = [VOTE, PROPOSE, GIVE, DEPOSIT]
DE = [VOTE_DE, PROPOSE, PRESS, NUMBER]


def _commands(text: str, actions: list[ActionInfo], language: str = "it",
              author: str = "") -> list[tuple[str, dict]]:
    return [(i.action, i.args) for i in parse(text, actions, None, LABELS, language, author)
            if isinstance(i, Command)]


def test_actions_by_their_labels_in_any_case_and_accent() -> None:
    assert _commands("CEDI NOMICA: a Carla 100\ncedi nòmica 5 a Bruno\n"
                     "Give Nomica Dario 7\ngive_nomica to=Elena amount=1\n"
                     "Deposita in Banca 500 Giornate 2\nDeposita 300 1\n", IT) == [
        ("give_nomica", {"to": "Carla", "amount": 100}),
        ("give_nomica", {"to": "Bruno", "amount": 5}),
        ("give_nomica", {"to": "Dario", "amount": 7}),
        ("give_nomica", {"to": "Elena", "amount": 1}),
        ("deposit", {"amount": 500, "days": 2}),
        ("deposit", {"amount": 300, "days": 1})]
    assert _commands("Presse: Hallo Anderwelt!\nNomiczahl: 17\nnomiczahl abgeben 3\n", DE,
                     "de") == [("press", {"text": "Hallo Anderwelt!"}),
                               ("nomic_number", {"number": 17}),
                               ("nomic_number", {"number": 3})]


def test_votes_as_players_write_them() -> None:
    assert _commands("voto favorevole alla proposta 4\nio voto contrario sulla 5\n"
                     "vota 6 fav.\nVota #7 contr. gradimento=8\n", IT) == [
        ("vote", {"proposal": 4, "choice": "favorevole"}),
        ("vote", {"proposal": 5, "choice": "contrario"}),
        ("vote", {"proposal": 6, "choice": "favorevole"}),
        ("vote", {"proposal": 7, "choice": "contrario", "rating": 8})]
    assert _commands("Ich stimme mit Ja für 1\nStimme 2 Nein deferral=Ja\n"
                     "Abstimmung: 3 enth.\nmeine Stimme zu Antrag 4: nein\n", DE, "de") == [
        ("vote", {"proposal": 1, "choice": "ja"}),
        ("vote", {"proposal": 2, "choice": "nein", "deferral": "Ja"}),
        ("vote", {"proposal": 3, "choice": "enthaltung"}),
        ("vote", {"proposal": 4, "choice": "nein"})]
    # several votes on a line; a number in a reason is not a vote
    assert _commands("Voto: 1 favorevole, 2 e 3 contrario\n"
                     "vota 12 favorevole perché la regola 3 è giusta\n", IT) == [
        ("vote", {"proposal": 1, "choice": "favorevole"}),
        ("vote", {"proposal": 2, "choice": "contrario"}),
        ("vote", {"proposal": 3, "choice": "contrario"}),
        ("vote", {"proposal": 12, "choice": "favorevole"})]
    assert _commands("Ich stimme mit Ja für 5 und 6", DE, "de") == [
        ("vote", {"proposal": 5, "choice": "ja"}), ("vote", {"proposal": 6, "choice": "ja"})]
    # another language's vote word is not guessed: the line is answered with the game's
    [item] = parse("Stimme 1 Ja", IT, None, LABELS, "it")
    assert isinstance(item, Unclear) and item.why == "choice"
    reading = Reading([], _grammar(), [item])
    assert note(reading, "it").endswith(
        "- “Stimme 1 Ja” — in questa partita si vota con: favorevole, contrario.")


def _grammar():  # noqa: ANN202 - the test's own
    from scriba.mail.commands import Grammar
    return Grammar(IT, LABELS, "it")


def test_proposals_by_every_opening_and_their_parameters_by_label() -> None:
    for opening in ("proposta: Saluti", "Proposta:Saluti", "Antrag: Saluti",
                    "Vorschlag: Saluti", "Proponi una legge: Saluti", "propongo: Saluti",
                    "Ich schlage vor: Saluti"):
        [(action, args)] = _commands(f"{opening}\nlettera: 2\nOgni giocatore saluta.", IT)
        assert action == "propose" and args["title"] == "Saluti", opening
        assert args["letter"] == 2
        assert args["changes"] == [{"enact": {"title": "Saluti",
                                              "text": "Ogni giocatore saluta."}}]
    [(_, args)] = _commands("Antrag: Gruß\nBrief 2\nKlasse: R\nJeder grüßt.", DE, "de")
    assert args["letter"] == 2 and args["changes"] == [
        {"enact": {"class": "R", "title": "Gruß", "text": "Jeder grüßt."}}]
    [(_, args)] = _commands("proposta: Via\nabroga: 305\n", IT)
    assert args["changes"] == [{"repeal": {"rule": "305"}}]
    # a sentence that starts with a proposing verb is prose, not a proposal
    assert _commands("Propongo di andare a cena venerdì.", IT) == []


def _text(letter: str, actions: list[ActionInfo] = IT, author: str = "Bruno") -> str:
    [args] = [a for name, a in _commands(letter, actions, "it", author) if name == "propose"]
    return args["changes"][0]["enact"].get("text", "")


def test_a_proposals_text_ends_at_a_clear_boundary() -> None:
    law = "Ogni giocatore saluta.\nSeconda riga."
    for after in ("fine\nNote a margine.", "---\nNote a margine.", "Ende\nNote.",
                  "End.\nmore", "\nUn saluto,\nBruno", "Un saluto,\nBruno",
                  "Ciao, Bruno", "\nViele Grüße\nBruno R.", "Best,\nBob",
                  "Grazie a tutti!\nBruno\n\nvota 2 favorevole", "Bruno",
                  "vota 2 favorevole", "Cedi Nomica: a Carla 5", "\n-- \nBruno"):
        assert _text(f"proposta: Saluti\n{law}\n{after}\n") == law, after
    # the next command after it is still read
    assert ("vote", {"proposal": 2, "choice": "favorevole"}) in _commands(
        f"proposta: Saluti\n{law}\nUn saluto,\nBruno\n\nvota 2 favorevole\n", IT)
    # a sign-off-like word inside a long line, or a name that is not the author's, stays
    kept = "Grazie al Re, ogni giocatore riceve 100 N ogni giorno di festa.\nCarla"
    assert _text(f"proposta: Saluti\n{kept}\n") == kept
    # "Presse: …" right under a German proposal is the next command, not its text
    assert _commands("Antrag: Gruß\nJeder grüßt.\nPresse: Hallo!\n", DE, "de")[1] == (
        "press", {"text": "Hallo!"})


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = ["vota", "Stimme", "proposta:", "Antrag:", "fine", "---", "Cedi Nomica", "a",
           "Carla", "1", "#2", "fav.", "Ja", "Un saluto,", "Bruno", "lettera:", "Brief",
           "=", "x=1", "```", "\n", "\n\n", "Ich stimme", "Presse:", "-- ", "Grüße", "ß"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=8)), max_size=60))
def test_any_mix_of_command_words_reads_without_an_exception(pieces: list[str]) -> None:
    from scriba.mail.reading import how_to_write, read_commands

    text = " ".join(pieces)
    for actions, language in ((IT, "it"), (DE, "de")):
        reading = read_commands(text, "", actions, LABELS, language, author="Bruno")
        assert isinstance(note(reading, language), str)
        assert how_to_write(reading.grammar, language)
        assert all(isinstance(i.args, dict) for i in reading.items
                   if isinstance(i, Command))
