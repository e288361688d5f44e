"""The outside world: chat models, structured output, search backends, cache, budgets."""
