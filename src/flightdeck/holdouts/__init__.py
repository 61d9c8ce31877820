"""Holdouts: the canary registry and the scan that keeps sealed keys out of traces."""
