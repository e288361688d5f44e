"""The depth world's pages, built as real sites build them.

Each page has a site menu in `<nav>`. The survey articles have a "Related pages" list of 24 links
in an `<aside>` placed before the article (page order puts it first, as a left sidebar written
before the content does); the methods pages have their sidebar in `<nav>`, as documentation
sites do, and list their 22 parts in the text before the results, as documentation pages do.
Either way the link that leads deeper stands past the 20th link of its page, in the article's
text, with anchor words that say where it leads. Dates come the ways the web gives them:
`<time datetime>`, `article:published_time` meta, JSON-LD `dateModified`, a `Last-Modified`
header, a date in the text, and the search provider's `published_date` on some hits; the 2021
page's footer says "© 2024", as old pages with a current copyright line do. Deep pages
(methods, annexes, the PDF) are in no search index: only links lead there.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import cache

from stand_ins.depth_world.facts import (
    DISAGREEMENTS,
    FIGURES,
    NEAR_MISSES,
    REPORT_RESULTS,
    STALE,
    SUBJECTS,
    TABLE_ROWS,
    Subject,
    annex_path,
    methods_path,
    pdf_path,
    report_path,
    result_sentence,
    sentence_of,
    survey_path,
    trial_path,
    trial_sentence,
    trial_sites,
)
from stand_ins.depth_world.prose import paragraphs
from stand_ins.documents import make_pdf

HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Page:
    """One page of the world: what is served, and what a search index knows of it."""

    path: str
    title: str
    body: bytes
    content_type: str = HTML
    searchable: bool = False
    lead: str = ""  # the opening paragraph: what a search snippet shows
    text: str = ""  # the words a search index matches
    published: str = ""  # the date the search provider gives ("" when it gives none)
    headers: dict[str, str] = field(default_factory=dict)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _links(items: list[tuple[str, str]]) -> str:
    return "".join(f'<li><a href="{_e(href)}">{_e(anchor)}</a></li>' for href, anchor in items)


SITE_MENU = [("/", "Home"), ("/materials", "Materials"), ("/labs", "Laboratories"),
             ("/about", "About"), ("/contact", "Contact")]  # fmt: skip


def document(
    title: str,
    article: str,
    *,
    related: list[tuple[str, str]] = (),
    menu: list[tuple[str, str]] = (),
    head: str = "",
    footer: str = "© 2025 Materials Survey Network",
) -> bytes:
    """A whole HTML page: the site menu, the related list (before the article), the article,
    a footer; `menu` adds a sidebar in `<nav>`, as documentation sites have."""
    aside = (
        f'<aside class="related"><h2>Related pages</h2><ul>{_links(list(related))}</ul></aside>'
        if related
        else ""
    )
    if menu:
        aside += f'<nav class="sidebar"><ul>{_links(list(menu))}</ul></nav>'
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}'
        f"</title>{head}<script>window.dataLayer=[];</script></head><body>"
        f"<header><nav><ul>{_links(SITE_MENU)}</ul></nav></header>{aside}"
        f"<main><article>{article}</article></main>"
        f'<footer><p>{_e(footer)}</p><a href="/privacy">Privacy</a> '
        f'<a href="/imprint">Imprint</a></footer></body></html>'
    )
    return page.encode()


def _published_meta(date: str) -> str:
    return f'<meta property="article:published_time" content="{date}T09:00:00Z">'


def _json_ld(published: str, modified: str) -> str:
    data = {"@context": "https://schema.org", "@type": "TechArticle",
            "datePublished": published, "dateModified": modified}  # fmt: skip
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def _p(texts: list[str]) -> str:
    return "".join(f"<p>{_e(t)}</p>" for t in texts)


DECOYS = (
    ("gallery", "Photo gallery"), ("history", "History of the material"),
    ("team", "Our team"), ("suppliers", "Suppliers"), ("faq", "Frequently asked questions"),
    ("glossary", "Glossary"), ("test-facilities", "Our test facilities"),
    ("measurement-glossary", "Measurement terms explained"),
    ("events/2019-open-day", "Open day 2019"), ("events/2023-workshop", "Workshop 2023"),
    ("news/new-furnace", "A new furnace for the lab"), ("news/award", "An award for the team"),
    ("careers", "Careers"), ("press", "Press kit"), ("newsletter", "Newsletter"),
    ("partners", "Partners"), ("standards", "Standards we follow"),
    ("sustainability", "Sustainability"), ("applications", "Applications"),
    ("case-studies", "Case studies"), ("safety", "Safety notes"),
)  # fmt: skip
METHOD_DECOYS = (
    ("calibration", "Calibration of the rigs"), ("sample-preparation", "Sample preparation"),
    ("annex-a", "Annex A"), ("annex-b", "Annex B"), ("rig-photos", "Photos of the rigs"),
    ("operators", "Operators"), ("logbooks", "Logbooks"), ("software", "Software used"),
    ("uncertainty", "Uncertainty budget"), ("reference-blocks", "Reference blocks"),
    ("history", "History of the method"), ("training", "Training of technicians"),
    ("room-conditions", "Room conditions"), ("grips", "Grips and fixtures"),
    ("specimen-drawings", "Specimen drawings"), ("waste", "Waste handling"),
    ("audit", "Audit reports"), ("contacts", "Contacts"), ("changes", "Changes to the method"),
    ("faq", "Questions about the method"), ("glossary", "Glossary of the method"),
    ("downloads", "Downloads"),
)  # fmt: skip


def _related(s: Subject) -> list[tuple[str, str]]:
    """A survey's sidebar: 21 pages of its site and the other materials' surveys (24 links)."""
    own = [(f"/{s.slug}/{slug}", anchor) for slug, anchor in DECOYS]
    others = [(survey_path(o), f"{o.name} survey") for o in SUBJECTS if o is not s]
    return own + others


def _method_related(s: Subject) -> list[tuple[str, str]]:
    return [(f"{methods_path(s)}/{slug}", anchor) for slug, anchor in METHOD_DECOYS]


def survey(s: Subject) -> Page:
    """The article search finds: figures past the snippet, a table, links in its text."""
    k = SUBJECTS.index(s)
    figures = FIGURES[s.name]
    lead = (
        f"The {s.name} has been studied by several laboratories; this survey gathers what they "
        f"measured and how."
    )
    quantity, figure, unit = figures["table"]
    columns = [(quantity.capitalize(), unit, figure)]
    columns += [(name, unit, values[k]) for name, unit, values in TABLE_ROWS]
    spread = ("2.9", "0.05", "0.3")  # the standard deviations: not asked for, not planted
    table = (  # properties across, units in the header, as data tables are laid out
        f"<table><caption>Table 2. Bench results for the {_e(s.name)}</caption><tr><th>Lot</th>"
        + "".join(f"<th>{_e(name)} ({_e(unit)})</th>" for name, unit, _ in columns)
        + "</tr><tr><td>Mean of 48 samples</td>"
        + "".join(f"<td>{_e(value)}</td>" for _, _, value in columns)
        + "</tr><tr><td>Standard deviation</td>"
        + "".join(f"<td>{value}</td>" for value in spread)
        + "</tr></table>"
    )
    further = (
        f'<p>The <a href="{methods_path(s)}">full measurement methods and results</a> are '
        f'published on a page of their own, and the <a href="{pdf_path(s)}">manufacturer\'s '
        f"datasheet (PDF)</a> lists the nominal values of the {_e(s.noun)}.</p>"
    )
    fill = paragraphs(k * 3, 14, s.name, s.noun)
    article = (
        f"<h1>{_e(s.name)}: a survey of measurements</h1>"
        f'<p>Published <time datetime="2025-02-11">11 February 2025</time></p>'
        f"<p>{_e(lead)}</p>{_p(fill[:5])}<h2>Bench tests</h2>"
        f"<p>{_e(fill[5])} {_e(sentence_of('body_a', s, *figures['body_a']))} "
        f"{_e(fill[6])}</p>{_p(fill[7:9])}<h2>Summary table</h2>{table}"
        f"<h2>Further reading</h2>{further}{_p(fill[9:13])}<h2>Conclusions</h2>"
        f"<p>{_e(sentence_of('body_b', s, *figures['body_b']))} {_e(fill[13])}</p>"
    )
    body = document(
        f"{s.name}: a survey of measurements",
        article,
        related=_related(s),
        head=_published_meta("2025-02-11"),
    )
    return Page(survey_path(s), f"{s.name}: a survey of measurements", body, searchable=True,
                lead=lead, text=_words(body))  # fmt: skip


CONDITIONS = (
    "The load was applied at a rate of 2 mm/min in every mechanical test.",
    "Each specimen was 120 mm long and conditioned at 23 °C before testing.",
    "The furnace of the thermal tests was held at 850 °C during the soak.",
)


def lab_report(s: Subject) -> Page:
    """A long test report search finds: ten results among test conditions and discussion,
    more measured figures than one page's quotes hold."""
    k = SUBJECTS.index(s)
    fill = paragraphs(k * 2 + 3, 12, s.name, s.noun)
    results = [
        result_sentence(n, s, quantity, values[k], unit)
        for n, (quantity, unit, values) in enumerate(REPORT_RESULTS)
    ]
    title = f"Kestrel Materials Laboratory: test report on the {s.name}"
    lead = f"This report sets out the tests the Kestrel laboratory ran on the {s.name} in 2025."
    results_html = "".join(
        f"<p>{_e(' '.join(results[n : n + 2]))} {_e(CONDITIONS[n // 4] if n % 4 == 0 else '')}"
        f" {_e(fill[6 + n // 2])}</p>"
        for n in range(0, len(results), 2)
    )
    article = (
        f"<h1>{_e(title)}</h1><p>{_e(lead)}</p><h2>Scope and methods</h2>{_p(fill[:6])}"
        f"<h2>Results</h2>{results_html}<h2>Discussion</h2>{_p(fill[11:])}"
    )
    body = document(title, article, head=_json_ld("2025-07-01", "2025-07-09"))
    return Page(report_path(s), title, body, searchable=True, lead=lead, text=_words(body))


