"""The `deep-research` command: run, resume and inspect durable research runs."""
