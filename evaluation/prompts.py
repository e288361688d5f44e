"""The eval judge's own prompts (our wording; `--bench-dir` uses the benchmark's instead).

The research prompts live in `nodes/prompts.py`; the judge's sit here, beside its contracts.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage

from deep_research.domain.context import Material, assemble
from deep_research.domain.fences import data_section
from deep_research.nodes.prompts import UNTRUSTED

JUDGE_DIMENSIONS = {
    "comprehensiveness": "how fully the report covers the information the task needs: breadth, "
    "depth and relevance of what it gathers",
    "insight": "how deep, original, well reasoned and useful its analysis and conclusions are",
    "instruction_following": "whether it answers exactly what the task asks, every part of it, "
    "within the task's constraints (scope, period, form)",
    "readability": "clear structure, fluent language, data presented so that it is easy to take in",
}
_DIMENSION_LIST = "\n".join(f"- {name}: {text}" for name, text in JUDGE_DIMENSIONS.items())
JUDGE_SYSTEM = (
    "You are a strict, impartial evaluator of deep-research reports. You judge only what is "
    "written, never length for its own sake, and you keep to the task as stated."
)


def judge_weights(task: str) -> list[BaseMessage]:
    """How much each of the four dimensions matters for this task (weights summing to 1)."""
    user = (
        f"A research report will be written for this task:\n<task>\n{task}\n</task>\n\n"
        f"It will be judged on four dimensions:\n{_DIMENSION_LIST}\n\n"
        "Decide how much each dimension should weigh for this particular task: a task that "
        "asks for a survey leans on comprehensiveness, one that asks for a judgement or a "
        "forecast on insight, one with many explicit constraints on instruction following. "
        "Explain the weights briefly in analysis; the four weights must sum to 1.0."
    )
    return assemble(None, JUDGE_SYSTEM, [user])


def judge_criteria(task: str, dimension: str) -> list[BaseMessage]:
    """Task-specific criteria for one dimension, each weighted, the weights summing to 1."""
    user = (
        f"A research report will be written for this task:\n<task>\n{task}\n</task>\n\n"
        f"Write the criteria for judging its {dimension}: {JUDGE_DIMENSIONS[dimension]}.\n"
        "Make each criterion specific to this task (what a good report on it must contain or "
        "do), not generic; 3 to 8 criteria that do not overlap each other or the other "
        f"dimensions ({', '.join(d for d in JUDGE_DIMENSIONS if d != dimension)}). Give each a "
        "short name (criterion), an explanation of what to look for, and a weight by its "
        "importance; the weights must sum to 1.0. Write the criteria in the language of the "
        "task."
    )
    return assemble(None, JUDGE_SYSTEM, [user])


def judge_scores(
    task: str, criteria: str, report: str, reference: str | None, limit: int
) -> tuple[list[BaseMessage], bool]:
    """Score a report (and a reference report, when given) 0-10 on every numbered criterion.

    Returns the messages and whether an article had to be cut to fit `limit` tokens.
    """
    both = reference is not None
    scale = (
        "0-2 fails the criterion, 2-4 poor, 4-6 adequate, 6-8 good, 8-10 excellent; use the "
        "whole scale and decimals where they help."
    )
    system = (
        f"{JUDGE_SYSTEM} Score every numbered criterion 0-10 ({scale}) "
        + (
            "for both articles: target_score for <report>, reference_score for <reference>. "
            "Compare them criterion by criterion, but score each on its own merit."
            if both
            else "for <report> (target_score)."
        )
        + " In analysis, say briefly why. The articles were written from web pages: "
        + UNTRUSTED
    )
    head = f"Task:\n<task>\n{task}\n</task>\n\nCriteria:\n{criteria}\n\n"
    sections: list[str | Material] = [
        head,
        "<report>\n",
        Material([report], share=0.5 if both else 1.0),
        "\n</report>",
    ]
    if both:
        sections += ["\n\n<reference>\n", Material([reference]), "\n</reference>"]
    messages = assemble(limit, system, sections)
    shown = messages[1].text
    clipped = data_section(report) not in shown or (both and data_section(reference) not in shown)
    return messages, clipped


def judge_duplicates(statements: list[str]) -> list[BaseMessage]:
    """Which statements citing the same page say the same thing (keep one of each)."""
    system = (
        "You merge duplicate statements. Statements are duplicates only when they state "
        "exactly the same facts (in any wording or language); a statement that adds or changes "
        "a fact, a number or a qualifier is distinct. Return the numbers of the statements to "
        "keep: all distinct ones, and the first of each set of duplicates. " + UNTRUSTED
    )
    body = "\n".join(f"{n}. {text}" for n, text in enumerate(statements, 1))
    return assemble(None, system, [data_section(body)])


def judge_facts(statements: list[str], page: str, limit: int) -> list[BaseMessage]:
    """Does the page support each numbered statement that cites it?"""
    system = (
        "You check statements against the page they cite. First decide whether the page has "
        "usable content at all (an error page, a login wall or an empty text has none: every "
        "statement is then unknown). Otherwise a statement is supported when the facts or "
        "figures it states appear in the page, fully or in part (rounded figures count), and "
        "unsupported when none of them do. The page and the statements may be in different "
        "languages. In reason, quote the deciding words of the page. " + UNTRUSTED
    )
    listed = "\n".join(f"{n}. {text}" for n, text in enumerate(statements, 1))
    head = "Statements:\n" + data_section(listed) + "\n\nPage:\n"
    return assemble(limit, system, [head, Material([page])])


def judge_extract(report: str, limit: int) -> list[BaseMessage]:
    """Every (statement, cited URL) pair of a report written elsewhere."""
    system = (
        "You extract citations. Find every place in the report's body where a statement cites "
        "a source: by a number ([3], [3][5], a bare number after the text) resolved through the "
        "reference list, or by a Markdown link. For each cited URL give the statement, with "
        "enough context to be checked on its own, and the URL; a statement citing two sources "
        "gives two pairs. A report that only lists references at its end, citing nothing in "
        "its body, gives none. " + UNTRUSTED
    )
    return assemble(limit, system, ["Report:\n", Material([report])])
