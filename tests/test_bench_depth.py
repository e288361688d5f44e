"""The depth benchmark's world, stand-in model and measures (issue 36): each figure is planted
on one page only, the model acts only on what it is shown, and the report checks count a fact
only when its sentence cites the page that holds it (and never otherwise)."""

from __future__ import annotations

import asyncio
import json

import pytest
from bench_scripts import bench_script

from deep_research.nodes import prompts
from deep_research.state import ReadPage, SearchHit, Source, SubTask
from deep_research.tools.search.pages import page_passages, read_page
from deep_research.tools.toolbox import toolbox

from stand_ins.chat import ChatCall
from stand_ins.depth_world import acting, score
from stand_ins.depth_world.brain import WorldBrain, judge
from stand_ins.depth_world.facts import DISAGREEMENTS, figure_pattern, planted
from stand_ins.depth_world.site import world_pages

URL = "http://127.0.0.1:9"


def bench():
    return bench_script("bench_depth")


def fact(kind: str, token: str):
    return next(f for f in planted() if f.kind == kind and f.token == token)


def page_text(path: str) -> str:
    page = world_pages()[path]
    document = read_page(page.body, page.content_type, URL + path)
    return "\n\n".join(page_passages(document))


def test_each_figure_is_on_its_own_page_only_as_the_engine_reads_pages():
    texts = {path: page_text(path) for path in world_pages()}
    for planted_fact in planted():
        pattern = figure_pattern(planted_fact.token)
        holders = [path for path, text in texts.items() if pattern.search(text)]
        assert holders == [planted_fact.path], planted_fact
    assert world_pages()["/files/quillon-alloy-datasheet.pdf"].body.startswith(b"%PDF-")


def test_the_links_that_lead_deeper_come_after_the_twentieth():
    def links(path: str) -> list[str]:
        page = world_pages()[path]
        return [link.href for link in read_page(page.body, page.content_type, URL).links]

    survey = links("/quillon-alloy/survey")  # a related list in an <aside> before the text
    assert survey.index("/quillon-alloy/methods") >= 24
    assert survey.index("/files/quillon-alloy-datasheet.pdf") >= 24
    methods = links("/quillon-alloy/methods")  # a <nav> sidebar (dropped), parts in the text
    assert methods.index("/quillon-alloy/methods/annex-c") >= 20


# ---------------------------------------------------------------- the measures


def sources(*paths: str) -> list[Source]:
    return [Source(id=n, number=n, url=URL + p) for n, p in enumerate(paths, 1)]


def units_of(report: str, *paths: str) -> list[score.Unit]:
    return score.units(report, score.cited_paths(sources(*paths)))


def disagreement_said(a, b, report: str, *paths: str) -> bool:
    numbers = score.cited_paths(sources(*paths))
    return score.stated_disagreement(a, b, score.units(report, numbers), numbers)


def test_a_fact_counts_only_in_a_sentence_that_cites_its_own_page():
    hardness = fact("body", "587")
    report = (
        "# Title\n\n## Part\n\nThe Quillon alloy reached 587 HV [1]. Its yield is high [2].\n\n"
        "## Sources\n\n- [1] Survey — http://127.0.0.1:9/quillon-alloy/survey\n"
    )
    assert score.found(hardness, units_of(report, hardness.path, "/news/x"))
    wrong = report.replace("587 HV [1]. Its yield is high [2]", "587 HV [2]. It is hard [1]")
    assert not score.found(hardness, units_of(wrong, hardness.path, "/news/x"))
    absent = report.replace("587", "588")
    assert not score.found(hardness, units_of(absent, hardness.path))
    uncited = report.replace("587 HV [1]", "587 HV")
    assert not score.found(hardness, units_of(uncited, hardness.path))
    in_a_table = "## Part\n\n| Property | Value |\n| --- | --- |\n| Hardness | 587 HV [1] |\n"
    assert score.found(hardness, units_of(in_a_table, hardness.path))
    in_sources_only = "## Part\n\nNothing.\n\n## Sources\n\n1. [587 HV](http://x/) [1]\n"
    assert not score.found(hardness, units_of(in_sources_only, hardness.path))


