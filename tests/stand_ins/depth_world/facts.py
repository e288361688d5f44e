"""The depth world's planted facts: what each asked-about material measures, and where it is said.

Four materials are asked about. Each has figures planted where only a worker that reads finds
them: in an article's body past its snippet, in a table cell, on a page two and three links
deep, in a linked PDF, and on eight small trial pages (the spread: 32 sources, one figure each,
in the snippet of every other one). Two figures are stated by two sources that disagree; two
have a stale (2021) page and a newer (2024) one; two materials have a near-namesake (Quillon-S,
Veltrane-X) whose figures must not be presented as theirs. Every figure is written once in the
whole world, so a figure in a report can be traced to the one page that holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("body", "table", "two_hop", "three_hop", "pdf", "spread")
"""Kinds of fact counted as found: in the report, cited to the page that holds it."""


@dataclass(frozen=True)
class Subject:
    """A material the question asks about."""

    name: str  # "Quillon alloy"
    noun: str  # "alloy"
    trial_quantity: str  # what its round-robin trials measured
    trial_unit: str
    trial_values: tuple[str, ...]  # one per trial site

    @property
    def slug(self) -> str:
        return self.name.lower().replace(" ", "-")

    @property
    def brand(self) -> str:
        return self.name.split()[0]


@dataclass(frozen=True)
class Fact:
    """One planted figure: its kind, the figure as written, the page (path) that holds it,
    the material it is about, the sentence that states it, and for pairs the pair's name."""

    kind: str  # a KINDS member, or disagree | stale | current | near_miss
    token: str
    path: str
    subject: str
    sentence: str
    pair: str = ""


SITES = (
    "Arlen", "Brisko", "Calder", "Dunmore", "Esk", "Fallow", "Garrick", "Hollin",
    "Ivel", "Jarrow", "Kettle", "Lorn", "Marsden", "Nairn", "Oxley", "Pellam",
    "Quorn", "Ravel", "Selby", "Tarsk", "Ulver", "Vale", "Wenlow", "Yarrow",
    "Ashby", "Beck", "Corran", "Delph", "Elstow", "Fenwick", "Glaze", "Harrow",
)  # fmt: skip

SUBJECTS = (
    Subject(
        "Quillon alloy", "alloy", "corrosion rate", "mm/year",
        ("0.0113", "0.0127", "0.0139", "0.0146", "0.0158", "0.0161", "0.0174", "0.0182"),
    ),
    Subject(
        "Veltrane polymer", "polymer", "creep strain", "%",
        ("1.214", "1.237", "1.259", "1.263", "1.281", "1.296", "1.308", "1.325"),
    ),
    Subject(
        "Mortisk ceramic", "ceramic", "wear rate", "mm3/km",
        ("2.41", "2.47", "2.53", "2.58", "2.64", "2.69", "2.76", "2.83"),
    ),
    Subject(
        "Zerapine resin", "resin", "bond strength", "MPa",
        ("23.41", "23.87", "24.12", "24.56", "24.93", "25.18", "25.64", "25.97"),
    ),
)  # fmt: skip

# Per material, the figure of each kind: (quantity, figure, unit).
FIGURES: dict[str, dict[str, tuple[str, str, str]]] = {
    "Quillon alloy": {
        "body_a": ("Vickers hardness", "587", "HV"),
        "body_b": ("yield strength", "1130", "MPa"),
        "table": ("elastic modulus", "212.6", "GPa"),
        "two_hop": ("fatigue limit", "498", "MPa"),
        "three_hop": ("fracture toughness", "71.3", "MPa m^0.5"),
        "pdf": ("nominal density", "7712", "kg/m3"),
    },
    "Veltrane polymer": {
        "body_a": ("glass transition temperature", "148.5", "°C"),
        "body_b": ("elongation at break", "38.2", "%"),
        "table": ("flexural modulus", "3.47", "GPa"),
        "two_hop": ("water absorption", "0.62", "%"),
        "three_hop": ("notched impact strength", "6.87", "kJ/m2"),
        "pdf": ("nominal density", "1184", "kg/m3"),
    },
    "Mortisk ceramic": {
        "body_a": ("flexural strength", "386", "MPa"),
        "body_b": ("open porosity", "2.35", "%"),
        "table": ("Vickers hardness", "14.9", "GPa"),
        "two_hop": ("thermal shock resistance", "265", "K"),
        "three_hop": ("dielectric strength", "17.4", "kV/mm"),
        "pdf": ("nominal density", "3917", "kg/m3"),
    },
    "Zerapine resin": {
        "body_a": ("viscosity at 25 °C", "1375", "mPa s"),
        "body_b": ("heat deflection temperature", "121.4", "°C"),
        "table": ("linear shrinkage", "1.73", "%"),
        "two_hop": ("glass transition temperature", "138.6", "°C"),
        "three_hop": ("moisture uptake", "0.386", "%"),
        "pdf": ("nominal density", "1163", "kg/m3"),
    },
}

