"""A stand-in model's careful reading of what a prompt shows (no oracle): the weighing pass
(`EvidenceWeighing`) and a section writer that states the disagreements it is handed.

It reads the prompt as a real model would: the numbered items (`#n: ...`) under their source
lines (`[id] (date) title — url`), the question's entity, and, in a section prompt, the
"Where the sources disagree" lines. Two items of different sources disagree when they say the
same thing of the same entity with a different figure; the newer one (the source's date, else a
year in its text) is current. An item whose subject is a near-miss of the question's entity (the
entity's name with something added, `zstd-lite` for `zstd`) is about another entity.
"""

from __future__ import annotations

import re

_SOURCE = re.compile(r"^\[(\d+)\] (?:\((\d{4}(?:-\d\d){0,2})\) )?.*? — \S+$")
_ITEM = re.compile(r"^#(\d+): (.*)$")
_NUMBER = re.compile(r"\d[\d,.]*")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_WORD = re.compile(r"[\w-]+")
_FRAME_STOP = {"the", "a", "an", "of", "at", "in", "on", "is", "are", "was", "per", "and", "to"}


def items(user: str) -> list[tuple[int, int, str, str]]:
    """(item number, source id, source date, text) of every numbered item in the prompt."""
    found, source, date = [], 0, ""
    for line in user.splitlines():
        if match := _SOURCE.match(line):
            source, date = int(match.group(1)), match.group(2) or ""
        elif (match := _ITEM.match(line)) and source:
            found.append((int(match.group(1)), source, date, match.group(2)))
    return found


def _claim(text: str) -> str:
    """The claim of an item, without what a lead-in (`Release notes, May 2024:`) says."""
    return text.split(": ", 1)[-1] if ": " in text[:60] else text


def subject(text: str) -> str:
    """The item's subject: its first word (`zstd`, `zstd-lite`)."""
    words = _WORD.findall(_claim(text))
    return words[0].lower() if words else ""


def frame(text: str) -> str:
    """What an item says with its figures and dates taken out: two items with one frame and
    different figures say the same thing differently."""
    words = [
        w.lower()
        for w in _WORD.findall(_NUMBER.sub(" ", _claim(text)))
        if w.lower() not in _FRAME_STOP
    ]
    return " ".join(words)


def entity(question: str, subjects: set[str]) -> str:
    """The entity the question names: the first of its words that the evidence speaks of."""
    words = [w.lower() for w in _WORD.findall(question)]
    return next((w for w in words if w in subjects), "")


def near_miss(name: str, asked: str) -> bool:
    """True for another entity whose name contains the asked one (`zstd-lite` for `zstd`)."""
    return bool(asked) and name != asked and name.startswith(asked)


def _when(date: str, text: str) -> str:
    """An item's date: its source's, else a year its text states."""
    years = _YEAR.findall(text)
    return date or (max(years) if years else "")


def weigh(user: str, question: str) -> dict:
    """An `EvidenceWeighing` answer from the items shown."""
    shown = items(user)
    asked = entity(question, {subject(text) for _, _, _, text in shown})
    set_aside = [
        {"item": n, "reason": "other_entity", "note": f"about {subject(text)}, not {asked}"}
        for n, _, _, text in shown
        if near_miss(subject(text), asked)
    ]
    aside = {entry["item"] for entry in set_aside}
    groups: dict[str, list[tuple[int, int, str, str]]] = {}
    for n, source, date, text in shown:
        if n not in aside and _NUMBER.search(_claim(text)):
            groups.setdefault(frame(text), []).append((n, source, date, text))
    disagreements = []
    for group in groups.values():
        figures = {tuple(_NUMBER.findall(_claim(t))) for _, _, _, t in group}
        if len({s for _, s, _, _ in group}) < 2 or len(figures) < 2:
            continue
        dated = sorted(group, key=lambda item: _when(item[2], item[3]))
        newest, older = dated[-1], dated[:-1]
        newer = all(_when(o[2], o[3]) < _when(newest[2], newest[3]) for o in older)
        disagreements.append(
            {
                "subject": _NUMBER.sub("…", _claim(group[0][3])).rstrip("."),
                "items": [n for n, _, _, _ in group],
                "current": newest[0] if newer else None,
                "why": f"its source is newer ({_when(newest[2], newest[3])})" if newer else "",
            }
        )
    return {"disagreements": disagreements, "set_aside": set_aside}


_CONFLICT = re.compile(
    r"^- (.*?) \(the sources disagree\): (.*?)\. Current: (?:\[(\d+)\](?:, (.*?))?|unknown.*?)\.$",
    re.M,
)
_SIDE = re.compile(r'\[(\d+)\](?: \(([^)]*)\))?: "(.*?)"')


def disagreement_sentences(user: str) -> tuple[list[str], set[str]]:
    """Sentences that state each disagreement a section prompt lists (every side cited, the
    current figure named and why), and the quoted texts they cover."""
    block = user.split("Where the sources disagree:\n", 1)
    if len(block) < 2:
        return [], set()
    sentences, covered = [], set()
    for match in _CONFLICT.finditer(block[1].split("\n\n", 1)[0]):
        sides = _SIDE.findall(match.group(2))
        covered |= {text for _, _, text in sides}
        stated = "; ".join(f"{_claim(text).rstrip('.')} [{n}]" for n, _, text in sides)
        current = match.group(3)
        lead = f"The sources disagree on {match.group(1)}: {stated}."
        if current:
            why = match.group(4) or "it is newer"
            lead += f" The figure of [{current}] is current: {why} [{current}]."
        sentences.append(lead)
    return sentences, covered
