"""A tested proposal's findings in sentences a player reads ("Test this proposal"), in the
reader's language (the English templates here are ``scriba.po`` entries), with the game's
own words: its variables', actions' and period's labels as the ruleset declares them
(:class:`~scriba.service.words.Words`), the players' names, values shown as the ruleset
shows them. No parameter names, no Python values.

The report is the data :class:`~scriba.service.lab.proposal.ProposalReport` gives (its
``to_dict()`` and its ``differences()``): only what the runs with the proposal showed and
the paired runs without it did not is told. The same finding in several runs is told once,
with in how many of them it happened.
"""

from __future__ import annotations

from typing import Any

from scriba.service.codeerrors import in_a_line
from scriba.service.messages import translate
from scriba.service.periods import period_title
from scriba.service.words import Words

T = {
    "head": "Tested in {games} games of {turns} turns from the game as it stands now.",
    "head_one": "Tested in one game of {turns} turns from the game as it stands now.",
    "cut": "The time ran out: {played} of the {total} turns were played.",
    "none": "No problem found: the games went on as they do without it.",
    "runaway": "With the proposal, {who}'s {variable} grew from {start} to {end} "
               "(without it, {baseline}).",
    "runaway_alone": "With the proposal, {who}'s {variable} grew from {start} to {end}.",
    "runaway_game": "With the proposal, the game's {variable} grew from {start} to {end} "
                    "(without it, {baseline}).",
    "runaway_game_alone": "With the proposal, the game's {variable} grew from {start} to "
                          "{end}.",
    "stall": "With the proposal, the game stalled in turn {turn}: nobody could act any more "
             "and no deadline was left.",
    "period_stuck": "With the proposal, “{period}” did not end: it lasted {turns} turns "
                    "from turn {since} (without it, the game moved on {moves} times).",
    "period_stuck_alone": "With the proposal, “{period}” did not end: it lasted {turns} "
                          "turns from turn {since}.",
    "ended": "With the proposal, the game ended in turn {turn}, won by {winners}.",
    "ended_nobody": "With the proposal, the game ended in turn {turn}, with no winner.",
    "abort": "With the proposal, the code of rule {rule} failed {count} times, the first in "
             "turn {turn}:",
    "budget": "With the proposal, the code of rule {rule} ran out of its allowed steps "
              "{count} times, the first in turn {turn}.",
    "refused": "With the proposal, {player} was offered “{action}” in turn {turn}, and it "
               "was refused: {why}",
    "invariant": "With the proposal, “{statement}” no longer held in turn {turn} (rule "
                 "{rule}).",
    "internal_error": "With the proposal, Scriba itself failed while playing; please tell "
                      "the game's officer.",
    "replay_differs": "With the proposal, the game's record read again did not give the same "
                      "game; please tell the game's officer.",
    "in_runs": "This happened in {count} of the {games} games.",
    "bounds": "{games} games of {turns} turns, within {time}.",
    "bounds_one": "One game of {turns} turns, within {time}.",
    "minutes": "{n} minutes",
    "minute": "one minute",
    "seconds": "{n} seconds",
    "running": "The test is running: {done} of {total} turns played.",
    "failed": "The test could not be finished; it may be started again.",
    "report_head": "The test of proposal {proposal}:",
}


def _(key: str, language: str, **params: Any) -> str:
    return translate(T[key], language, **params)


def told(report: dict[str, Any], differences: list[dict[str, Any]], words: Words,
         language: str) -> list[str]:
    """The report in sentences: how it was tested, then each finding (or that none was)."""
    games, turns = int(report.get("games") or 0), int(report.get("turns") or 0)
    lines = [_("head_one", language, turns=turns) if games == 1
             else _("head", language, games=games, turns=turns)]
    total = games * turns * 2  # with and without the proposal
    if report.get("complete") is False:
        lines.append(_("cut", language, played=report.get("played", 0), total=total))
    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for found in differences:
        grouped.setdefault(_same(found), []).append(found)
    if not grouped:
        lines.append(_("none", language))
    for found in grouped.values():
        sentence = finding(found[0], words, language)
        if len(found) > 1:
            sentence += " " + _("in_runs", language, count=len({f.get("game") for f in found}),
                                games=games)
        lines.append(sentence)
    return lines


