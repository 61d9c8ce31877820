"""Every folder and file name flightdeck gives a project: the one place they are spelled.

:class:`~flightdeck.project.paths.ProjectPaths` and
:class:`~flightdeck.project.suite_folder.SuiteFolder` join them into paths; a module that
needs a path asks those, never spells a name itself (``tests/unit/test_paths_spelled_once.py``
greps ``src/`` for these names outside this package and fails).
"""

from __future__ import annotations

from pathlib import Path

# --- the project root -------------------------------------------------------------------------
PARAMS_FILE = "params.yaml"  # its folder is the project root
PIPELINE_FILE = "dvc.yaml"
STATE_FOLDER = Path(".flightdeck")  # flightdeck's own files, in .gitignore
CACHE_FOLDER = STATE_FOLDER / "cache"  # bundles cloned, calibrated levels, the rating-order key
WORKSPACES_FOLDER = STATE_FOLDER / "workspaces"  # blob store of the trial workspaces
# (#21) Scratch arms (`experiment run --scratch`, or an arm params.yaml's pipeline does not
# name) keep their answers, meta, labels, run log and traces under scratch/<suite>/, which
# `flightdeck init` puts in .gitignore and no dvc.yaml stage depends on.
SCRATCH_FOLDER = STATE_FOLDER / "scratch"
# (#21) A score of a scratch arm writes its outputs there too (scratch/<suite>/metrics.json,
# report.md and its .svg, results/<arm>.jsonl, scores.jsonl), never the tracked ones.
SCRATCH_METRICS_FILE = "metrics.json"
SCRATCH_REPORT_FILE = "report.md"
SUITES_FOLDER = "suites"  # suites/<suite>/
HOLDOUTS_FOLDER = "holdouts"  # params' default `holdouts`
METRICS_FOLDER = "metrics"  # metrics/<suite>.json
REPORTS_FOLDER = "reports"  # reports/<suite>.md (and its .svg)
RESULTS_FOLDER = "results"  # results/<suite>/<arm>.jsonl
RUNS_FOLDER = "runs"  # runs/<suite>/<arm>.jsonl: the trials ledger
TRACES_FOLDER = "traces"  # traces/<suite>/<arm>/<id>.log
# What a trial's harness may never see inside the project root (besides suites and repos).
GUARDED_OUTPUTS = (HOLDOUTS_FOLDER, RESULTS_FOLDER, REPORTS_FOLDER, RUNS_FOLDER, TRACES_FOLDER)
# What a folder of a checkout (a teammate's clone, a CI workspace) holds at its top: a sandbox
# never binds a folder holding one of these as an installation (arms/sandbox_paths.py).
CHECKOUT_MARKS = (".git", SUITES_FOLDER, HOLDOUTS_FOLDER, PARAMS_FILE, PIPELINE_FILE)

# --- in the cache -----------------------------------------------------------------------------
DECISION_CACHE = "decision"  # calibrated levels found by exact enumeration
ORDER_SECRET = "rating-order.key"  # keys each rater's order of the items
SCAN_DATABASE = "scan-database"  # the canary scan's compiled Hyperscan database (#20)

# --- in a suite folder ------------------------------------------------------------------------
QUESTIONS_FILE = "questions.jsonl"
KEYS_FILE = "keys.jsonl"
SEALED_FILES = (QUESTIONS_FILE, KEYS_FILE)  # what manifest.json hashes
SUITE_MANIFEST = "manifest.json"
LEDGER_FILE = "scores.jsonl"  # each arm's first score: its answers never change after
ANSWERS_FOLDER = "answers"  # answers/<arm>.jsonl and <arm>.meta.json
LABELS_FOLDER = "labels"  # labels/<arm>.jsonl: the people's
JUDGEMENTS_FOLDER = "judgements"  # judgements/<judge>/<arm>.jsonl: a judge's, apart
CALIBRATION_FILE = "calibration.json"  # judgements/<judge>/calibration.json

# --- in the holdouts folder -------------------------------------------------------------------
HOLDOUTS_MANIFEST = "manifest.json"  # the canaries registered for the leak scan
HOLDOUTS_SCANS = "scans.jsonl"  # every scan, clean or not