# The table rows besides FIGURES["table"]: (quantity, unit, figure per material).
TABLE_ROWS = (
    ("Thermal diffusivity", "mm2/s", ("4.07", "0.118", "9.64", "0.137")),
    ("Thermal expansion", "ppm/K", ("12.4", "71.8", "6.93", "58.6")),
)
# The lab report's results: (quantity, unit, figure per material), ten per report.
REPORT_RESULTS = (
    ("Brinell hardness", "HB", ("553", "27.4", "1318", "39.6")),
    ("compressive strength", "MPa", ("1462", "96.3", "2871", "142.7")),
    ("shear strength", "MPa", ("684", "58.9", "227", "41.3")),
    ("specific heat", "J/gK", ("0.471", "1.62", "0.783", "1.27")),
    ("breakdown field", "kV/cm", ("74.2", "311.9", "128.6", "263.5")),
    ("impact energy", "J", ("47.5", "2.93", "0.82", "1.47")),
    ("surface roughness after machining", "µm", ("0.43", "0.88", "0.27", "0.64")),
    ("creep rupture time at the test load", "h", ("3120", "418", "7705", "266")),
    ("dynamic modulus", "GPa", ("207.9", "3.12", "311.4", "4.38")),
    ("fatigue life at the reference stress", "cycles", ("218000", "56300", "94700", "31800")),
)

# Two sources that disagree on one figure: (material, quantity, unit, (path, figure) twice).
DISAGREEMENTS = (
    (
        "Veltrane polymer", "tensile strength", "MPa",
        ("/northfield-lab/veltrane-tensile-tests", "71.4"),
        ("/polymer-review/veltrane-polymer", "83.9"),
    ),
    (
        "Zerapine resin", "gel time", "min",
        ("/resin-lab/zerapine-cure-study", "37.5"),
        ("/coatings-digest/zerapine-resin-review", "44.2"),
    ),
)  # fmt: skip

# A stale (2021) page and a newer (2024) one: (material, quantity, unit, old, new).
STALE = (
    (
        "Quillon alloy", "maximum service temperature", "°C",
        ("/quillon-consortium/specification", "640"),
        ("/quillon-consortium/release-notes-2024", "705"),
    ),
    (
        "Mortisk ceramic", "thermal conductivity", "W/mK",
        ("/ceramics-handbook/mortisk", "31.6"),
        ("/mortisk-works/datasheet-update-2024", "27.9"),
    ),
)  # fmt: skip

# A near-namesake's page and figures: (asked material, near name, path, ((quantity, fig, unit))).
NEAR_MISSES = (
    (
        "Quillon alloy", "Quillon-S", "/castings/quillon-s",
        (("Vickers hardness", "455", "HV"), ("yield strength", "860", "MPa")),
    ),
    (
        "Veltrane polymer", "Veltrane-X", "/plastics-weekly/veltrane-x",
        (("glass transition temperature", "162.3", "°C"), ("elongation at break", "21.7", "%")),
    ),
)  # fmt: skip


def subject(name: str) -> Subject:
    """The asked material called `name`."""
    return next(s for s in SUBJECTS if s.name == name)


def report_path(s: Subject) -> str:
    return f"/labs/kestrel/{s.slug}-report"


def survey_path(s: Subject) -> str:
    return f"/{s.slug}/survey"


def methods_path(s: Subject) -> str:
    return f"/{s.slug}/methods"


def annex_path(s: Subject) -> str:
    return f"/{s.slug}/methods/annex-c"


