"""DecameroNomic rimaneggiato: what its scenarios cannot check — the rules' queries (the
Poeta's publication of the laws, the referendum, the players' list, the decrees) and the
order of precedence of rule 10 deciding between rules that answer the same question."""

from __future__ import annotations

from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

RULESET = "decameronomic-rimaneggiato"
WEEK = 7 * 24 * 3600
INITIAL_ORDER = ["11", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]


def _scenario(service: Service, name: str) -> str:
    result = run_scenario(service.commands, load_scenario(BUNDLED / RULESET / "scenarios" / name))
    assert result.errors == []
    return result.game_id


def _game(service: Service) -> str:
    state = service.commands.create_game(RULESET, start="2026-03-02T09:00:00Z", seed=1,
                                         players=["Anna", "Bruno", "Carla", "Dario"],
                                         offices={"King": "Anna", "Poeta": "Carla"})
    return state.game_id


def _act(service: Service, game: str, actor: str, action: str, **args: object) -> None:
    outcome = service.commands.perform(game, actor, action, dict(args))
    assert outcome.accepted, outcome.message


def _enact(service: Service, game: str, actor: str, title: str, text: str,
           code: str | None = None, priority: bool = False) -> None:
    change: dict[str, object] = {"title": title, "text": text}
    if code:
        change["code"] = code
    if priority:
        change["attributes"] = {"priority": True}
    _act(service, game, actor, "propose", changes=[{"enact": change}])


def test_published_ruleset_shows_versions_authors_and_amendments(service: Service) -> None:
    game = _scenario(service, "partita_completa.yaml")
    published = service.reads.query(game, "published_ruleset")
    assert published.startswith("DecameroNomic rimaneggiato — Regolamento")
    assert "\n1. Le regole\na) Tutti i giocatori devono obbedire" in published
    assert "Autore: regolamento iniziale" in published
    assert ("\n100 [1]. Premi e penitenze\n"
            "a) Chi fa una proposta che viene approvata guadagna 7 punti.\n\n"
            "b) Chi fa una proposta che viene respinta perde 1 punto.\n"
            "Autore: Bruno\n"
            "Emendamenti in vigore: Carla (modifica del comma a, 2026-03-16)") in published
    assert "\n101. Cortesia\na) I Cortigiani salutano il Re.\nAutore: Dario" in published
    # The version counts approved amendments: the comma and its code were one proposal,
    # while the kernel's revision counts both history entries.
    laws = {law["number"]: law for law in service.reads.query(game, "laws")}
    assert laws["100"]["version"] == 1
    assert service.reads.load(game).rules["100"]["history"][-1]["change"] == "amend"
    assert laws["2"]["version"] == 0 and laws["2"]["author"] is None


def test_amendments_no_longer_in_force_are_not_shown(service: Service) -> None:
    game = _scenario(service, "proposte_e_leggi.yaml")
    laws = {law["number"]: law for law in service.reads.query(game, "laws")}
    # Rule 2: Bruno rewrote comma b, then Carla deleted it: two amendments, one in force.
    assert laws["2"]["version"] == 2
    assert [(a["author"], a["comma"], a["operation"]) for a in laws["2"]["amendments"]] == \
        [("Carla", "b", "delete")]
    assert "b)" not in laws["2"]["text"]
    # Rule 7: Dario added comma e after comma d.
    assert laws["7"]["version"] == 1
    assert laws["7"]["text"].endswith("d) Appena la proposta viene pubblicata, diventa una "
                                      "proposta in attesa, e rimane tale finché non viene "
                                      "approvata o respinta.\n\ne) Ogni proposta ha un titolo.")
    published = service.reads.query(game, "published_ruleset")
    assert "\n2 [2]. La Giornata\na) La Giornata" in published
    assert "Emendamenti in vigore: Carla (cancellazione del comma b, 2026-03-16)" in published
    assert "Dario (aggiunta di un comma dopo il comma d, 2026-03-09)" in published
    assert "\n101 [1]. Saluti\n" in published
    assert "100. Il pane" not in published  # repealed
    assert service.reads.query(game, "greeting") == "Come state?"  # the code of 101's amendment


