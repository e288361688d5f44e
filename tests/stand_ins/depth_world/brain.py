"""The depth world's stand-in model: kind to nobody, faithful to what each prompt shows it.

It answers every contract the engine sends, one small handler per contract (`on_<Schema>` for
structured replies, `write_<kind>` for prose), and records any contract it has no handler for in
`unknown` (the bench reports them): add a handler when the engine gains a contract. Its rules:

- It knows the world only through its prompts. It plans one subtask per thing the question
  names, in the question's language.
- As a worker it calls only the tools a request offers, with arguments that fit their schemas,
  and reads only addresses it was shown (`acting`).
- Asked for quotes, it copies the page's own sentences (those with a figure that bear on the
  subtask, measurements first), at most as many as asked.
- Writing, it writes every measured figure it is shown, each in the sentence that states it,
  cited to the id it was shown with, within the reply's token cap. Where a prompt shows two
  figures for the same quantity, it says the sources disagree (and which is current, by date)
  only when the prompt marks them as disagreeing or dates both sources; otherwise it writes
  each where it stands. A figure said of "it" on a page about a near namesake is written as
  the page says it: nothing tells it the page is about another product.
- Weighing the evidence (`EvidenceWeighing`), it calls two items rivals by the rule it writes
  by (reading three-letter quantity words too, as in "gel time"), names the newer one current
  when both are dated (a year in a title or text counts) or when only one is and says it revises
  ("now", "updated", "release notes"), and sets aside an item whose source's title names a near
  namesake of an asked subject and not the subject.
- Reviewing, it names by number the unused evidence that states a measured figure of an asked
  subject (`omitted`) and copies the report's sentences that cite only a namesake's pages
  (`other_entity`).
- As a judge it checks figures: a statement is supported when its source states every figure
  of it, partial when some, unsupported when none (wording when it has no figure).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stand_ins.chat import ChatCall
from stand_ins.depth_world import acting
from stand_ins.depth_world.reading import (
    STOPWORDS,
    entity_named,
    figures,
    is_cjk,
    measurements,
    notes,
    section_of,
    sentences,
    source_blocks,
    stems,
    subjects,
    table_rows,
)

DIFFER_WORDS = ("disagree", "differ", "conflict", "inconsistent", "不一致", "分歧")
GLOSSARY = {"树脂": "resin", "合金": "alloy", "聚合物": "polymer", "陶瓷": "ceramic"}


def reply_cap(body: dict) -> int:
    """The reply's token cap as the request sets it (a real model cannot write past it)."""
    return int(body.get("max_completion_tokens") or body.get("max_tokens") or 4000)


def within(parts: list[str], cap: int, joiner: str = "\n") -> list[str]:
    """As many of `parts` as fit in `cap` tokens (4 characters a token), in order."""
    kept, used = [], 0
    for part in parts:
        cost = (len(part) + len(joiner)) // 4 + 1
        if used + cost > cap * 0.9:
            break
        kept.append(part)
        used += cost
    return kept


def english_name(name: str) -> str:
    """A subject's name in English, for a model that knows the words ("Zerapine 树脂")."""
    for word, english in GLOSSARY.items():
        name = name.replace(word, f" {english}")
    return " ".join(name.split())


@dataclass(frozen=True)
class Item:
    """A figure to write: the sentence stating it, the ids it cites, their dates and titles."""

    sentence: str
    ids: tuple[int, ...]
    dates: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()

    def names(self, subject: str) -> bool:
        """Its sentence or its sources' titles name `subject` itself (not a namesake)."""
        return entity_named(" ".join((self.sentence, *self.titles)), subject)

    @property
    def measured(self) -> list[tuple[str, str]]:
        return measurements(self.sentence)


def same_quantity(a: Item, b: Item, names: list[str], shortest: int = 4) -> bool:
    """Two figures of one quantity: the same unit, other figures, and the same quantity words
    (two words in a row that both sentences share, names and the asked subjects' words aside:
    "tensile strength" is one quantity, "yield strength" another). With `shortest` 3, words of
    three letters count too ("gel time"), common words aside."""
    if not a.measured or not b.measured or a.measured[0][1] != b.measured[0][1]:
        return False
    if {f for f, _ in a.measured} & {f for f, _ in b.measured}:
        return False
    asked = {w.lower() for name in names for w in name.split()}
    common = STOPWORDS if shortest < 4 else frozenset()

    def pairs(text: str) -> set[tuple[str, str]]:
        words = re.findall(rf"(?<![\w'-])[a-z]{{{shortest},}}(?![\w-])", text)  # names: capitals
        return set(itertools.pairwise(w for w in words if w not in asked and w not in common))

    return bool(pairs(a.sentence) & pairs(b.sentence))