def test_a_disagreement_counts_when_said_with_both_figures_cited_to_their_pages():
    _, _, _, (path_a, fig_a), (path_b, fig_b) = DISAGREEMENTS[0]
    a, b = fact("disagree", fig_a), fact("disagree", fig_b)
    said = f"The sources disagree: one measured {fig_a} MPa [1], the other {fig_b} MPa [2]."
    assert disagreement_said(a, b, said, path_a, path_b)
    two = f"One lab measured {fig_a} MPa [1]. However, the review found {fig_b} MPa [2]."
    assert disagreement_said(a, b, two, path_a, path_b)
    unsaid = f"One lab measured {fig_a} MPa [1]. The review found {fig_b} MPa [2]."
    assert not disagreement_said(a, b, unsaid, path_a, path_b)
    apart = f"One lab measured {fig_a} MPa [1].\n\nHowever, the review found {fig_b} MPa [2]."
    assert not disagreement_said(a, b, apart, path_a, path_b)
    swapped = said.replace("[1]", "[3]").replace("[2]", "[1]").replace("[3]", "[2]")
    assert not disagreement_said(a, b, swapped, path_a, path_b)


def test_a_stale_figure_is_current_unless_its_sentence_puts_it_in_the_past():
    old, new = fact("stale", "640"), fact("current", "705")
    as_now = "The maximum service temperature is 640 °C [1]."
    assert score.presented_as_current(old, new, 2024, units_of(as_now, old.path))
    for dated in (
        "In 2021 the maximum service temperature was given as 640 °C [1].",
        "The earlier figure of 640 °C [1] was replaced by 705 °C [2].",
        "The maximum service temperature is 705 °C [2]; the old specification said 640 °C [1].",
    ):
        assert not score.presented_as_current(old, new, 2024, units_of(dated, old.path, new.path))


def test_a_near_namesakes_figure_leaks_unless_the_namesake_is_named():
    near = fact("near_miss", "455")
    assert score.leaked(near, units_of("Its Vickers hardness is 455 HV [1].", near.path))
    named = "Quillon-S, a different grade, has a Vickers hardness of 455 HV [1]."
    assert not score.leaked(near, units_of(named, near.path))


# ---------------------------------------------------------------- the stand-in model


def worker_call(pages: list[ReadPage], hits: list[SearchHit], box=None, suggested=()) -> ChatCall:
    """A worker's decide request as the engine builds it, natively with tools."""
    subtask = SubTask(
        description="What has been measured about the Quillon alloy?",
        search_queries=["Quillon alloy measurements"],
        complexity="medium",
    )
    box = box or toolbox(search=True, pages=True, documents=False)
    messages = prompts.worker_tools(
        "Q?", subtask, prompts.tool_evidence(hits, pages), "2 searches, 3 page reads, 2 "
        "rounds (this one included)", 50_000, suggested=suggested,
    )  # fmt: skip
    body = {"tools": box.specs(), "tool_choice": "auto"}
    return ChatCall(None, "tools", messages[0].text, messages[1].text, body)


def test_the_worker_reads_only_what_it_was_shown_with_arguments_that_fit():
    survey = f"{URL}/quillon-alloy/survey"
    page = ReadPage(
        url=survey,
        title="Quillon alloy: a survey of measurements",
        links=[f"{URL}/quillon-alloy/gallery", f"{URL}/quillon-alloy/methods"],
    )
    hit = SearchHit(url=f"{URL}/news/x", title="Alloy market news", content="Prices rose.")
    call = worker_call([page], [hit])
    calls = WorldBrain().decide_tools(call)
    read = [args["url"] for name, args in calls if name == "read_page"]
    assert read and read[0] == f"{URL}/quillon-alloy/methods"  # the link that promises data
    assert set(read) <= {*(link.url for link in page.links), hit.url}
    schemas = acting.offered(call.body, call.system)
    for name, args in calls:
        assert name in schemas
        assert acting.fitting(schemas[name], args) == args


def test_the_worker_first_searches_what_its_prompt_suggests_then_its_own_wordings():
    call = worker_call([], [], suggested=["Quillon alloy measurements"])
    assert WorldBrain().decide_tools(call) == [
        ("web_search", {"queries": ["Quillon alloy measurements"]})
    ]
    (name, args), *_ = WorldBrain().decide_tools(worker_call([], []))
    assert name == "web_search" and "Quillon alloy measurements" not in args["queries"]


