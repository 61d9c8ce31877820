"""flightdeck: seal a gold set, let arms answer it, score them with honest statistics."""

__version__ = "0.1.0"
