"""A period's report as a letter, the evaluation the seeds' officers sent at a period's
end: every proposal decided in it with its result and its votes in words ("approvata: 3
favorevoli, 1 contrario"), what the rules reported (their notices) and what else happened,
every new or changed rule in full, every proposal made in it and still open in full, the
standings, and what is due next (the next deadline, the proposals open for votes).

Built from a period of :func:`.periods.period_reports_of` (its title, its lines, its
standings, the events it holds) and the game's log and state, in one reader language.
"""

from __future__ import annotations

from typing import Any

from scriba.kernel.sealing import hidden
from scriba.service import catalogs
from scriba.service.letters import mail_text
from scriba.service.narrate import reason_word, tally_pairs
from scriba.service.proposaltext import proposal_heading, proposal_in_full, quoted
from scriba.service.words import Words, status_word, time_in_words

Event = dict[str, Any]
# Votes counted by their choice, with the plural each language writes ("3 favorevoli").
COUNTED = {"for": ("{n} for", "{n} for"), "against": ("{n} against", "{n} against"),
           "abstain": ("{n} abstention", "{n} abstentions")}
WHOLE_TEXT = {"enact", "amend", "reenact", "amend_paragraph", "transmute"}


def _plural(language: str, one: str, many: str, n: int) -> str:
    said = catalogs.translations("mail", language).ngettext(one, many, n) \
        if language != "en" else (one if n == 1 else many)
    return said.format(n=n)


def _votes_in_words(votes: dict[str, str], words: Words) -> str:
    """"3 favorevoli, 1 contrario": the votes counted by choice, for and against first."""
    counts: dict[str, int] = {}
    for choice in votes.values():
        counts[choice] = counts.get(choice, 0) + 1
    parts = []
    for choice in [*COUNTED, *sorted(set(counts) - set(COUNTED))]:
        n = counts.get(choice, 0)
        if choice in COUNTED and (n or choice != "abstain"):
            parts.append(_plural(words.language, *COUNTED[choice], n))
        elif n and choice not in COUNTED:
            parts.append(f"{n} {words.choices.get(choice, choice)}")
    return ", ".join(parts)


def _tally_rest(tally: Any, votes: dict[str, str], words: Words) -> str:
    """The rest of the rules' tally in words: what the counted votes do not say already,
    and not what is nothing (a flag not raised, a quorum of 0: "seconda metà no")."""
    if not isinstance(tally, dict):
        return ""
    counted = {choice: list(votes.values()).count(choice) for choice in COUNTED}
    counted["voters"] = len(votes)
    rest = {k: v for k, v in tally.items() if (k not in counted or v != counted[k])
            and v is not False and not (isinstance(v, int | float) and v == 0)}
    return ", ".join(f"{name} {shown}" for name, shown in tally_pairs(rest, words))


def _decided_line(proposal: dict[str, Any], event: Event, votes: dict[str, str],
                  words: Words) -> str:
    p = event.get("payload") or {}
    language = words.language
    head = proposal_heading(proposal.get("number"), proposal.get("title"), language)
    if proposal.get("author"):
        head += " " + mail_text("by {author}", language).format(author=proposal["author"])
    line = f"{head}: {status_word(p.get('outcome'), language)}"
    if votes or p.get("outcome") in ("adopted", "rejected", "failed_quorum"):
        line += " \u2014 " + _votes_in_words(votes, words)
    rest = _tally_rest(p.get("tally"), votes, words)
    if rest:
        line += f" ({rest})"
    reason = p.get("reason")
    if not reason and isinstance(p.get("tally"), dict):
        reason = p["tally"].get("reason")
    if reason and reason != "vote":
        line += ". " + mail_text("Reason: {reason}", language).format(
            reason=reason_word(reason, language))
    return line + "."