def pdf_path(s: Subject) -> str:
    return f"/files/{s.slug}-datasheet.pdf"


def trial_path(s: Subject, site: str) -> str:
    return f"/trials/{site.lower()}/{s.slug}"


def trial_sites(s: Subject) -> tuple[str, ...]:
    """The eight sites whose trial pages report on `s`."""
    start = 8 * SUBJECTS.index(s)
    return SITES[start : start + 8]


def sentence_of(kind: str, s: Subject, quantity: str, figure: str, unit: str) -> str:
    """How the page that holds a figure words it (each kind in its own voice)."""
    return {
        "body_a": f"In the bench tests the {s.name} reached a {quantity} of {figure} {unit}.",
        "body_b": f"Measured in 2025, the {quantity} of the {s.name} is {figure} {unit}.",
        "table": f"{quantity.capitalize()} {figure} {unit}",
        "two_hop": f"Under the standard method, the {quantity} of the {s.name} is {figure} {unit}.",
        "three_hop": f"Annex C records a {quantity} of {figure} {unit} for the {s.name}.",
        "pdf": f"The {quantity} of the {s.name} is {figure} {unit}.",
    }[kind]


def planted(subjects: tuple[Subject, ...] = SUBJECTS) -> list[Fact]:
    """Every planted figure about `subjects` (and their disagreements, stale pages, namesakes)."""
    names = {s.name for s in subjects}
    facts: list[Fact] = []
    for s in subjects:
        figures = FIGURES[s.name]
        homes = {
            "body_a": survey_path(s),
            "body_b": survey_path(s),
            "table": survey_path(s),
            "two_hop": methods_path(s),
            "three_hop": annex_path(s),
            "pdf": pdf_path(s),
        }
        for key, home in homes.items():
            quantity, figure, unit = figures[key]
            kind = "body" if key.startswith("body") else key
            facts.append(Fact(kind, figure, home, s.name, sentence_of(key, s, *figures[key])))
        k = SUBJECTS.index(s)
        for quantity, unit, values in TABLE_ROWS:
            sentence = f"{quantity} {values[k]} {unit}"
            facts.append(Fact("table", values[k], survey_path(s), s.name, sentence))
        for n, (quantity, unit, values) in enumerate(REPORT_RESULTS):
            sentence = result_sentence(n, s, quantity, values[k], unit)
            facts.append(Fact("body", values[k], report_path(s), s.name, sentence))
        for site, value in zip(trial_sites(s), s.trial_values, strict=True):
            sentence = trial_sentence(s, site, value)
            facts.append(Fact("spread", value, trial_path(s, site), s.name, sentence))
    for name, quantity, _unit, *sides in DISAGREEMENTS:
        if name in names:
            for path, figure in sides:
                facts.append(Fact("disagree", figure, path, name, quantity, pair=quantity))
    for name, quantity, _unit, (old, old_figure), (new, new_figure) in STALE:
        if name in names:
            facts.append(Fact("stale", old_figure, old, name, quantity, pair=quantity))
            facts.append(Fact("current", new_figure, new, name, quantity, pair=quantity))
    for name, near, path, figures in NEAR_MISSES:
        if name in names:
            for quantity, figure, _unit in figures:
                facts.append(Fact("near_miss", figure, path, near, quantity, pair=near))
    return facts


def result_sentence(n: int, s: Subject, quantity: str, figure: str, unit: str) -> str:
    """A lab report's result, in one of the three ways reports word them."""
    forms = (
        f"The {s.name} showed a {quantity} of {figure} {unit}.",
        f"We measured a {quantity} of {figure} {unit} for the {s.name}.",
        f"Its {quantity} came to {figure} {unit}.",
    )
    return forms[n % 3]


def trial_sentence(s: Subject, site: str, value: str) -> str:
    """How a trial page states its figure."""
    return (
        f"At the {site} laboratory, the 2025 round-robin trial measured a {s.trial_quantity} "
        f"of {value} {s.trial_unit} for the {s.name}."
    )


def figure_pattern(token: str) -> re.Pattern[str]:
    """A figure as a whole number in text: 587 matches "587 HV", not "1587" or "5.87"."""
    return re.compile(rf"(?<![\w.]){re.escape(token)}(?![\w]|\.\d)")
