"""Certification: the task model, the grader, the episode runner, agents under test, gates, calibration and
re-certification. Depends on simulator/ only."""
