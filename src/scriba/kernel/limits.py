"""What rule code may make the kernel do in one command: the limits, in one place.

Each is a guard against a rule (written by any player, adopted by a vote) that would
otherwise make its game unusable. Going past one aborts that rule's part of the command
(recorded as ``rule_code_aborted`` with a sentence saying which limit), never the
command: the vote that repeals the rule must still be countable.
"""

from __future__ import annotations

# Events one command may produce, the player's own event and every reaction included.
MAX_EVENTS_PER_COMMAND = 5000
# Effects one hook call may return.
MAX_EFFECTS_PER_CALL = 1000
# How deep hooks may trigger hooks: an event made by a reaction to an event made by a
# reaction to ... the command's own event.
MAX_REACTION_DEPTH = 50
# Any value rule code stores (a variable, proposal data, an asset, a notice, a tally, a
# timer's data) or a player passes as an argument: JSON data, nested at most this deep...
MAX_VALUE_DEPTH = 32
# ... and at most this large, JSON-encoded, per effect (or per command's arguments).
MAX_VALUE_BYTES = 256 * 1024
