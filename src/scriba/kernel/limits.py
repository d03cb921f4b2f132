"""What rule code may make the kernel do, and what it may cost: the limits, in one place.

Each is a guard against a rule (written by any player, adopted by a vote) that would
otherwise make its game unusable. Going past one aborts that rule's part of the command
(recorded as ``rule_code_aborted`` with a sentence saying which limit), never the
command and never another rule's part: the vote that repeals the rule must still be
countable.

Cost is counted in *steps* (see :mod:`scriba.rulecode.cost` for what a step is and who
pays for it). A rule's code may spend, in one command:

* per hook call: :data:`STEPS_PER_CALL` steps and :data:`SECONDS_PER_STEP` seconds a step
  (2 s), and :data:`MEMORY_PER_CALL` more bytes of its worker's address space
  (:data:`MODULE_MEMORY` for its top-level code, run when it is compiled);
* in all its calls together: a fifth (:data:`RULE_PART`) of the command's budget —
  20,000 steps and 2 s;
* the command's budget, :data:`COMMAND_STEPS` steps and :data:`COMMAND_SECONDS` seconds,
  is shared by all the rules with code in force, but each is owed an even part of it
  (``1/n`` for ``n`` rules): once the command's budget is spent, only rules past their
  even part are stopped. So the rule code of one command costs at most twice the
  command's budget, and a rule within its even part is never stopped by what others
  spend.

A step that cannot be interrupted (one huge allocation, a ``sorted`` of a huge list) is
stopped by killing its worker :data:`KILL_GRACE` seconds after its call's time is up; that
rule is then not called again in the command.
"""

from __future__ import annotations

# --- what rule code may make the kernel do ---------------------------------------------
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

# --- what rule code may cost ---------------------------------------------------------------
# Steps one hook call may take: 0.05-0.2 s of honest rule code.
STEPS_PER_CALL = 2000
# Wall clock a call may take, per step of its budget (2 s for 2,000 steps): several times
# what a step takes (15-70 us; up to 450 us for a loop making a big integer a turn on a
# machine loaded four times over), so that only a step doing far more work than a step
# should (a builtin on a huge value, a huge allocation) meets it: steps, not seconds,
# are what stop rule code, at the same point on every run.
SECONDS_PER_STEP = 0.001
# Steps and wall clock of rule code for a whole command (a command, a timer firing, a
# query, a dry run), shared by the rules as said above.
COMMAND_STEPS = 50 * STEPS_PER_CALL
COMMAND_SECONDS = 10.0
# One rule may spend at most this part of the command's budget (1/5: 20,000 steps, 2 s).
RULE_PART = 5
# A step that overruns its call's time is killed this much later (with its worker).
KILL_GRACE = 0.5
# Proposing code: compiling it (its top-level code runs) and running its declarations.
PROPOSING_STEPS = STEPS_PER_CALL
PROPOSING_SECONDS = 2.0
# Memory: a sandbox worker's address space; what one call may add to it (Starlark frees
# nothing during a call: 2,000 steps of a loop making big integers take 130 MiB); what a
# rule's top-level code may add (its values stay with its module in the worker's cache).
WORKER_MEMORY = 1024 * 1024 * 1024
MEMORY_PER_CALL = 512 * 1024 * 1024
MODULE_MEMORY = 32 * 1024 * 1024
# What a native helper (std.*, transform, round, floor, ceil) costs: a step a call, and a
# step per this many values, and per this many characters, of its arguments and result
# (converting one value between Starlark and Python takes 3-5 us: about a tenth of a step).
VALUES_PER_STEP = 10
CHARACTERS_PER_STEP = 4096
