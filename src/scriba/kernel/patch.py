"""A difference between two JSON-like values, kept as data, and its application.

A correction of the record (event ``record_corrected``) carries the difference from the
state the log had made to the state the recomputed log makes, so that a replay folds it
without running any rule: ``apply(a, diff(a, b)) == b``.

A patch is a list of operations, each on a ``path`` (dict keys and list indexes from
the top):

- ``{"op": "set", "path": [...], "value": v}`` — put ``v`` there;
- ``{"op": "remove", "path": [...]}`` — drop a dict's key;
- ``{"op": "append", "path": [...], "values": [...]}`` — a list grew at its end (the
  notices, a proposal's history), so that a long list is not written again whole.

The empty path replaces the whole value. Values are copied in both directions, so a patch
never shares a list or a dict with the values it came from or is applied to.
"""

from __future__ import annotations

import copy
from typing import Any

Patch = list[dict[str, Any]]


def diff(a: Any, b: Any) -> Patch:
    """The least operations (by keys and list growth) that turn ``a`` into ``b``."""
    ops: Patch = []
    _diff(a, b, [], ops)
    return ops


def _diff(a: Any, b: Any, path: list[Any], ops: Patch) -> None:
    if _same(a, b):
        return
    if isinstance(a, dict) and isinstance(b, dict) and _order_kept(a, b):
        for key in a:
            if key not in b:
                ops.append({"op": "remove", "path": [*path, key]})
        for key, value in b.items():
            if key not in a:
                ops.append({"op": "set", "path": [*path, key], "value": copy.deepcopy(value)})
            else:
                _diff(a[key], value, [*path, key], ops)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) <= len(b) and all(_same(x, y) for x, y in zip(a, b, strict=False)):
            ops.append({"op": "append", "path": list(path),
                        "values": copy.deepcopy(b[len(a):])})
            return
        if len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                _diff(x, y, [*path, index], ops)
            return
    ops.append({"op": "set", "path": list(path), "value": copy.deepcopy(b)})


def _order_kept(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    """Whether removing and adding keys turns ``a``'s order into ``b``'s (new keys go
    last); otherwise the dict is written again whole: the state shows its order (the
    rules, the proposals in order of submission)."""
    return [k for k in a if k in b] + [k for k in b if k not in a] == list(b)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, keys in the same order: ``True == 1`` and ``1 == 1.0`` in Python,
    not in JSON, so a change of type is a change (``==`` first: it settles most cases at
    C speed)."""
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, dict):  # in the same order too: the state shows its order
        return list(a) == list(b) and all(_same(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return True


def apply(value: Any, patch: Patch) -> Any:
    """``value`` with ``patch`` applied; ``value`` itself is not changed."""
    result = copy.deepcopy(value)
    for op in patch:
        result = apply_op(result, op)
    return result


def apply_op(value: Any, op: dict[str, Any]) -> Any:
    """Apply one operation in place where it can (the new top value is returned)."""
    path = list(op["path"])
    kind = op["op"]
    if not path:
        if kind == "append":
            value.extend(copy.deepcopy(op["values"]))
            return value
        return copy.deepcopy(op["value"])
    holder = value
    for key in path[:-1]:
        holder = holder[key]
    last = path[-1]
    if kind == "set":
        holder[last] = copy.deepcopy(op["value"])
    elif kind == "remove":
        del holder[last]
    elif kind == "append":
        holder[last].extend(copy.deepcopy(op["values"]))
    else:
        raise ValueError(f"unknown patch operation {kind!r}")
    return value
