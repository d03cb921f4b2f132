"""The kernel's and std's messages about the rule contract, told in the author's words.

A declaration that is malformed (``actions()`` returning a dict, a parameter of an unknown
type), a ``std`` constructor called with the wrong arguments, a hook that returns something
other than a list of effects: the kernel and the sandbox say these in a developer's English
("actions() entry 1 (x): kind must be one of ..."); :func:`read` turns each into a sentence
id and its values for :mod:`.codeerrors`, which says them in the author's language. What is
quoted from the code stays as written.
"""

from __future__ import annotations

import re

Said = tuple[str, dict[str, object]]

SENTENCES: dict[str, str] = {
    "decl_not_list": "`{hook}()` must return a list: `return [...]`.",
    "decl_entry_dict": "Entry {entry} of `{hook}()` must be a dict, such as "
                       "`{{\"name\": \"...\"}}`.",
    "decl_no_name": "Entry {entry} of `{hook}()` has no name: give it `\"name\": \"...\"`.",
    "decl_kind": "The action `{name}` has the kind `{value}`, which does not exist; the "
                 "kinds are {kinds}.",
    "decl_params": "The parameters of the action `{name}` must be a dict of names and "
                   "types, such as `{{\"amount\": \"int\"}}`.",
    "decl_param_type": "The parameter `{param}` of the action `{name}` has the type "
                       "`{type}`, which does not exist; the types are {types}, or "
                       "`asset:KIND` (with `?` at the end when it may be left out).",
    "decl_who": "Who may take the action `{name}` is `{value}`; it must be `\"player\"`, "
                "`\"anyone\"`, `\"office:NAME\"` or a list of these.",
    "decl_choices": "The `choices` of the action `{name}` must map the ruleset's words to "
                    "outcomes (`for`, `against`, `abstain`, …) as text.",
    "decl_scope": "The variable `{name}` has the scope `{value}`; a scope is `\"player\"` "
                  "or `\"game\"`.",
    "decl_reacts_event": "`reacts_to()` names the event `{event}`, which does not exist.",
    "decl_reacts_command": "In `reacts_to()`, a command is told apart by its `kind`, "
                           "`action` or `actor`, not by `{field}`.",
    "std_positional": "`std.{name}` takes {count} values in order ({names}), but was given "
                      "{given}.",
    "std_unknown_argument": "`std.{name}` has no argument `{argument}`; its arguments are "
                            "{known}.",
    "std_twice": "`std.{name}` is given `{argument}` twice.",
    "std_missing": "`std.{name}` needs `{argument}`.",
    "std_type": "In `std.{name}`, `{argument}` must be `{expected}`, not `{value}`.",
    "not_a_list": "`{hook}` must return a list of effects (`return [...]`), not `{value}`.",
    "not_an_effect": "An effect is made by `std` (such as `std.set_var(\"points\", 1)`), not "
                     "`{value}`.",
}

_ENTRY = re.compile(r"(\w+)\(\) entry (\d+) \((.*?)\): (.*)$")


def _codes(listed: str) -> str:
    """A list of words the kernel names ("plain, propose, vote"), as code."""
    return ", ".join(f"`{word.strip()}`" for word in listed.split(",") if word.strip())


def read(message: str) -> tuple[Said, tuple[Said, ...]] | None:
    """What is wrong and the fixes, or None when the message is not about the contract."""
    if m := re.match(r"(?:StdError: )?std\.(\w+): (.*)$", message):
        return _std(m.group(1), m.group(2))
    if m := re.match(r"(?:a hook|(\w+)) must return a list of effects, got (.*)$", message):
        return ("not_a_list", {"hook": m.group(1) or "…", "value": m.group(2)}), ()
    if m := re.match(r"an effect must be a dict with an 'effect' name, got (.*)$", message):
        return ("not_an_effect", {"value": m.group(1)}), ()
    if m := re.match(r"(\w+)\(\) must return a list, not ", message):
        return ("decl_not_list", {"hook": m.group(1)}), ()
    if m := re.match(r"(\w+)\(\) entry (\d+) must be a dict", message):
        return ("decl_entry_dict", {"hook": m.group(1), "entry": m.group(2)}), ()
    if m := re.match(r"(\w+)\(\) entry (\d+) has no name", message):
        return ("decl_no_name", {"hook": m.group(1), "entry": m.group(2)}), ()
    if m := re.match(r"reacts_to\(\): there is no event type '(\w+)' to react to"
                     r"(?: \(did you mean (\w+)\?\))?", message):
        fixes = (("did_you_mean", {"name": m.group(2)}),) if m.group(2) else ()
        return ("decl_reacts_event", {"event": m.group(1)}), fixes
    if m := re.match(r"reacts_to\(\): a command is told apart by .*, not '(\w+)'$", message):
        return ("decl_reacts_command", {"field": m.group(1)}), ()
    if m := _ENTRY.match(message):
        return _entry(m.group(3), m.group(4))
    return None


def _std(name: str, detail: str) -> tuple[Said, tuple[Said, ...]] | None:
    if m := re.match(r"takes (\d+) positional arguments \((.*)\), got (\d+)$", detail):
        return ("std_positional", {"name": name, "count": m.group(1),
                                   "names": _codes(m.group(2)), "given": m.group(3)}), ()
    if m := re.match(r"unknown argument '(\w+)' \(known: (.*)\)$", detail):
        return ("std_unknown_argument", {"name": name, "argument": m.group(1),
                                         "known": _codes(m.group(2))}), ()
    if m := re.match(r"(\w+) given twice$", detail):
        return ("std_twice", {"name": name, "argument": m.group(1)}), ()
    if m := re.match(r"missing (\w+)$", detail):
        return ("std_missing", {"name": name, "argument": m.group(1)}), ()
    if m := re.match(r"(\w+) must be (.+?), got (.*)$", detail):
        return ("std_type", {"name": name, "argument": m.group(1), "expected": m.group(2),
                             "value": m.group(3)}), ()
    return None


def _entry(name: str, detail: str) -> tuple[Said, tuple[Said, ...]] | None:
    if m := re.match(r"kind must be one of (.*), not '(.*)'$", detail):
        return ("decl_kind", {"name": name, "value": m.group(2),
                              "kinds": _codes(m.group(1))}), ()
    if detail.startswith("params must be a dict"):
        return ("decl_params", {"name": name}), ()
    if m := re.match(r"parameter '(.*?)' has type '(.*?)'; types are (.*?) or asset:KIND",
                     detail):
        return ("decl_param_type", {"name": name, "param": m.group(1), "type": m.group(2),
                                    "types": _codes(m.group(3))}), ()
    if m := re.match(r"who must be .*, not '(.*)'$", detail):
        return ("decl_who", {"name": name, "value": m.group(1)}), ()
    if detail.startswith("choices must map"):
        return ("decl_choices", {"name": name}), ()
    if m := re.match(r"scope must be .*, not '(.*)'$", detail):
        return ("decl_scope", {"name": name, "value": m.group(1)}), ()
    return None