def methods(s: Subject) -> Page:
    """Two links from search: the two-hop figure, and a link in its text to Annex C."""
    k = SUBJECTS.index(s)
    figures = FIGURES[s.name]
    fill = paragraphs(k * 3 + 5, 7, s.name, s.noun)
    title = f"Measurement methods for the {s.name}"
    contents = _links(_method_related(s))  # in the text, as documentation pages list parts
    article = (
        f"<h1>{_e(title)}</h1><p>This page sets out how the {_e(s.name)} was tested.</p>"
        f"<h2>In this chapter</h2><ul>{contents}</ul>{_p(fill[:4])}<h2>Results</h2>"
        f"<p>{_e(sentence_of('two_hop', s, *figures['two_hop']))}</p>"
        f'<p>The raw results of every specimen are listed in <a href="{annex_path(s)}">Annex C '
        f"(raw results)</a>; Annexes A and B describe the rigs.</p>{_p(fill[4:])}"
    )
    body = document(title, article, menu=_method_related(s)[:8])
    return Page(methods_path(s), title, body, text=_words(body))


def annex(s: Subject) -> Page:
    """Three links from search: the three-hop figure among the specimen records."""
    figures = FIGURES[s.name]
    title = f"Annex C: raw results for the {s.name}"
    rows = "".join(
        f"<tr><td>Specimen {n}</td><td>lot {1 + n % 3}</td><td>accepted</td></tr>"
        for n in range(101, 109)
    )
    article = (
        f"<h1>{_e(title)}</h1><p>Every specimen of the series is listed below.</p>"
        f"<table><tr><th>Specimen</th><th>Lot</th><th>Status</th></tr>{rows}</table>"
        f"<p>{_e(sentence_of('three_hop', s, *figures['three_hop']))}</p>"
    )
    body = document(title, article)
    return Page(annex_path(s), title, body, text=_words(body))


