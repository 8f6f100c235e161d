"""Authoring fixtures reused by certification tests that need a certified taskset on disk."""

from tests.authoring.conftest import repo, sources  # noqa: F401  (pytest fixtures)
