"""The bundled rulesets as the interfaces see them: their folder, their list (whole, or
only their names), and the refusal of one that cannot be loaded (:mod:`scriba.rulesets`
loads them for the service)."""

from scriba.rulesets import BUNDLED, RulesetError, bundled_rulesets, list_rulesets

__all__ = ["BUNDLED", "RulesetError", "bundled_rulesets", "list_rulesets"]
