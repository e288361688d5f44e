"""How the depth world's stand-in model reads what it is sent: sentences and figures, the names
a question asks about, the numbered sources and notes of a prompt, dates shown with a source.

This is the model's general reading skill, the same for any prompt; it knows nothing of the
world's pages beyond what a prompt shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w]|\.\d)")
UNITS = (
    "MPa m^0.5", "mPa s", "mm/year", "mm3/km", "mm2/s", "kg/m3", "kJ/m2", "kV/mm", "kV/cm",
    "W/mK", "J/gK", "ppm/K", "mm/min", "MPa", "GPa", "HV", "HB", "°C", "K", "%", "min", "h",
    "µm", "mm", "kg", "g", "N", "J", "W", "V", "cycles",
)  # fmt: skip
MEASURE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s?(" + "|".join(re.escape(u) for u in UNITS) + r")(?![\w])"
)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_VALUE_LINE = re.compile(r"\d[\d.,]*(?:\s?\S{1,12}){0,2}")  # a table cell: "212.6 GPa", "48"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)?|[\u4e00-\u9fff]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
ISO_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d-[01]\d(?:-[0-3]\d)?)(?!\d)")
_STOPWORD_TEXT = (
    "a an and are as at be by for from has have in is it its of on or the to was were what "
    "which who with how does do did this that these those about each every give say where "
    "any all their there they them our your his her not no than then so if"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
SOURCE_LINE = re.compile(r"^\[(\d+)\] (.*?) — (\S+)(.*)$", re.M)
NOTE_LINE = re.compile(r"^- (.+?)((?:\s*\[\d+\])+)\s*$", re.M)


def flat(text: str) -> str:
    return " ".join(text.split())


def figures(text: str) -> list[str]:
    """The numbers of `text`, in order."""
    return NUMBER.findall(text)


def measurements(text: str) -> list[tuple[str, str]]:
    """The (figure, unit) pairs of `text`: numbers that measure something."""
    return MEASURE.findall(text)


def sentences(text: str) -> list[str]:
    """The sentences of a text as it writes them (whitespace flattened); a table cell that is
    a bare value joins the label before it ("Elastic modulus 212.6 GPa")."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in (part.strip() for part in paragraph.split("\n")):
            if not line:
                continue
            if lines and _VALUE_LINE.fullmatch(line) and not lines[-1].endswith((".", ":")):
                lines[-1] = f"{lines[-1]} {line}"
            else:
                lines.append(line)
        for line in lines:
            found += [flat(part) for part in _SENTENCE_END.split(line) if part.strip()]
    return found


_HEADER = re.compile(r"^(.+?) \(([^()]+)\)$")


@dataclass(frozen=True)
class TableRow:
    """A table row as text shows it (label and values joined), and what each value is."""

    text: str
    label: str
    cells: tuple[tuple[str, str, str], ...]  # (column name, value, unit)


def table_rows(text: str) -> list[TableRow]:
    """The rows of tables laid out with properties across and units in the header ("Elastic
    modulus (GPa)"), read as a model reads them: each value under its column."""
    rows: list[TableRow] = []
    header: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.split("\n") if line.strip()]
        named = [_HEADER.match(line) for line in lines[1:]]
        if len(lines) > 2 and all(named):
            header = [(m.group(1), m.group(2)) for m in named if m]
            continue
        values = lines[1:]
        if header and len(values) == len(header) and all(NUMBER.fullmatch(v) for v in values):
            cells = tuple((name, v, unit) for (name, unit), v in zip(header, values, strict=True))
            rows.append(TableRow(flat(" ".join(lines)), lines[0], cells))
        elif header:
            header = []
    return rows


def stems(text: str) -> set[str]:
    """The content words of `text`, cut to five letters (how "measured" meets "measurements")."""
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in STOPWORDS}


def is_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def subjects(question: str) -> list[str]:
    """The things a question names: a capitalised name and the noun after it ("the Quillon
    alloy"), or a Latin name inside Chinese text with the word after it ("Zerapine 树脂")."""
    if is_cjk(question):
        found = re.findall(r"([A-Z][\w-]+ ?[\u4e00-\u9fff]{2})", question)
    else:
        found = re.findall(r"(?<![.?!]\s)(?<!^)\b(?:the )?([A-Z][\w-]+(?: [a-z]+)?)", question)
    names = []
    for name in found:
        name = name.strip()
        if name.lower().split()[0] in STOPWORDS or name in names:
            continue
        names.append(name)
    return names


def entity_named(text: str, name: str) -> bool:
    """True when `text` names `name` itself: "Quillon alloy" is named in "the Quillon alloy's"
    but not in "Quillon-S alloy"."""
    brand = re.escape(name.split()[0])
    return bool(re.search(rf"(?<![\w-]){brand}(?![\w-])", text))


@dataclass(frozen=True)
class SourceBlock:
    """One numbered source as a prompt lists it: id, title, address, text, a date if shown."""

    id: int
    title: str
    url: str
    text: str
    date: str = ""


def source_blocks(text: str) -> list[SourceBlock]:
    """The numbered sources of a prompt ("[3] Title — url" and the lines after it); a date is
    one written as ISO 8601 on the source's line or the line right after it."""
    matches = list(SOURCE_LINE.finditer(text))
    blocks = []
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        body = text[match.end() : end].split("\n</data>")[0].strip("\n")
        head = f"{match.group(2)} {match.group(4)} " + (body.split("\n", 1)[0] if body else "")
        dates = ISO_DATE.findall(head)
        blocks.append(
            SourceBlock(
                int(match.group(1)), match.group(2), match.group(3), body, max(dates, default="")
            )
        )
    return blocks


def section_of(text: str, label: str) -> str:
    """The fenced data that follows `label` in a prompt ("" when the label is absent)."""
    at = text.find(label)
    if at < 0:
        return ""
    rest = text[at + len(label) :]
    match = re.match(r"\s*<data>\n(.*?)\n</data>", rest, re.S)
    return match.group(1) if match else rest


def notes(text: str) -> list[tuple[str, list[int]]]:
    """Cited bullet points ("- claim [2][5]") as (claim, ids)."""
    return [
        (claim.strip(), [int(n) for n in re.findall(r"\d+", ids)])
        for claim, ids in NOTE_LINE.findall(text)
    ]
