"""Fixtures: the demo pipeline run once per session in a temporary git repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.pipeline.project import ROOT, Pipeline, copy_inputs


@pytest.fixture(scope="session")
def built_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    """The pipeline run once from scratch (seal, arms, scan, score, report), committed."""
    home = tmp_path_factory.mktemp("home")
    root = tmp_path_factory.mktemp("project")
    copy_inputs(ROOT, root)
    pipeline = Pipeline(root, home)
    pipeline.git("init", "--quiet", "--initial-branch=main")
    pipeline.dvc("init", "--quiet")
    pipeline.commit("the pipeline and its inputs")
    pipeline.first_run = pipeline.dvc("repro")
    pipeline.commit("dvc repro")
    return pipeline


@pytest.fixture
def pipeline_project(built_pipeline: Pipeline, tmp_path: Path) -> Pipeline:
    """A private copy of the built pipeline's repository (with .git), for one test to edit."""
    root = tmp_path / "project"
    shutil.copytree(built_pipeline.root, root, symlinks=True)
    return Pipeline(root, built_pipeline.home)
