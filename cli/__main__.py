"""`python -m cli`: the same as the `deep-research` command."""

from cli.main import entry_point

entry_point()