def _same(found: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two runs' findings one for a reader (not the turn or the values)."""
    kind = found.get("kind")
    keys = {"runaway": ("who", "variable"), "period_stuck": ("variable",),
            "abort": ("rule", "hook"), "budget": ("rule", "hook"),
            "refused": ("player", "action"), "invariant": ("statement",)}.get(str(kind), ())
    return (kind, *(str(found.get(k)) for k in keys))


def finding(found: dict[str, Any], words: Words, language: str) -> str:
    """One finding of :func:`~scriba.service.lab.findings` in a sentence."""
    kind = found.get("kind")
    show = words.show
    if kind == "runaway":
        variable = str(found.get("variable"))
        values = {"variable": words.var(variable), "start": show(variable, found.get("start")),
                  "end": show(variable, found.get("end"))}
        game = found.get("who") == "game"
        key = "runaway_game" if game else "runaway"
        if found.get("baseline") is None:
            return _(key + "_alone", language, who=found.get("who"), **values)
        return _(key, language, who=found.get("who"),
                 baseline=show(variable, found.get("baseline")), **values)
    if kind == "stall":
        return _("stall", language, turn=found.get("turn"))
    if kind == "period_stuck":
        variable = str(found.get("variable"))
        # The period by its title, as the game's reports name it (label and value).
        values = {"period": period_title(words, variable, found.get("value")),
                  "turns": found.get("turns"),
                  "since": max(1, int(found.get("since_turn") or 0))}  # 0: from the start
        if found.get("baseline_moves") is None:
            return _("period_stuck_alone", language, **values)
        return _("period_stuck", language, moves=found.get("baseline_moves"), **values)
    if kind == "ended":
        winners = ", ".join(str(w) for w in found.get("winners") or [])
        if not winners:
            return _("ended_nobody", language, turn=found.get("turn"))
        return _("ended", language, turn=found.get("turn"), winners=winners)
    if kind == "abort":
        head = _("abort", language, rule=found.get("rule"), count=found.get("count"),
                 turn=found.get("first_turn"))
        # The explanation's first line (where and what); its code excerpt is for the page
        # of the rule's author, not for a sentence.
        told = in_a_line(str(found.get("reason") or ""), language)
        return f"{head} {told}" if told else head
    if kind == "budget":
        return _("budget", language, rule=found.get("rule"), count=found.get("count"),
                 turn=found.get("first_turn"))
    if kind == "refused":
        action = str(found.get("action"))
        label = words.action(action).label
        return _("refused", language, player=found.get("player"), turn=found.get("turn"),
                 action=label.text if label else action.replace("_", " "),
                 why=found.get("why"))
    if kind == "invariant":
        return _("invariant", language, statement=found.get("statement"),
                 turn=found.get("turn"), rule=found.get("rule"))
    if kind == "replay_differs":
        return _("replay_differs", language)
    return _("internal_error", language)  # and any kind not known yet: told, not shown raw


def bounds(games: int, turns: int, seconds: float, language: str) -> str:
    """The test's bound ("4 games of 40 turns, within 2 minutes")."""
    whole = round(seconds)
    if whole == 60:
        time = _("minute", language)
    elif whole >= 60 and whole % 60 == 0:
        time = _("minutes", language, n=whole // 60)
    else:
        time = _("seconds", language, n=whole)
    if games == 1:
        return _("bounds_one", language, turns=turns, time=time)
    return _("bounds", language, games=games, turns=turns, time=time)


def progress(done: int, total: int, language: str) -> str:
    return _("running", language, done=done, total=total)


def failed(language: str) -> str:
    return _("failed", language)


def report_head(proposal: str, language: str) -> str:
    """The first line of a report sent by mail (``proposal``: as a sentence names it)."""
    return _("report_head", language, proposal=proposal)