def datasheet(s: Subject) -> Page:
    """A real PDF linked from the survey: the figure on its second page."""
    figures = FIGURES[s.name]
    title = f"Datasheet: {s.name}"
    pages = [
        f"{title}\nIssued by the manufacturer in 2025.\nThis sheet gives nominal values for "
        f"design.\nValues are typical and not guaranteed.",
        f"Nominal values\n{sentence_of('pdf', s, *figures['pdf'])}\nFurther values are "
        f"available on request.",
    ]
    data = make_pdf(pages, title=title)
    return Page(pdf_path(s), title, data, content_type="application/pdf")


def trial(s: Subject, site: str, value: str, day: int) -> Page:
    """One of the spread's small pages: its figure in its first sentence, where the snippet
    shows it, on every other page; on the rest after a paragraph on the trial, as a snippet
    misses what it does not open with."""
    title = f"Round-robin trial at {site}: {s.name}"
    finding = trial_sentence(s, site, value)
    opening = f"The {site} laboratory took part in the 2025 round-robin trial of the {s.name}."
    lead, first = (finding, []) if day % 2 == 0 else (opening, [finding])
    date = f"2025-0{1 + day % 9}-{10 + day % 18:02d}"
    article = (
        f"<h1>{_e(title)}</h1><p>{_e(lead)}</p>{_p(paragraphs(day, 2, s.name, s.noun) + first)}"
        f'<p><time datetime="{date}">{date}</time></p>'
    )
    body = document(title, article)
    return Page(trial_path(s, site), title, body, searchable=True, lead=lead,
                text=_words(body), published=date)  # fmt: skip


