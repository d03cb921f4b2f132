"""The front's own sentences (the rules' answers come from the service), in it/de/en."""

from __future__ import annotations

_TEXT = {
    "en": {
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
    },
    "it": {
        "no_game": "Scriba non ha capito a quale partita è destinata la tua lettera. "
                   "Scrivi a scriba+PARTITA@{domain} o metti [PARTITA] nell'oggetto.",
        "unknown_sender": "Scriba ha ricevuto la tua lettera per la partita {game}, ma "
                          "{sender} non è l'indirizzo di alcun giocatore: non è stato "
                          "fatto nulla. L'ufficiale della partita può aggiungerti.",
        "held": "È arrivata una lettera che dice di venire da te per la partita {game} "
                "(oggetto: {subject}; data: {date}). Non è stato possibile autenticarla "
                "(nessuna firma DKIM valida del tuo dominio): non è stato fatto nulla. "
                "Se l'hai scritta tu, rimandala al tuo indirizzo personale {personal}.",
        "held_receipt": "La tua lettera è stata conservata ma non eseguita: non è stato "
                        "possibile autenticarla. Il tuo indirizzo registrato ha ricevuto "
                        "le istruzioni per confermarla.",
        "too_large": "La tua lettera è di {size} MB; Scriba accetta lettere fino a {limit} "
                     "MB. Non è stato fatto nulla: rimandala senza l'allegato grande (il "
                     "codice va in un file .star o in un blocco ```).",
        "unclear": "Non capito: \"{line}\" — atteso: {expected}",
        "nothing": "Scriba non ha trovato comandi nella tua lettera. Atteso: {expected}",
        "mode": "Preferenza di posta impostata: {mode}.",
        "failed": "Non eseguito: {reason}",
    },
    "de": {
        "no_game": "Scriba konnte nicht erkennen, für welches Spiel dein Brief ist. "
                   "Schreibe an scriba+SPIEL@{domain} oder setze [SPIEL] in den Betreff.",
        "unknown_sender": "Scriba hat deinen Brief für das Spiel {game} erhalten, aber "
                          "{sender} ist keine Adresse eines Spielers; es wurde nichts "
                          "getan. Die Spielleitung kann dich hinzufügen.",
        "held": "Ein Brief, angeblich von dir, kam für das Spiel {game} an (Betreff: "
                "{subject}; Datum: {date}). Er ließ sich nicht authentifizieren (keine "
                "gültige DKIM-Signatur deiner Domain); es wurde nichts getan. Wenn du ihn "
                "geschrieben hast, schicke ihn erneut an deine persönliche Adresse "
                "{personal}.",
        "held_receipt": "Dein Brief wurde aufbewahrt, aber nicht ausgeführt: er ließ sich "
                        "nicht authentifizieren. Deine eingetragene Adresse hat erfahren, "
                        "wie du ihn bestätigst.",
        "too_large": "Dein Brief ist {size} MB groß; Scriba nimmt Briefe bis {limit} MB. "
                     "Es wurde nichts getan: bitte schicke ihn ohne den großen Anhang "
                     "(Regelcode gehört in eine .star-Datei oder einen ```-Block).",
        "unclear": "Nicht verstanden: \"{line}\" — erwartet: {expected}",
        "nothing": "Scriba hat in deinem Brief keinen Befehl gefunden. Erwartet: "
                   "{expected}",
        "mode": "Mail-Einstellung gesetzt: {mode}.",
        "failed": "Nicht ausgeführt: {reason}",
    },
}


def say(key: str, language: str, **params: object) -> str:
    table = _TEXT.get(language, _TEXT["en"])
    return table.get(key, _TEXT["en"][key]).format(**params)
