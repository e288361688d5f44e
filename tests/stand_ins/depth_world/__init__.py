"""The depth benchmark's world (issue 36): planted facts on loopback pages, a search over them,
and a stand-in model kind to nobody. See `facts`, `site`, `servers`, `brain` and `score`."""
