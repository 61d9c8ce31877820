"""Tasks: what flightdeck evaluates. The knowledge task is the gold set of questions."""
