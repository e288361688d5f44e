"""`python -m deep_research.cli`: the same as the `deep-research` command."""

from deep_research.cli.main import entry_point

entry_point()
