"""The sentences of a case's events (kernel/cases.py), a part of :class:`narrate.Narrator`.

A case's question, reasons and judgment are data in the ruleset's language, kept as
written; where a player's action made the event, the action is named as the ruleset
calls it (its label) when it has one.
"""

from __future__ import annotations

from typing import Any

from scriba.service.words import Words, key_word, show_value

Event = dict[str, Any]


class CaseSentences:
    """Mixed into the Narrator: it provides ``words``, ``language``, ``_t``, ``_by_rule``."""

    words: Words
    language: str

    def _t(self, template: str, **params: Any) -> str:  # the Narrator's
        raise NotImplementedError

    def _by_rule(self, text: str, payload: dict[str, Any]) -> str:  # the Narrator's
        raise NotImplementedError

    def _labelled(self, p: dict[str, Any]) -> str | None:
        """The ruleset's label of the action that made the event, if it has one."""
        action = p.get("action")
        if not action:
            return None
        said = self.words.action(str(action)).label
        return said.text if said is not None else None

    def _why(self, text: str, why: Any) -> str:
        """A sentence with the reasons given (the judge's, a rule's) after a dash."""
        if not why:
            return text
        why = show_value(why, self.language).strip()
        end = "" if why.endswith((".", "!", "?", "\u201d", "\u00bb")) else "."
        return f"{text[:-1] if text.endswith('.') else text} \u2014 {why}{end}"

    def _case_opened(self, e: Event, p: dict[str, Any]) -> str:
        number, question = p.get("number"), show_value(p.get("question"), self.language)
        label = self._labelled(p)
        if e.get("actor") and label:
            return self._t("{actor} opens case {number} ({action}): \u201c{question}\u201d.",
                           actor=e["actor"], number=number, action=label, question=question)
        if e.get("actor"):
            return self._t("{actor} opens case {number}: \u201c{question}\u201d.",
                           actor=e["actor"], number=number, question=question)
        return self._by_rule(self._t("Case {number} is opened: \u201c{question}\u201d.",
                                     number=number, question=question), p)

    def _case_assigned(self, e: Event, p: dict[str, Any]) -> str:
        if p.get("judge") is None:
            text = self._t("Case {number} has no judge now.", number=p.get("case"))
        else:
            text = self._t("{judge} is the judge of case {number}.", judge=p["judge"],
                           number=p.get("case"))
        return self._by_rule(text, p)

    def _case_judged(self, e: Event, p: dict[str, Any]) -> str:
        judgment = show_value(p.get("judgment"), self.language)
        if e.get("actor"):
            text = self._t("{judge} judges case {number}: {judgment}.", judge=e["actor"],
                           number=p.get("case"), judgment=judgment)
        else:
            text = self._t("Case {number} is judged: {judgment}.", number=p.get("case"),
                           judgment=judgment)
        text = self._why(text, p.get("reasons"))
        rules = [str(r.get("rule")) for r in p.get("rules") or [] if isinstance(r, dict)]
        if rules:
            text += " " + self._t("Rules interpreted: {rules}.", rules=", ".join(rules))
        return self._by_rule(text, p)

    def _case_appealed(self, e: Event, p: dict[str, Any]) -> str:
        if e.get("actor"):
            text = self._t("{actor} appeals the judgment of case {number}.",
                           actor=e["actor"], number=p.get("case"))
        else:
            text = self._t("The judgment of case {number} is appealed.", number=p.get("case"))
        return self._by_rule(self._why(text, p.get("reasons")), p)

    def _case_reopened(self, e: Event, p: dict[str, Any]) -> str:
        text = self._t("Case {number} is reopened.", number=p.get("case"))
        return self._by_rule(self._why(text, self._reason(p)), p)

    def _case_closed(self, e: Event, p: dict[str, Any]) -> str:
        text = self._t("Case {number} is closed.", number=p.get("case"))
        return self._by_rule(self._why(text, self._reason(p)), p)

    def _reason(self, p: dict[str, Any]) -> str | None:
        """A rule's reason: its own sentence, or a word of ours ("turn_ended")."""
        return key_word(p["reason"], self.language) if p.get("reason") else None
