"""Arms: running harnesses as trials, the built-in agents, importing people's answers."""