def test_the_planner_searches_english_for_a_latin_named_subject_only_when_asked_languages():
    def queries(system: str) -> list[str]:
        user = "Question: Zerapine 树脂有哪些测量数据？"
        plan = WorldBrain().on_TaskPlan(ChatCall("TaskPlan", "json_schema", system, user, {}))
        return plan["subtasks"][0]["search_queries"]

    asking = prompts.plan("Zerapine 树脂有哪些测量数据？", 4, language="zh-Hans")[0].text
    assert "Zerapine resin measurements" in queries(asking)
    assert "Zerapine resin measurements" not in queries("Plan at most 4 subtasks.")


def test_the_worker_calls_no_tool_it_is_not_offered():
    page = ReadPage(url=f"{URL}/a", title="Quillon alloy", links=[f"{URL}/quillon-alloy/data"])
    box = toolbox(search=False, pages=False, documents=False)
    calls = WorldBrain().decide_tools(worker_call([page], [], box))
    assert [name for name, _ in calls] == ["finish"]


def test_quotes_are_the_pages_own_sentences():
    text = page_text("/labs/kestrel/quillon-alloy-report")
    subtask = "Subtask: What has been measured about the Quillon alloy?"
    user = f"{subtask}\nPage text:\n<data>\n{text}\n</data>"
    call = ChatCall(
        "PageQuotes", "json_schema", "At most 8 quotes, the most important first.", user, {}
    )
    quotes = WorldBrain().on_PageQuotes(call)["quotes"]
    assert len(quotes) == 8
    flat = " ".join(text.split())
    assert all(q["text"] in flat for q in quotes)


def test_the_writer_says_sources_disagree_only_when_the_prompt_dates_or_marks_them():
    def section(dated: bool, marked: bool = False) -> str:
        date_a, date_b = (" (2021-03-14)", " (2024-06-04)") if dated else ("", "")
        mark = "\nThese disagree: 640 °C [3] and 705 °C [5].\n" if marked else ""
        user = (
            "Question: Q?\nReport: R\nSection: Quillon\nSection question: What was measured about"
            " the Quillon alloy?\nOther sections:\n(none)\n\nResearch notes:\n<data>\n"
            f"- x [3]{mark}\n</data>\n\nSources:\n<data>\n"
            f"[3] Spec — {URL}/old{date_a}\nThe maximum service temperature of the Quillon "
            f"alloy is 640 °C.\n\n[5] Notes — {URL}/new{date_b}\nThe maximum service "
            "temperature of the Quillon alloy is now 705 °C.\n</data>"
        )
        call = ChatCall(None, "prose", "You write one section of a research report.", user,
                        {"max_tokens": 2000})  # fmt: skip
        return WorldBrain().answer(call)

    old, new = fact("stale", "640"), fact("current", "705")
    plain = units_of(section(False), "", "", old.path, "", new.path)
    assert score.presented_as_current(old, new, 2024, plain)
    dated = units_of(section(True), "", "", old.path, "", new.path)
    assert not score.presented_as_current(old, new, 2024, dated)
    assert "705 °C, is current" in section(True)
    assert "disagree" in section(False, marked=True)


def test_the_judge_checks_figures():
    source = "The maximum service temperature of the Quillon alloy is 640 °C."
    assert judge("It is 640 °C [1].", source)[0] == "supported"
    assert judge("It is 705 °C [1].", source)[0] == "unsupported"
    assert judge("It is 640 °C, not 705 °C [1].", source)[0] == "partial"


# ---------------------------------------------------------------- end to end


def test_one_material_end_to_end_through_the_real_clients(tmp_path, monkeypatch):
    module = bench()
    names = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "TAVILY_API_BASE_URL", "TAVILY_API_KEY")
    for name in (*names, "DEEP_RESEARCH_MODEL", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, "")  # one_run sets them: restored after the test
    monkeypatch.delenv("DEEP_RESEARCH_WORKER_TOOLS")  # the shipped default: workers act
    question = "What has been measured about the Mortisk ceramic? Give each figure with its source."
    run = asyncio.run(module.one_run(question, {"max_iterations": 1}, tmp_path))
    assert run["unknown"] == []  # every contract the engine sent has a handler
    facts = [f for f in planted() if f.subject == "Mortisk ceramic"]
    row = module.measure(run, facts)
    found, total = map(int, row["body: in report, cited"].split("/"))
    assert 0 < found <= total
    assert row["citation precision"] == pytest.approx(1.0)
    assert json.dumps(row, default=str)