def test_rule_order_puts_rules_claiming_priority_first(service: Service) -> None:
    game = _game(service)
    assert service.reads.query(game, "rule_order") == INITIAL_ORDER
    _enact(service, game, "Bruno", "Cortesia", "a) Si saluta.")
    _enact(service, game, "Dario", "Il saluto del Poeta",
           "a) Il Poeta saluta per primo.\n\nb) Questa legge ha priorità sulle altre.",
           priority=True)
    for voter in ("Carla", "Anna"):
        for number in (1, 2):
            _act(service, game, voter, "vote", proposal=number, choice="favorevole")
    service.commands.advance(game, by=WEEK)
    assert service.reads.query(game, "rule_order") == ["11", "101", *INITIAL_ORDER[1:], "100"]


def test_priority_or_else_lower_number_decides_between_rules(service: Service) -> None:
    game = _game(service)
    assert service.reads.query(game, "status").startswith("Giornata 1 (dal 2026-03-02 09:00 al "
                                                          "2026-03-09 09:00 UTC); Re: Anna; Poeta: "
                                                          "Carla")
    status_code = "def query_status(game, args):\n    return {answer!r}\n"
    _enact(service, game, "Bruno", "Annuncio", "a) Lo stato lo annuncia il banditore.",
           code=status_code.format(answer="Parla il banditore"))
    _act(service, game, "Carla", "vote", proposal=1, choice="favorevole")
    service.commands.advance(game, by=WEEK)
    # 100 conflicts with rule 2 and has a higher number: rule 2 prevails.
    assert service.reads.load(game).rules["100"]["in_force"]
    assert service.reads.query(game, "status").startswith("Giornata 2")
    # A law that claims priority prevails over rule 2.
    _enact(service, game, "Carla", "Annuncio del Poeta",
           "a) Lo stato lo annuncia il Poeta, con priorità sulle altre leggi.",
           code=status_code.format(answer="Parla il Poeta"), priority=True)
    _act(service, game, "Anna", "vote", proposal=2, choice="favorevole")
    service.commands.advance(game, by=WEEK)
    assert service.reads.query(game, "status") == "Parla il Poeta"


def test_another_method_to_win_prevails_over_the_score(service: Service) -> None:
    game = _game(service)
    code = ("# 100: when the game ends, the Poeta wins.\n"
            "def transform_winner(game, value, context):\n"
            "    if value != None:\n"
            "        return value\n"
            "    return [game['offices']['Poeta']]\n")
    _enact(service, game, "Bruno", "Gloria al Poeta",
           "a) Quando la partita termina, vince il Poeta.", code=code)
    _act(service, game, "Dario", "vote", proposal=1, choice="favorevole")
    service.commands.advance(game, by=WEEK)  # Bruno is King of Giornata 2
    service.commands.advance(game, by=WEEK)  # nobody proposed: the game ends
    state = service.reads.load(game)
    assert state.ended and state.winners == ["Carla"]


def test_referendum_players_and_decrees(service: Service) -> None:
    game = _game(service)
    _enact(service, game, "Bruno", "Uno", "a) Uno.")
    _act(service, game, "Carla", "vote", proposal=1, choice="contrario")
    _act(service, game, "Anna", "veto", proposal=1)
    _act(service, game, "Elena", "join")
    _act(service, game, "Dario", "request_decree", question="Si può votare due volte?")
    _act(service, game, "Anna", "decree", case=1, judgment="No", reasons="No.")
    assert service.reads.query(game, "referendum") == [
        {"number": 1, "label": "1", "author": "Bruno", "title": "", "day": 1, "veto": True,
         "votes": {"Bruno": "for", "Carla": "against"}}]
    players = service.reads.query(game, "players")
    assert [(p["player"], p["status"], p["points"]) for p in players["players"]] == [
        ("Anna", "active", 0), ("Bruno", "active", 0), ("Carla", "active", 0),
        ("Dario", "active", 0)]
    assert players["requests"] == ["Elena"]
    assert service.reads.query(game, "decrees") == [
        {"request": 1, "question": "Si può votare due volte?", "king": "Anna", "decree": "No",
         "text": "No."}]
    service.commands.advance(game, by=WEEK)
    assert service.reads.query(game, "referendum") == []
    assert [p["player"] for p in service.reads.query(game, "players")["players"]][-1] == "Elena"
    live, replayed = service.reads.load(game), service.reads.replay(game)
    assert live.to_json() == replayed.to_json()
