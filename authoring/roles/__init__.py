"""The four authoring roles: author (a package, authoring/roles/author/), validator, fairness, fixer. Each holds the
role's Protocol, its rule driver (deterministic, offline), its LLM driver and the LLM driver's reply model; `llm`
holds what the LLM drivers share (configuration, budgets, the endpoint), `prompts` the one jinja environment with
the LLM prompts as template files, `findings` how a reviewer's finding becomes a flag, and `drivers` picks a set
of four."""
