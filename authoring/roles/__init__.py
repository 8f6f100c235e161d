"""The four authoring roles, one module each: author, validator, fairness, fixer. Each module holds the role's
Protocol, its rule driver (deterministic, offline), its LLM driver and the LLM driver's reply model; `llm` holds
what the LLM drivers share (configuration, budgets, the endpoint) and `drivers` picks a set of four."""
