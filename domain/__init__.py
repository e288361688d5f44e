"""The research's own rules, pure and without I/O: citations and their check, sources, budgets and
stop rules, prompt sizes and packing, the run's language, what makes a reply unusable."""
