"""The proposal lab's engine (issue 22): seeded bots that play a game by its rules
(:mod:`.bots`), games of a ruleset played by them in an in-memory service
(:mod:`.simulate`), and what those games showed (:mod:`.findings`). A tool beside the
product, like :mod:`scriba.bench`: only the ``simulate`` command imports it."""
