"""The proposal lab (issue 22): seeded bots that play a game by its rules (:mod:`.bots`),
games played by them in an in-memory service (:mod:`.simulate`), and what those games
showed (:mod:`.findings`). Part of the service: the players' pages and letters ask it to
test a proposal ("Test this proposal"), and ``scriba simulate`` runs it for developers."""
