"""The one rule for "the same text": queries and subtask descriptions are de-duplicated alike."""

from __future__ import annotations

from deep_research.domain.distinct import distinct, text_key
from deep_research.nodes.planning import distinct_subtasks
from deep_research.state import SubTask


def test_texts_are_the_same_after_normalising_case_space_and_end_punctuation():
    assert text_key("  Ｚstd   vs XZ? ") == text_key('"zstd vs xz"') == "zstd vs xz"
    assert text_key("zstd vs xz") != text_key("xz vs zstd")  # order is meaning: not folded


def test_distinct_keeps_order_drops_blanks_repeats_and_what_was_already_seen():
    texts = ["a  b", "", "  ", "A B", "c", "d", "e"]
    assert distinct(texts) == ["a b", "c", "d", "e"]
    assert distinct(texts, already=["c"], limit=2) == ["a b", "d"]


def test_subtasks_are_new_capped_numbered_and_searchable():
    def task(description, queries=("",)):  # a blank query: none usable
        return SubTask(description=description, search_queries=list(queries), complexity="simple")

    tasks = [
        task("Speed  of zstd", ["zstd speed", "ZSTD speed", ""]),
        task("speed of zstd"),  # a repeat
        task("Done before"),
        task("Ratio of xz", [" "]),
        task("Memory use"),
    ]
    shaped = distinct_subtasks(tasks, already=["done before"], limit=2, first_id=4)
    assert [(t.id, t.description, t.search_queries) for t in shaped] == [
        (4, "Speed of zstd", ["zstd speed"]),
        (5, "Ratio of xz", ["Ratio of xz"]),
    ]
