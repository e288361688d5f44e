"""The outside world: chat models and structured output, search providers and the local index,
checkpoints, run resources and endpoint limits, progress events."""