def _words(body: bytes) -> str:
    """The visible words of a page, for the search index (crudely: tags out)."""
    text = re.sub(rb"<(script|style)[^>]*>.*?</\1>", b" ", body, flags=re.S)
    return " ".join(html.unescape(re.sub(rb"<[^>]+>", b" ", text).decode()).split())


def _simple(
    path: str,
    title: str,
    lead: str,
    rest: list[str],
    *,
    searchable: bool = True,
    head: str = "",
    footer: str = "© 2025 Materials Survey Network",
    published: str = "",
    headers: dict[str, str] | None = None,
    dated: str = "",
) -> Page:
    """A plain article: heading, lead paragraph (the snippet), more paragraphs."""
    time = f'<p>Last revised <time datetime="{dated}">{dated}</time></p>' if dated else ""
    article = f"<h1>{_e(title)}</h1><p>{_e(lead)}</p>{_p(rest)}{time}"
    body = document(title, article, head=head, footer=footer)
    return Page(path, title, body, searchable=searchable, lead=lead, text=_words(body),
                published=published, headers=headers or {})  # fmt: skip


# Each disagreeing source's title, opening ({q}uantity, {f}igure, {u}nit), filler and date.
DISAGREEING = (
    (
        ("Tensile tests of the Veltrane polymer at Northfield",
         "In Northfield's 2025 tests the Veltrane polymer had a mean {q} of {f} {u}.",
         2, {"dated": "2025-04-02"}),
        ("Veltrane polymer: the Polymer Review's verdict",
         "The Polymer Review measured a {q} of {f} {u} for the Veltrane polymer.",
         6, {"head": _published_meta("2025-05-20"), "published": "2025-05-20"}),
    ),
    (
        ("A cure study of the Zerapine resin",
         "In our study the {q} of the Zerapine resin was {f} {u}.",
         9, {"dated": "2025-03-08"}),
        ("Zerapine resin reviewed",
         "The {q} of the Zerapine resin is {f} {u}, according to the digest's own tests.",
         12, {"head": _published_meta("2025-06-17")}),
    ),
)  # fmt: skip


def disagreement_pages() -> list[Page]:
    """Two sources per figure that disagree, each in its own words, both dated 2025."""
    pages = []
    for (name, quantity, unit, *sides), voices in zip(DISAGREEMENTS, DISAGREEING, strict=True):
        noun = name.split()[-1]
        for (path, figure), (title, opening, start, dating) in zip(sides, voices, strict=True):
            lead = opening.format(q=quantity, f=figure, u=unit)
            pages.append(_simple(path, title, lead, paragraphs(start, 3, name, noun), **dating))
    return pages


def stale_pages() -> list[Page]:
    """A 2021 page whose figure a 2024 page replaces; the old one ranks first and says its
    figure in its snippet, the new one deeper in its text."""
    (quill, q_quantity, q_unit, (q_old, q_old_fig), (q_new, q_new_fig)), mort = STALE
    changes = [
        "Section 2 was renamed to match the wording of the other consortium documents.",
        "Typing errors in the tables of section 5 were corrected.",
        "The list of approved suppliers now has its own page.",
        "Creep tests are now run at 550 °C instead of the earlier test temperature.",
        "The drawing of the standard bar was redrawn without changing its dimensions.",
        "References to withdrawn standards were removed.",
        f"The {q_quantity} of the Quillon alloy is now {q_new_fig} {q_unit}.",
        "The glossary gained entries for terms used in the annexes.",
        "Contact addresses were brought up to date.",
    ]
    pages = [
        _simple(
            q_old,
            "Quillon alloy specification",
            f"The {q_quantity} of the Quillon alloy is {q_old_fig} {q_unit}, as set out in "
            f"this specification.",
            paragraphs(1, 3, quill, "alloy"),
            head=_json_ld("2019-05-02", "2021-03-14"),
            footer="© 2024 Quillon Consortium",
            headers={"Last-Modified": "Sun, 14 Mar 2021 10:00:00 GMT"},
            dated="2021-03-14",
        ),
        _simple(
            q_new,
            "Quillon alloy release notes, June 2024",
            "Revision 3 of the Quillon alloy specification brings the following changes.",
            changes,
            head=_published_meta("2024-06-04"),
            published="2024-06-04",
            footer="© 2024 Quillon Consortium",
        ),
    ]
    name, quantity, unit, (m_old, m_old_fig), (m_new, m_new_fig) = mort
    pages += [
        _simple(
            m_old, "Mortisk ceramic — handbook entry",
            f"The {quantity} of the Mortisk ceramic is {m_old_fig} {unit} at room temperature.",
            paragraphs(4, 3, name, "ceramic"), published="2021-09-30", dated="2021-09-30",
        ),
        _simple(
            m_new, "Mortisk ceramic datasheet update",
            "Updated March 2024. This update replaces figures of the earlier datasheet.",
            [*paragraphs(8, 2, name, "ceramic"),
             f"After the 2024 process change, the {quantity} of the Mortisk ceramic is "
             f"{m_new_fig} {unit}."],
            head=_json_ld("2024-03-19", "2024-03-19"),
            headers={"Last-Modified": "Tue, 19 Mar 2024 08:30:00 GMT"},
        ),
    ]  # fmt: skip
    return pages


