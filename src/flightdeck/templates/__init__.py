"""The files `flightdeck init` writes into a project, read by :mod:`flightdeck.tasks.init`."""