def rival(items: list[Item], n: int, subjects_asked: list[str], shortest: int = 4) -> int | None:
    """The one other item that gives another figure for item `n`'s quantity, about the same
    asked subject; None when there is none, or more than one (then the figures are a series,
    such as one figure per laboratory of a trial, not a disagreement)."""
    same = [
        m
        for m in range(len(items))
        if m != n and same_quantity(items[n], items[m], subjects_asked, shortest)
    ]
    if len(same) != 1:
        return None
    pair = (items[n], items[same[0]])
    about = [name for name in subjects_asked if all(item.names(name) for item in pair)]
    return same[0] if about or not subjects_asked else None


ITEM_LINE = re.compile(r"^#(\d+): (.*)$", re.M)
UNUSED_LINE = re.compile(r"^#(\d+) \[\d+\](?: \([^)]*\))?: (.*)$", re.M)
YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?:-[01]\d(?:-[0-3]\d)?)?(?!\d)")
REVISES = re.compile(r"\b(?:now|updated?|revision|revised|replaces|release notes)\b", re.I)


def marked_rival(call: ChatCall, items: list[Item], n: int) -> int | None:
    """The item whose measurement (figure and unit, the same unit as item `n`'s) a prompt lists
    on one line with item `n`'s as disagreeing."""
    if not items[n].measured:
        return None
    mine = items[n].measured[0]
    for line in call.user.splitlines():
        listed = measurements(line)
        if "disagree" not in line.lower() or mine not in listed:
            continue
        for m, other in enumerate(items):
            theirs = other.measured[0] if other.measured else None
            if m != n and theirs and theirs != mine and theirs[1] == mine[1] and theirs in listed:
                return m
    return None


def acted_on(current: str, call: ChatCall) -> str:
    """A section's text once what the review found is acted on, as a careful model would: a
    statement about another entity is removed, and so is a sentence giving as settled a figure
    of a quantity the sources disagree on (the section named states the disagreement)."""
    found = section_of(call.user, "The review found:\n")
    remove = [
        set(figures(re.sub(r"\[\d+\]", "", statement)))
        for statement in re.findall(r"remove it, or say whose it is\): (.*)$", found, re.M)
    ]
    subjects_of = re.findall(r"^- The sources disagree on (.*?); the section", found, re.M)
    asked = stems(" ".join(subjects(call.question)))  # the materials' names are no quantity
    disputed = [stems(subject) - asked for subject in subjects_of]
    kept_lines = []
    for line in current.split("\n"):
        if line.startswith("#") or not line.strip():
            kept_lines.append(line)
            continue
        kept = []
        for sentence in sentences(line):
            plain = re.sub(r"\[\d+\]", "", sentence)
            said = set(figures(plain))
            about_other = any(said and said <= figs for figs in remove)
            settled = (
                measurements(plain)
                and "disagree" not in plain.lower()
                and any(len(stems(plain) & words) >= 2 for words in disputed)
            )
            if not (about_other or settled):
                kept.append(sentence)
        if kept:
            kept_lines.append(" ".join(kept))
    return "\n".join(kept_lines)


def current_named(call: ChatCall, item: Item) -> int | None:
    """The source id a prompt names as current ("Current: [7]") on the line that lists `item`'s
    figure as disagreeing, or None."""
    figure = item.measured[0][0] if item.measured else ""
    for line in call.user.splitlines():
        if figure and figure in figures(line) and "disagree" in line.lower():
            named = re.search(r"Current: \[(\d+)\]", line)
            return int(named.group(1)) if named else None
    return None


def namesake_in(text: str, name: str) -> str:
    """The near namesake of `name` that `text` names ("Quillon-S" for the Quillon alloy), or ""."""
    match = re.search(rf"(?<![\w-]){re.escape(name.split()[0])}-[\w]+", text)
    return match.group(0) if match else ""


def quantity_words(a: Item, b: Item, names: list[str]) -> str:
    """What two rival figures measure: the words both sentences share around the figure."""
    asked = {w.lower() for name in names for w in name.split()}
    words_a = re.findall(r"(?<![\w'-])[a-z]{4,}(?![\w-])", a.sentence)
    words_b = set(re.findall(r"(?<![\w'-])[a-z]{4,}(?![\w-])", b.sentence))
    shared = [w for w in words_a if w in words_b and w not in asked]
    about = next((n for n in names if a.names(n)), "")
    return " ".join(dict.fromkeys(shared)) + (f" of the {about}" if about else "")