def _rule_in_full(event: Event, state: Any, words: Words) -> list[str]:
    """A rule enacted or changed in the period, with its whole text."""
    change = (event.get("payload") or {}).get("change") or {}
    rule_id = str(change.get("rule") or "")
    rule = state.rules.get(rule_id) or {}
    text = change.get("text") if change.get("type") in ("enact", "amend", "reenact") else None
    text = text if isinstance(text, str) and text.strip() else rule.get("text")
    if not rule_id or not isinstance(text, str) or not text.strip():
        return []
    title = change.get("title") or rule.get("title")
    head = mail_text("Rule {rule}", words.language).format(rule=rule_id)
    head += f" {quoted(str(title), words.language)}" if title else ""
    return [head + ":", text.strip(), ""]


def report_letter(report: dict[str, Any], log: list[Event], state: Any, words: Words,
                  status: dict[str, Any]) -> str:
    """The letter of one period's report (its body, without the footer)."""
    language = words.language
    first, last = report.get("first_seq", 0), report.get("last_seq", -1)
    votes: dict[str, dict[str, str]] = {}  # proposal → voter → choice, as the log goes
    decided, rules, notices, made = [], [], [], []
    secret = hidden(log)  # a letter to everyone: sealed moves only once revealed
    for event in log:
        if event["seq"] > last:
            break
        if event["seq"] in secret:
            continue
        p = event.get("payload") or {}
        number = str(p.get("proposal"))
        if event["type"] == "vote_cast":
            votes.setdefault(number, {})[str(p.get("player"))] = str(p.get("choice"))
        elif event["type"] == "vote_withdrawn":
            votes.get(number, {}).pop(str(p.get("player")), None)
        if event["seq"] < first:
            continue
        if event["type"] == "proposal_resolved":
            proposal = state.proposals.get(number) or {"number": p.get("proposal")}
            decided.append(_decided_line(proposal, event, dict(votes.get(number, {})),
                                         words))
        elif event["type"] == "notice" and str(p.get("text") or "").strip():
            notices.append(str(p["text"]).strip())  # the rules' own evaluation, verbatim
        elif event["type"] == "proposal_submitted" and (state.proposals.get(
                str(p.get("number"))) or {}).get("status") == "open":
            made.append(state.proposals[str(p.get("number"))])  # its vote still to come
        elif event["type"] == "rule_changed" and (p.get("change") or {}).get("type") in \
                WHOLE_TEXT and (p.get("cause") or {}).get("kind") != "initial":
            rules += _rule_in_full(event, state, words)
    lines = [str(report.get("title") or ""), ""]
    if decided:
        lines += [mail_text("Proposals decided:", language), *decided, ""]
    # the chronicle's other sentences (the decisions are told above, with their votes)
    told = set(report.get("resolved") or [])
    others = notices + [str(line) for line in report.get("lines") or [] if line not in told]
    if others:
        lines += [mail_text("What happened:", language), *others, ""]
    if rules:
        lines += [mail_text("New and changed rules, in full:", language), ""] + rules
    if made:  # published with the period's evaluation, as the seeds' officers did
        in_force = {r["id"]: r for r in state.rules_in_force()}
        lines += [mail_text("Proposals of this period awaiting the vote, in full:",
                            language), ""]
        for proposal in made:
            lines += [proposal_in_full(proposal, in_force, words)[0], ""]
    if report.get("standings"):
        lines += [mail_text("Standings:", language), *report["standings"], ""]
    lines += _due_next(state, status, words)
    return "\n".join(lines).rstrip() + "\n"


def _due_next(state: Any, status: dict[str, Any], words: Words) -> list[str]:
    """What is due next: the next deadline by its name, the proposals open for votes."""
    language = words.language
    lines = []
    if status.get("ended"):
        return lines
    if status.get("deadline"):
        lines.append(mail_text("Next deadline: {name}, {time}.", language).format(
            name=words.timer(status.get("deadline_name") or ""),
            time=time_in_words(status["deadline"], language)))
    else:
        lines.append(mail_text("The next deadline is not set yet.", language))
    open_ = [p for p in state.proposals.values() if p.get("status") == "open"]
    if open_:
        named = ", ".join(proposal_heading(p["number"], p.get("title"), language)
                          for p in sorted(open_, key=lambda p: (len(str(p["number"])),
                                                                 str(p["number"]))))
        lines.append(mail_text("Open for votes: {proposals}.", language).format(
            proposals=named))
    return [mail_text("What is due next:", language), *lines] if lines else []
