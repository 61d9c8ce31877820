"""The built-in harnesses."""
