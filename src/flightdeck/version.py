"""flightdeck's version, in a leaf module: every file it writes records it.

Apart from ``flightdeck/__init__.py`` (which re-exports it as ``flightdeck.__version__``)
because that module names the public API's tasks, and a task that read the version from it
would import its own package's front door back: a circle, if a harmless one at run time.
"""

__version__ = "0.1.0"
# The distribution's name on the package index (`flightdeck` there is an unrelated project);
# the import name and the command are `flightdeck`.
DISTRIBUTION = "flightdeck-evals"
