"""Source filters and report length as a caller's options (web form, MCP): parsed from what a
person types, a bad domain refused with its field named, and the operator's own filters kept as
ceilings a caller may narrow but never widen."""

from __future__ import annotations

import asyncio

import pytest

from deep_research.service.admission import Admission, Operator
from deep_research.service.options import ResearchOptions, over_a_ceiling
from deep_research.settings import Settings
from deep_research.web.forms import FormErrors, checked_input, options_of


def operator(given: dict) -> Admission:
    """The admission of a remote door whose operator set `given`."""
    return Admission(Operator(given, remote=True))


def test_domains_typed_with_commas_or_lines_become_a_list():
    form = {"include_domains": "https://www.Nature.com/x\narxiv.org, ", "time_range": "week"}
    given = options_of(form).overrides()
    assert given["include_domains"] == ["nature.com", "arxiv.org"]
    assert given["time_range"] == "week"
    assert "exclude_domains" not in given  # an empty field keeps the server's
    assert options_of({"report_length": "long"}).overrides()["report_length"] == "long"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("exclude_domains", "ok.org\nnot a domain", "'not a domain' is not a domain name"),
        ("time_range", "decade", "'day', 'week', 'month' or 'year'"),
        ("report_length", "huge", "'brief', 'standard' or 'long'"),
    ],
)
def test_a_bad_option_is_reported_against_its_field(field, value, said):
    with pytest.raises(FormErrors) as refused:
        options_of({field: value})
    assert said in refused.value.errors[field]


def within(server: dict, **asked) -> str | None:
    """Why `asked` (on top of the server's settings) widens them, or None."""
    return over_a_ceiling(Settings(**server), Settings(**{**server, **asked}), set(asked))


def test_the_operators_filters_may_be_narrowed():
    server = {"include_domains": ["nature.com"], "exclude_domains": ["spam.com"]}
    assert within(server) is None
    assert within(server, include_domains=["news.nature.com"]) is None
    assert within(server, exclude_domains=["spam.com", "ads.org"]) is None
    assert within({"time_range": "month"}, time_range="week") is None
    assert within({}, include_domains=["example.com"], time_range="year") is None


def test_the_operators_filters_are_never_widened():
    server = {"include_domains": ["nature.com"], "exclude_domains": ["spam.com"]}
    assert "include_domains example.com is outside" in within(
        server, include_domains=["example.com"]
    )
    assert "(none: every domain)" in within(server, include_domains=[])
    assert "drops this server's spam.com" in within(server, exclude_domains=["ads.org"])
    assert "time_range year is wider" in within({"time_range": "month"}, time_range="year")


def test_the_web_form_shows_a_widened_filter_beside_its_field():
    form = {"question": "Compare zstd and xz", "include_domains": "example.com"}
    with pytest.raises(FormErrors) as refused:
        asyncio.run(checked_input(form, operator({"include_domains": ["nature.com"]})))
    said = refused.value.errors["include_domains"]
    assert said == "this server searches only nature.com: name those sites or their subdomains"


def test_every_new_option_is_a_caller_option():
    assert {"include_domains", "exclude_domains", "time_range", "report_length"} <= set(
        ResearchOptions.model_fields
    )