@dataclass
class WorldBrain:
    """Deterministic, prompt-driven answers for every contract (see the module's rules)."""

    calls: Counter = field(default_factory=Counter)
    unknown: list[str] = field(default_factory=list)

    # ------------------------------------------------------------ routing

    def answer(self, call: ChatCall) -> Any:
        """A structured reply by its schema name, or prose by what the instructions ask."""
        if call.contract is None:
            self.calls["prose"] += 1
            return self.on_prose(call)
        self.calls[call.contract] += 1
        handler = getattr(self, f"on_{call.contract}", None)
        if handler is None:
            self.unknown.append(call.contract)
            return {}
        return handler(call)

    def decide_tools(self, call: ChatCall) -> list[tuple[str, dict]] | str:
        """A worker's round of tool calls."""
        self.calls["tools"] += 1
        return acting.decide(call.body, call.system, call.user, call.question)

    # ------------------------------------------------------------ planning

    def on_TaskPlan(self, call: ChatCall) -> dict:
        question = call.question
        most = int(re.search(r"at most (\d+) subtasks", call.system or call.user).group(1))
        comparing = re.search(
            r"disagree|out of date|current|compare|differ|最新|比较|不一致", question
        )
        complexity = "medium" if comparing else "simple"
        cjk = is_cjk(question)
        sources_english = re.search(
            r"(sources|documents|pages)[^.\n]*\b(English|en)\b", call.system + call.user, re.I
        )
        # Asked for queries in the languages a subject's sources are in, a model knows that a
        # subject named in Latin letters in a Chinese question ("Zerapine 树脂") has sources in
        # English.
        asked = re.search(r"languages its best sources are written in", call.system + call.user)
        names = subjects(question) or [question]
        tasks = []
        for name in names[: most - bool(comparing)]:
            queries = [f"{name} 测量", f"{name} 性能"] if cjk else [
                f"{name} measurements", f"{name} properties"]  # fmt: skip
            latin_name = re.search(r"[A-Za-z]{3,}", name)
            if cjk and (sources_english or (asked and latin_name)):
                queries.append(f"{english_name(name)} measurements")
            description = (
                f"{name} 有哪些测量数据？请给出每个数值及其来源。"
                if cjk
                else f"What has been measured about the {name}? Give each figure with its source."
            )
            tasks.append({"description": description, "search_queries": queries,
                          "complexity": complexity})  # fmt: skip
        if comparing:  # the question's second ask: where sources differ or are out of date
            joined = "、".join(names) if cjk else ", the ".join(names)
            description = (
                f"{joined} 的哪些数值在不同来源之间不一致，或已被更新？请给出日期。"
                if cjk
                else f"Which measured figures of the {joined} differ between sources or have "
                "been revised? Give the dates."
            )
            queries = [f"{n} 最新数据" if cjk else f"{n} latest revision" for n in names][:4]
            tasks.append({"description": description, "search_queries": queries,
                          "complexity": complexity})  # fmt: skip
        return {
            "query_type": "breadth_first" if len(tasks) > 1 else "straightforward",
            "subtasks": tasks,
            "recommended_worker_count": len(tasks),
        }

    # ------------------------------------------------------------ worker

    def on_GapCheck(self, call: ChatCall) -> dict:
        evidence = source_blocks(section_of(call.user, "Evidence:\n"))
        measured = [b for b in evidence if measurements(b.text)]
        if len(measured) >= 3:
            return {"gaps": [], "next_queries": []}
        ran = json.loads(re.search(r"^Queries already run: (.*)$", call.user, re.M).group(1))
        most = int(re.search(r"at most (\d+) new", call.system or call.user).group(1))
        subtask = re.search(r"^Subtask: (.*)$", call.user, re.M).group(1)
        queries = acting.new_queries(subtask, call.question, ran, most)
        return {"gaps": ["measured figures"] if queries else [], "next_queries": queries}

    def on_PageQuotes(self, call: ChatCall) -> dict:
        subtask = re.search(r"^Subtask: (.*)$", call.user, re.M).group(1)
        most = int(re.search(r"At most (\d+) quotes", call.system or call.user).group(1))
        text = section_of(call.user, "Page text:\n")
        wanted = stems(subtask)
        scored = []
        for order, sentence in enumerate(sentences(text)):
            if not figures(sentence):
                continue
            score = len(stems(sentence) & wanted) + 2 * bool(measurements(sentence))
            if score:
                scored.append((-score, order, sentence))
        claims = {}
        name = (subjects(subtask) or ["material"])[0]
        for row in table_rows(text):  # a row's claim says what each of its values is
            claims[row.text] = (
                "; ".join(
                    f"{column} of the {name} ({row.label.lower()}): {value} {unit}"
                    for column, value, unit in row.cells
                )
                + "."
            )
            typical = 2 * bool(re.search(r"mean|average|typical|nominal", row.label, re.I))
            scored.append((-(2 + typical), len(scored), row.text))
        chosen = [s for _, _, s in sorted(scored)[:most]]
        return {"quotes": [{"text": s, "claim": claims.get(s, s)} for s in chosen]}

    def on_WorkerFindings(self, call: ChatCall) -> dict:
        subtask = re.search(r"^Subtask: (.*)$", call.user, re.M).group(1)
        blocks = source_blocks(section_of(call.user, "Evidence:\n"))
        seen: set[str] = set()
        findings = []
        for block in blocks:
            for sentence in self._figure_sentences(block.text, subtask):
                if sentence not in seen:
                    seen.add(sentence)
                    findings.append({"claim": sentence, "source_ids": [block.id]})
        cap = reply_cap(call.body)
        kept = within([json.dumps(f) for f in findings], cap - 100)
        findings = findings[: len(kept)]
        if not findings and blocks:
            claim = "The evidence gives no measured figure for this subtask."
            findings = [{"claim": claim, "source_ids": [blocks[0].id]}]
        return {
            "findings": findings,
            "summary": f"{len(findings)} figures were found in the evidence.",
            "gaps": [] if findings else ["measured figures"],
            "confidence": 0.7,
        }

    @staticmethod
    def _figure_sentences(text: str, about: str) -> list[str]:
        """The sentences of `text` that state a measured figure, or a figure on the subject."""
        wanted = stems(about)
        return [
            s
            for s in sentences(text)
            if measurements(s) or (figures(s) and len(stems(s) & wanted) >= 2)
        ]

    # ------------------------------------------------------------ weighing the evidence

    def on_EvidenceWeighing(self, call: ChatCall) -> dict:
        """The numbered items read as a careful model reads them: an item whose source names a
        near namesake of an asked subject (and not the subject itself) is about another entity;
        two items of different sources giving another figure for one quantity of an asked
        subject disagree, the newer current when both sources are dated."""
        asked = subjects(call.question)
        figures_of: list[tuple[int, Item]] = []
        revising: dict[int, bool] = {}  # an item whose source says it revises earlier figures
        set_aside = []
        for block in source_blocks(section_of(call.user, "Evidence:\n")):
            for number, text in ITEM_LINE.findall(block.text):
                context = f"{block.title} {text}"
                other = [n for n in asked if namesake_in(context, n)]
                if other and not any(entity_named(context, n) for n in asked):
                    note = f"about {namesake_in(context, other[0])}, not the {other[0]}"
                    set_aside.append({"item": int(number), "reason": "other_entity", "note": note})
                    continue
                when = block.date or max(YEAR.findall(f"{block.title} {text}"), default="")
                revises = bool(REVISES.search(f"{block.title} {text}"))
                for sentence in sentences(text):
                    if measurements(sentence):
                        item = Item(sentence, (block.id,), (when,), (block.title,))
                        figures_of.append((int(number), item))
                        revising[int(number)] = revises
        pool = [item for _, item in figures_of]
        disagreements, paired = [], set()
        for n, (number, item) in enumerate(figures_of):
            m = rival(pool, n, asked, shortest=3)  # weighing, it reads "gel time" as a quantity
            if m is None or pool[m].ids == item.ids or frozenset((n, m)) in paired:
                continue
            paired.add(frozenset((n, m)))
            other_number, other = figures_of[m]
            current, why = None, ""
            if item.dates[0] and other.dates[0] and item.dates[0] != other.dates[0]:
                newer = (number, item) if item.dates[0] > other.dates[0] else (other_number, other)
                current, why = newer[0], f"its source is newer ({newer[1].dates[0]})"
            elif bool(item.dates[0]) != bool(other.dates[0]):  # one dated: current if it revises
                dated = (number, item) if item.dates[0] else (other_number, other)
                if revising[dated[0]]:
                    current = dated[0]
                    why = f"its source ({dated[1].dates[0]}) says it revises earlier figures"
            disagreements.append(
                {
                    "subject": quantity_words(item, other, asked),
                    "items": [number, other_number],
                    "current": current,
                    "why": why,
                }
            )
        return {"disagreements": disagreements, "set_aside": set_aside}

    # ------------------------------------------------------------ outline and sections

    def on_ReportOutline(self, call: ChatCall) -> dict:
        question = call.question
        names = subjects(question) or [question]
        most = int(re.search(r"to (\d+) sections", call.system or call.user).group(1))
        listed = source_blocks(section_of(call.user, "\n\nSources:\n"))
        research = section_of(call.user, "Research notes:\n")
        cited_by: dict[int, str] = {}
        for part in re.split(r"^### ", research, flags=re.M)[1:]:
            heading = part.split("\n", 1)[0]
            owner = next((n for n in names if n.split()[0] in heading), None)
            for _, ids in notes(part):
                for i in ids:
                    if owner:
                        cited_by.setdefault(i, owner)
        groups: dict[str, list[int]] = {}
        for block in listed:
            owner = cited_by.get(block.id) or next(
                (n for n in names if entity_named(block.title, n)), "other"
            )
            groups.setdefault(owner, []).append(block.id)
        parts = [[n] for n in names if n in groups] + ([["other"]] if "other" in groups else [])
        while len(parts) > most:  # "other" joins the last part, then neighbours pair up
            if parts[-1] == ["other"]:
                parts[-2] += parts.pop()
                continue
            sizes = [len(groups[a[0]]) + len(groups[b[0]]) for a, b in itertools.pairwise(parts)]
            at = sizes.index(min(sizes))
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        cjk = is_cjk(question)
        sections = []
        for part in parts:
            named = [n for n in part if n != "other"] or ["other"]
            ids = [i for n in part for i in groups[n]]
            if named == ["other"]:
                title, asked = ("其他测量", "还有哪些测量数据？") if cjk else (
                    "Other measurements", "What else was measured?")  # fmt: skip
            else:
                joined = "、".join(named) if cjk else " and the ".join(named)
                title = f"{joined} 的测量数据" if cjk else f"Measurements of the {joined}"
                asked = (
                    f"{joined} 有哪些测量数据？"
                    if cjk
                    else f"What was measured about the {joined}?"
                )
            sections.append({"title": title, "question": asked, "source_ids": ids})
        return {"title": question, "sections": sections}

    def on_prose(self, call: ChatCall) -> str:
        instructions = call.system or call.user.split("\n\n", 1)[0]
        for marker, kind in (
            ("You write one section", "section"),
            ("You revise one section", "revision"),
            ("summary that opens", "summary"),
            ("the conclusion of a research report", "conclusion"),
        ):
            if marker in instructions:
                self.calls[f"prose:{kind}"] += 1
                return getattr(self, f"write_{kind}")(call)
        self.unknown.append(f"prose: {instructions[:80]}")
        return "No text."

    def _items(self, call: ChatCall, about: str) -> list[Item]:
        """The figures a writing prompt shows: its sources' sentences first, then its notes'."""
        blocks = {b.id: b for b in source_blocks(section_of(call.user, "\n\nSources:\n"))}
        items: list[Item] = []
        covered: set[str] = set()
        for block in blocks.values():
            for sentence in self._figure_sentences(block.text, about):
                if sentence not in covered:
                    covered.add(sentence)
                    items.append(Item(sentence, (block.id,), (block.date,), (block.title,)))
        asked = subjects(about)
        others = section_of(
            call.user, "Other sources (use what answers this section's question):\n"
        )
        for block in source_blocks(others):  # used when they answer the section's question
            for sentence in self._figure_sentences(block.text, about):
                item = Item(sentence, (block.id,), (block.date,), (block.title,))
                if sentence not in covered and any(item.names(n) for n in asked):
                    covered.add(sentence)
                    blocks[block.id] = block
                    items.append(item)
        said = {f for item in items for f in figures(item.sentence)}
        for claim, ids in notes(section_of(call.user, "notes:\n")):
            known = [blocks[i] for i in ids if i in blocks]
            if known and measurements(claim) and not set(figures(claim)) <= said:
                said |= set(figures(claim))
                ids, dates = tuple(b.id for b in known), tuple(b.date for b in known)
                items.append(Item(claim, ids, dates, tuple(b.title for b in known)))
        return items

    @staticmethod
    def _marked(call: ChatCall, a: Item, b: Item) -> bool:
        """The prompt marks two figures as disagreeing (a line with both and a word that says
        so), or dates both sources."""
        fig_a, fig_b = a.measured[0][0], b.measured[0][0]
        for line in call.user.splitlines():
            both = fig_a in figures(line) and fig_b in figures(line)
            if both and any(word in line.lower() for word in DIFFER_WORDS):
                return True
        return all(a.dates) and all(b.dates)

    def _written(self, call: ChatCall, items: list[Item], about: str) -> list[str]:
        """Each item as a cited sentence; two marked figures of one quantity as one sentence
        that says they disagree (and which is current, when dated)."""
        cjk = is_cjk(call.question)
        asked = subjects(about)
        used: set[int] = set()
        lines = []
        for n, item in enumerate(items):
            if n in used:
                continue
            other = rival(items, n, asked)
            if other is None:  # the prompt may say two figures disagree that it did not pair
                other = marked_rival(call, items, n)
            if other is None or other in used or not self._marked(call, item, items[other]):
                lines.append(self._cited(item.sentence, item.ids, cjk))
                continue
            used.add(other)
            alone = "each side in its own sentence" in (call.system or call.user)
            current = current_named(call, item)
            lines.append(self._disagreement(item, items[other], cjk, current, alone))
        return lines

    @staticmethod
    def _cited(sentence: str, ids: tuple[int, ...], cjk: bool) -> str:
        marks = "".join(f"[{i}]" for i in ids)
        body = sentence.rstrip(".。")
        return f"据来源记载：{body} {marks}。" if cjk else f"{body} {marks}."

    @staticmethod
    def _disagreement(
        a: Item, b: Item, cjk: bool, current: int | None = None, each_side_alone: bool = False
    ) -> str:
        """Both figures in one sentence, each cited, and which is current: by their dates, or
        as the prompt names it."""
        (fig_a, unit), (fig_b, _) = a.measured[0], b.measured[0]
        mark_a, mark_b = "".join(f"[{i}]" for i in a.ids), "".join(f"[{i}]" for i in b.ids)
        date_a, date_b = max(a.dates, default=""), max(b.dates, default="")
        newer = older = ""
        if date_a and date_b and date_a != date_b:
            newer, older = (fig_a, date_b) if date_a > date_b else (fig_b, date_a)
        elif current is not None:  # not both dated: the prompt says which one is current
            newer = fig_a if current in a.ids else fig_b
        if cjk and each_side_alone:
            if newer == fig_a:
                (fig_a, mark_a), (fig_b, mark_b) = (fig_b, mark_b), (fig_a, mark_a)
            first = "较早的来源记载为" if newer else "一处来源记载为"
            text = (
                f"{first} {fig_a} {unit} {mark_a}。来源不一致：另一处记载为 {fig_b} {unit} {mark_b}"
            )
            return text + ("，这一较新的数值为现行数值。" if newer else "。")
        if cjk:
            text = f"来源不一致：一处为 {fig_a} {unit} {mark_a}，另一处为 {fig_b} {unit} {mark_b}"
            if newer:
                text += f"；较新的数值 {newer} {unit} 为现行数值"
            return text + "。"
        if each_side_alone:  # the instructions ask for each side in its own sentence
            if newer == fig_a:
                (a, mark_a), (b, mark_b) = (b, mark_b), (a, mark_a)
            lead = "An earlier source gives" if newer else "One source gives"
            text = f"{lead}: {a.sentence.rstrip('.')} {mark_a}. The sources disagree: "
            text += f"{b.sentence.rstrip('.')} {mark_b}"
            return text + (", and this newer figure is current." if newer else ".")
        text = (
            f"The sources disagree: {a.sentence.rstrip('.')} {mark_a}, whereas "
            f"{b.sentence.rstrip('.')} {mark_b}"
        )
        if newer:
            text += f"; the newer figure, {newer} {unit}, is current"
            text += f"; the earlier dates from {older}" if older else "; the other is earlier"
        return text + "."

    def write_section(self, call: ChatCall) -> str:
        title = re.search(r"^Section: (.*)$", call.user, re.M).group(1)
        about = re.search(r"^Section question: (.*)$", call.user, re.M).group(1)
        lines = self._written(call, self._items(call, f"{about} {call.question}"), about)
        head = f"## {title}\n\n"
        kept = within(lines, reply_cap(call.body) - len(head) // 4)
        if not kept:
            return head + ("证据中没有测量数据。" if is_cjk(call.question) else
                           "The evidence gives no measured figure for this part.")  # fmt: skip
        paragraphs = [" ".join(kept[n : n + 3]) for n in range(0, len(kept), 3)]
        return head + "\n\n".join(paragraphs)

    def write_revision(self, call: ChatCall) -> str:
        current = acted_on(section_of(call.user, "Current section:\n"), call)
        title = re.search(r"^Section: (.*)$", call.user, re.M).group(1)
        about = re.search(r"^Section question: (.*)$", call.user, re.M).group(1)
        said = set(figures(current))
        new = [
            line
            for line in self._written(call, self._items(call, f"{about} {call.question}"), about)
            if not set(figures(re.sub(r"\[\d+\]", "", line))) <= said
        ]
        cap = reply_cap(call.body) - len(current) // 4
        added = within(new, cap)
        body = current if current.startswith("## ") else f"## {title}\n\n{current}"
        return body + ("\n\n" + " ".join(added) if added else "")

    def write_summary(self, call: ChatCall) -> str:
        body = section_of(call.user, "Sections:\n")
        firsts = []
        for part in re.split(r"^## ", body, flags=re.M)[1:]:
            text = part.split("\n", 1)[-1]
            cited = [s for s in sentences(text) if re.search(r"\[\d+\]", s) and figures(s)]
            if cited:
                firsts.append(cited[0])
        heading = "## 摘要" if is_cjk(call.question) else "## Summary"
        kept = within(firsts, reply_cap(call.body) - 10, " ")
        return f"{heading}\n\n{' '.join(kept)}"

    def write_conclusion(self, call: ChatCall) -> str:
        if is_cjk(call.question):
            return "## 结论\n\n以上各部分列出了找到的测量数据；未找到的数据仍有待研究。"
        return (
            "## Conclusion\n\nThe sections above give the measured figures that were found; "
            "what was not found remains open."
        )

    # ------------------------------------------------------------ review

    def on_QualityAssessment(self, call: ChatCall) -> dict:
        report = section_of(call.user, "Report:\n")
        names = subjects(call.question) or [call.question]
        cited = {f for line in report.splitlines() if re.search(r"\[\d+\]", line)
                 for f in figures(re.sub(r"\[\d+\]", "", line))}  # fmt: skip
        sources = set(re.findall(r"\[(\d+)\]", report))
        covered = [n for n in names if n.split()[0] in report]
        weak = "do not seem to state them" in call.user
        dimensions = {
            "completeness": round(100 * len(covered) / len(names)),
            "accuracy": 70 if weak else 85,
            "depth": min(95, 40 + 2 * len(cited)),
            "structure": 80 if report.count("\n## ") >= 3 else 60,
            "readability": 75,
            "source_quality": min(90, 40 + 3 * len(sources)),
        }
        omitted = [  # unused evidence with a measured figure of an asked subject
            int(number)
            for number, text in UNUSED_LINE.findall(section_of(call.user, "Unused evidence"))
            if measurements(text) and any(entity_named(text, n) for n in names)
        ]
        if omitted:
            dimensions["completeness"] = max(0, dimensions["completeness"] - 2 * len(omitted))
        other_entity = self._about_namesakes(call.user, report, names)
        if other_entity:
            dimensions["accuracy"] = max(0, dimensions["accuracy"] - 10 * len(other_entity))
        score = round(sum(dimensions.values()) / len(dimensions))
        issues = [f"Nothing on the {n}." for n in names if n not in covered]
        if omitted:
            issues.append(f"{len(omitted)} gathered figures of the asked materials are unused.")
        if dimensions["depth"] < 80:
            issues.append(f"Only {len(cited)} measured figures are cited.")
        return {
            "score": score,
            "dimensions": dimensions,
            "issues": issues or ["Some figures could be checked against more sources."],
            "another_round_worthwhile": score < 85,
            "omitted": omitted,
            "other_entity": other_entity,
        }

    @staticmethod
    def _about_namesakes(user: str, report: str, names: list[str]) -> list[str]:
        """The report's sentences that cite only sources about a near namesake of an asked
        subject (their title names the namesake, not the subject), copied as they stand."""
        cited = source_blocks(section_of(user, "The cited sources (the evidence):\n"))
        namesakes = {
            b.id
            for b in cited
            if any(namesake_in(b.title, n) for n in names)
            and not any(entity_named(b.title, n) for n in names)
        }
        found = []
        for sentence in sentences(report):
            ids = {int(i) for i in re.findall(r"\[(\d+)\]", sentence)}
            if ids and ids <= namesakes and not any(entity_named(sentence, n) for n in names):
                found.append(sentence)
        return found

    def on_GapAnalysis(self, call: ChatCall) -> dict:
        report = section_of(call.user, "Report:\n")
        names = subjects(call.question) or [call.question]
        most = int(re.search(r"at most (\d+) supplementary", call.system or call.user).group(1))
        done = call.user.split("Already researched:", 1)[-1].split("Report:", 1)[0]
        counts = Counter()
        for part in re.split(r"^## ", report, flags=re.M)[1:]:
            owner = next((n for n in names if n.split()[0] in part.split("\n", 1)[0]), None)
            if owner:
                counts[owner] += len(set(figures(re.sub(r"\[\d+\]", "", part))))
        best = max(counts.values(), default=0)
        thin = sorted((n for n in names if counts[n] < max(8, best)), key=lambda n: counts[n])
        tasks = []
        for name in thin:
            for description, queries in self._gap_tasks(name, is_cjk(call.question)):
                if description not in done:
                    tasks.append({"description": description, "search_queries": queries,
                                  "complexity": "medium"})  # fmt: skip
                    break
        tasks = tasks[:most]
        return {"gaps": [f"Few figures on the {t['description']}" for t in tasks],
                "supplementary_tasks": tasks}  # fmt: skip

    @staticmethod
    def _gap_tasks(name: str, cjk: bool) -> list[tuple[str, list[str]]]:
        """The subtasks it proposes for a thin subject, first time and second (never the same
        twice: a description already researched is not proposed again)."""
        if cjk:
            return [
                (f"查找 {name} 的更多测量数据：测试报告、数据表和最新规格。",
                 [f"{name} 测试报告", f"{name} 数据表"]),
                (f"查找报告中仍缺少的 {name} 测量数据：测试方法和技术数据表。",
                 [f"{name} 测试方法", f"{name} 技术数据表 pdf"]),
            ]  # fmt: skip
        return [
            (f"Find further measured figures for the {name}: test reports, datasheets and the "
             "latest specifications.",
             [f"{name} test report", f"{name} datasheet", f"{name} latest data"]),
            (f"Find the measured figures for the {name} that the report still lacks, in test "
             "methods and technical datasheets.",
             [f"{name} test methods", f"{name} technical datasheet pdf"]),
        ]  # fmt: skip

    # ------------------------------------------------------------ citation checks

    def on_PairVerdicts(self, call: ChatCall) -> dict:
        pairs = re.findall(
            r"^Pair (\d+)\nStatement: (.*?)\nSource \[\d+\]:\n<data>\n(.*?)\n</data>",
            call.user,
            re.M | re.S,
        )
        verdicts = []
        for number, statement, source in pairs:
            verdict, quote = judge(statement, source)
            verdicts.append({"pair": int(number), "verdict": verdict, "quote": quote})
        return {"verdicts": verdicts}

    def on_StatementRewrites(self, call: ChatCall) -> dict:
        rewrites = []
        blocks = re.split(r"^Statement (\d+): ", call.user, flags=re.M)[1:]
        for number, block in zip(blocks[::2], blocks[1::2], strict=True):
            statement = block.split("\n", 1)[0]
            best = ""
            for source_id, text in re.findall(
                r"Source \[(\d+)\]:\n<data>\n(.*?)\n</data>", block, re.S
            ):
                shared = [s for s in sentences(text) if set(figures(s)) & set(figures(statement))]
                if shared and not best:
                    best = f"{shared[0].rstrip('.')} [{source_id}]."
            rewrites.append({"statement": int(number), "text": best})
        return {"rewrites": rewrites}


def judge(statement: str, source: str) -> tuple[str, str]:
    """A careful judge's verdict on one pair, and the source's deciding words."""
    claimed = set(figures(re.sub(r"\[\d+\]", "", statement)))
    said = sentences(source)
    if claimed:
        stated = set(figures(source))
        found = claimed & stated
        quote = next((s for s in said if set(figures(s)) & claimed), "")
        if found == claimed:
            return "supported", quote
        return ("partial", quote) if found else ("unsupported", "")
    words = stems(statement)
    share = len(words & stems(source)) / max(1, len(words))
    best = max(said, key=lambda s: len(stems(s) & words), default="")
    if share >= 0.5:
        return "supported", best
    return ("partial", best) if share >= 0.25 else ("unsupported", "")
