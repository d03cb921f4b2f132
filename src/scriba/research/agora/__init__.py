"""Research on Agora's records, not part of the FLR format: the Assessor's referenda
re-tallied through the engine, the recovered default voting strength, the Rulekeepor's
numbering, and the measures of the whole corpus (:mod:`.report`)."""
