"""std version 1's helpers written in Starlark: the lookups in the game's big structures.

Part of :mod:`scriba.rulecode.std.v1` (which exports ``STARLARK``), kept apart for its
length; what holds for v1 holds here: once a game has started with a version, that
version never changes behaviour.
"""

# The lookups in the game's big structures are Starlark: a native helper would get a Python
# copy of all of game["proposals"] or game["rules"] on every call, and be charged by its
# size; here ``proposals.get(...)`` finds a proposal at once and costs steps like any rule
# code. What they return is a copy, as a native helper's result was: a rule may change it.
# (std/__init__ binds these functions by version; no multi-line strings in this source.)
STARLARK = '''
def _copy(value):
    return json.decode(json.encode(value))

# The rule in force with this id from game["rules"], or None.
def rule(rules, rule_id):
    if type(rules) != "list":
        fail("std.rule: give it game[\\"rules\\"], got " + type(rules))
    if rule_id == None:
        return None
    wanted = str(rule_id)
    for item in rules:
        if type(item) == "dict" and item.get("id") == wanted:
            return _copy(item)
    return None

# The proposal of game["proposals"] with this number or label, or None.
def proposal(proposals, ref):
    if type(proposals) != "dict":
        fail("std.proposal: give it game[\\"proposals\\"], got " + type(proposals))
    if ref == None:
        return None
    key = str(ref)
    found = proposals.get(key)
    if found == None:
        for p in proposals.values():
            if p.get("label") == key:
                found = p
                break
    return None if found == None else _copy(found)

# The open proposals of game["proposals"], by number.
def open_proposals(proposals):
    if type(proposals) != "dict":
        fail("std.open_proposals: give it game[\\"proposals\\"], got " + type(proposals))
    found = [p for p in proposals.values() if p.get("status") == "open"]
    return _copy(sorted(found, key = lambda p: p["number"]))

# The cases of the game, oldest first; only those with a status in statuses when given.
def cases(game, statuses = None):
    if type(game) != "dict" or "cases" not in game:
        fail("std.cases: give it game, got " + type(game))
    if statuses != None and type(statuses) not in ("list", "tuple"):
        fail("std.cases: statuses must be a list, got " + type(statuses))
    found = [c for c in game["cases"].values() if statuses == None or c["status"] in statuses]
    return _copy(sorted(found, key = lambda c: c["number"]))

# The case with this number (an int or its text) of the game, or None.
def case(game, number):
    if type(game) != "dict" or "cases" not in game:
        fail("std.case: give it game, got " + type(game))
    if number == None or type(number) not in ("int", "string"):
        return None
    found = game["cases"].get(str(number))
    return None if found == None else _copy(found)
'''
