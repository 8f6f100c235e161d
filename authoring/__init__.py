"""Authoring: personas and stories in, certified and calibrated tasks out (LangGraph orchestrator, role
agents with rule and LLM drivers, review queue, git commits) and the `taskforge` command line."""
