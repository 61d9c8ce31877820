"""Scoring: the rules, the statistics, the report."""
