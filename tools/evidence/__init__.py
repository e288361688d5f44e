"""What a report's citations rest on, kept as it was read: captured while a run reads (`reads`),
kept for the cited sources once it ends (`store`), read again later (`reread`)."""
