"""`python -m flightdeck` runs the same CLI as the console script."""

from flightdeck.cli import main

main()