def near_miss_pages() -> list[Page]:
    """A near-namesake's page per pair: its figures said of "it", as pages say them."""
    (_, q_near, q_path, q_figs), (_, v_near, v_path, v_figs) = NEAR_MISSES
    (q1, f1, u1), (q2, f2, u2) = q_figs
    (v1, g1, w1), (v2, g2, w2) = v_figs
    return [
        _simple(
            q_path, f"{q_near} — technical overview",
            f"{q_near} is a casting alloy sold for pump housings and valve bodies.",
            [f"Its {q1} is {f1} {u1}.", f"The grade's {q2} is {f2} {u2}.",
             *paragraphs(10, 2, "alloy", "alloy")],
        ),
        _simple(
            v_path, f"{v_near} polymer launched",
            f"The makers of {v_near} presented the new polymer grade at a trade fair.",
            [f"Its {v1} is {g1} {w1}.", f"{v2.capitalize()} is {g2} {w2}.",
             *paragraphs(3, 2, "polymer", "polymer")],
            head=_published_meta("2025-03-01"),
        ),
    ]  # fmt: skip


def other_pages() -> list[Page]:
    """Pages search finds that hold no planted figure: news, a directory, Chinese shop pages."""
    return [
        _simple("/news/alloy-market-2025", "Alloy market news, spring 2025",
                "Prices of speciality alloys rose again this spring, traders said.",
                ["The Quillon alloy was among the grades mentioned by buyers."],
                published="2025-04-14"),
        _simple("/news/polymer-roundup", "Polymer industry roundup",
                "A look at new polymer grades and the firms that make them.",
                ["The Veltrane polymer and its rivals were shown at two fairs."]),
        _simple("/news/ceramics-conference", "Ceramics conference report",
                "Talks on technical ceramics filled two days of the conference.",
                ["One session covered the Mortisk ceramic and its uses."]),
        _simple("/news/resin-suppliers", "Resin suppliers directory",
                "A directory of firms that sell casting and coating resins.",
                ["Distributors of the Zerapine resin are listed by region."]),
        _simple("/news/testing-standards", "Materials testing: standards and measurements",
                "How laboratories agree on the measurements they report.",
                ["Round-robin trials compare laboratories on the same material."]),
        _simple("/zh/zerapine-shop", "Zerapine 树脂 现货供应",
                "我们提供 Zerapine 树脂现货，量大从优，欢迎来电咨询。",
                ["本店不提供测试数据，如需数据请联系厂家。"]),
        _simple("/zh/zerapine-forum", "Zerapine 树脂 使用心得",
                "论坛用户分享 Zerapine 树脂的使用体验和施工技巧。",
                ["帖子里没有给出测量数据，只有一些使用感受。"]),
    ]  # fmt: skip


def decoys() -> list[Page]:
    """The pages the related lists point at: real pages with nothing planted on them."""
    pages = []
    for s in SUBJECTS:
        for href, anchor in _related(s)[: len(DECOYS)] + _method_related(s):
            pages.append(
                _simple(href, f"{anchor} — {s.name}", f"{anchor} of the {s.name} site.",
                        paragraphs(len(pages), 2, s.name, s.noun), searchable=False)
            )  # fmt: skip
    return pages


@cache
def world_pages() -> dict[str, Page]:
    """Every page of the world by path."""
    pages: list[Page] = []
    for k, s in enumerate(SUBJECTS):
        pages += [survey(s), lab_report(s), methods(s), annex(s), datasheet(s)]
        for n, (site, value) in enumerate(zip(trial_sites(s), s.trial_values, strict=True)):
            pages.append(trial(s, site, value, 8 * k + n))
    pages += disagreement_pages() + stale_pages() + near_miss_pages() + other_pages()
    pages += decoys()
    found: dict[str, Page] = {}
    for page in pages:
        if page.path in found:
            raise ValueError(f"two pages at {page.path}")
        found[page.path] = page
    return found
