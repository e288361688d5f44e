"""`deep-research eval`: run a task file, then score each report as DeepResearch Bench does.

Quality (RACE-style): a judge model writes weighted, task-specific criteria for four dimensions
and scores the report on each, against a reference report when the task has one. Citations
(FACT-style): every (statement, cited URL) pair of the final report, deduplicated, is checked
by the judge against the page text the run retrieved.
"""
