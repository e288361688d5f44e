"""The depth benchmark's world and measures work (issue 29): a planted fact is found where it was
planted, and counted only when the report cites the page that holds it."""

from __future__ import annotations

import asyncio

from bench_scripts import bench_script

from deep_research.state import Source

from stand_ins.depth_world import DepthBrain, numbered_sentences, planted


def bench():
    return bench_script("bench_depth")


def test_a_fact_counts_only_when_cited_to_its_own_page():
    check = bench().correctly_cited
    sources = [
        Source(id=1, number=1, url="http://127.0.0.1:1/t0/article"),
        Source(id=2, number=2, url="http://127.0.0.1:1/news/x"),
    ]
    assert check("The Zeta index is 7301 [1].", sources, "7301", "/t0/article")
    assert not check("The Zeta index is 7301 [2].", sources, "7301", "/t0/article")
    assert not check("The Zeta index is 7301.", sources, "7301", "/t0/article")


def test_the_world_plants_each_kind_of_fact():
    facts = planted(2)
    assert [f.kind for f in facts] == ["body", "two_hop", "body", "two_hop", "mcp"]
    assert numbered_sentences("No figure here. The index is 7301. Done.") == ["The index is 7301."]
    assert (
        DepthBrain(2)
        .on_TaskPlan(None)["subtasks"][1]["description"]
        .startswith("What is measured about Veltrane")
    )


def test_one_topic_end_to_end_through_the_real_clients(tmp_path, monkeypatch):
    module = bench()
    names = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TAVILY_API_BASE_URL", "TAVILY_API_KEY")
    for name in (*names, "DEEP_RESEARCH_MODEL", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, "")  # one_run sets them: restored after the test
    extra = module.configurations()["fixed + fetch_pages 3"]
    row = asyncio.run(module.one_run("fetch", extra, 1, tmp_path))
    assert row["body in prompt"] == "1/1" and row["body in report"] == "1/1"
    assert row["mcp in report"] == "1/1"
    assert row["page reads"] >= 1 and row["citation precision"] == 1.0
