"""The files `flightdeck init` writes into a project, read by ``project_init.py``."""
