"""deep-research: a deep-research engine as a typed LangGraph workflow (one installed name)."""
