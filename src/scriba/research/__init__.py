"""Research, not the product: studies of real games' records that use Scriba as an
instrument (:mod:`.agora`: Agora's referenda re-tallied through the engine). Nothing in
the product imports this package; the CLI's ``scriba agora retally`` runs it."""
