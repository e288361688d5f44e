"""Lexical citation check: the cheap pass that may settle only the obvious pairs.

A pair is `supported` here only when the statement copies the start of one sentence of its
source word for word, numbers in the same places, in the same script, and neither side carries
a negation or a comparison; `unsupported` only when the source has no text at all. Everything
else (other languages, paraphrase, reordering, negation, comparison) is the model's call. The
word-overlap score that remains here picks the quote shown as evidence; it decides nothing.
Pure Python, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import lru_cache

from deep_research.domain.language import CJK_CHARACTERS, script_of
from deep_research.domain.statements import sentences
from deep_research.state import Verdict

_CJK = CJK_CHARACTERS
_TOKEN = re.compile(
    r"(?P<num>\d+(?:,\d{3}(?!\d))*(?:\.\d+)?(?:\s?(?:%|％|percent\b|per cent\b))?)"
    r"|(?P<word>[a-z\u00e0-\u00f6\u00f8-\u024f]+(?:'[a-z]+)?)"
    rf"|(?P<cjk>[{_CJK}]+)"
)
_STOP_TEXT = (
    "the and or but of in on at to for from by with as is are was were be been being it its "
    "this that these those which who whom what where when how has have had do does did than then "
    "so such can could will would may might should shall also into about over their they them "
    "there he she his her we our you your if while both each all any some other very just only "
    "up out per via yet"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
_NUMBER_WEIGHT = 3.0  # a number the passage lacks is strong evidence against support


def _stem(word: str) -> str:
    """Light normalisation: no possessive, no plural `s`, `-ies` back to `-y`."""
    word = word.split("'")[0]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=4096)
def _tokens(text: str) -> dict[str, float]:
    """Content tokens with their weights: numbers verbatim, Latin stems, CJK bigrams; once per
    text (a source is scored against every statement citing it). Callers only read them."""
    tokens: dict[str, float] = {}
    for match in _TOKEN.finditer(text.lower()):
        if number := match.group("num"):
            digits = re.match(r"[\d,.]+", number).group().replace(",", "")
            percent = number[-1] in "%％" or number.endswith("cent")
            tokens[digits + ("%" if percent else "")] = _NUMBER_WEIGHT
        elif word := match.group("word"):
            if len(word) >= 2 and word not in _STOP_WORDS:
                tokens[_stem(word)] = 1.0
        else:
            run = match.group("cjk")
            for i in range(max(1, len(run) - 1)):
                tokens[run[i : i + 2]] = 1.0
    return tokens


def _recall(statement: dict[str, float], passage: dict[str, float]) -> float:
    """The weighted share of the statement's tokens the passage contains."""
    total = sum(statement.values())
    return sum(w for t, w in statement.items() if t in passage) / total if total else 0.0


def support_score(statement: str, passage: str) -> float:
    """How much of the statement's content (0..1, numbers weighing more) the passage contains."""
    return _recall(_tokens(statement), _tokens(passage))


# Words that change what a sentence claims when added, dropped or moved: negations and
# comparisons (a pair carrying one always goes to the model), per language we write.
_CUE_TEXT = {
    "en": "not no never none nor neither without cannot can't won't isn't aren't wasn't weren't "
    "doesn't don't didn't hasn't haven't hadn't couldn't shouldn't wouldn't unlike except than "
    "more less fewer most least better worse best worst faster slower higher lower larger "
    "smaller greater bigger cheaper exceed exceeds exceeded outperform outperforms outperformed "
    "beat beats versus vs compared whereas instead rather but however although though despite "
    "only false myth wrong incorrect rarely seldom hardly barely scarcely fail fails failed",
    "de": "nicht kein keine keinen keinem keiner keines nie niemals ohne weder als mehr weniger "
    "meisten besser schlechter schneller langsamer höher niedriger größer kleiner aber jedoch "
    "statt falsch",
    "fr": "ne n pas non jamais aucun aucune sans ni plus moins mieux pire meilleur meilleure que "
    "qu plutôt mais cependant faux",
    "es": "no nunca jamás ningún ninguna ninguno sin ni más menos mejor peor que mayor menor "
    "pero sino falso",
    "it": "non mai nessun nessuno nessuna senza né più meno meglio peggio migliore peggiore che "
    "ma falso",
    "pt": "não nunca jamais nenhum nenhuma sem nem mais menos melhor pior que mas falso",
    "nl": "niet geen nooit zonder noch dan meer minder beter slechter maar onjuist",
    "ru": "не нет ни никогда без чем более менее лучше хуже но",
}
CUE_WORDS = frozenset(word for text in _CUE_TEXT.values() for word in text.split())
_CUE_SUBSTRINGS = (
    "不 没 沒 无 無 非 未 别 別 否 勿 莫 比 更 最 较 較 超 胜 勝 优 優 劣 但 却 卻 "  # Chinese
    "高于 低于 多于 少于 大于 小于 高於 低於 多於 少於 大於 小於 相比 不如 "
    "ない ず ません なかった より 以上 以下 "  # Japanese (最 and 比 are above)
    "않 없 안 못 보다 더 가장 지만"  # Korean
)
CUE_SUBSTRINGS = tuple(_CUE_SUBSTRINGS.split())
# Words a close copy may add or drop without changing its claim (articles, 的).
_HARMLESS_TEXT = (
    "the a an der die das den dem des ein eine einen einem einer eines le la les l un une des "
    "du d el los las una unos unas il lo gli i uno o os as um uma de het een 的 了"
)
HARMLESS = frozenset(_HARMLESS_TEXT.split())
_LETTERS = rf"[^\W\d_{_CJK}]+"  # a word of any alphabet (CJK characters are tokens alone)
_MATCH_TOKEN = re.compile(rf"\d+(?:[.,]\d+)*|%|％|[{_CJK}]|{_LETTERS}(?:'{_LETTERS})*")
_CJK_CHARACTER = re.compile(f"[{_CJK}]")
MAX_PREFIX = 0  # source words before the copied part ("Rarely, ...", "It is a myth that ...")
MAX_INSERTED = 0  # source words inside the copied part that the statement lacks ("not")
CUE_SCRIPTS = ("latin", "cyrillic", "cjk")  # scripts whose negations and comparisons we know
MIN_WORDS = 3  # a shorter statement is not worth a shortcut


@lru_cache(maxsize=4096)
def _match_tokens(text: str) -> tuple[str, ...]:
    """Tokens for an in-order comparison: words (lowercased, light stem), numbers, CJK chars;
    once per text (a source's sentences are compared with every statement citing it)."""
    tokens = []
    for token in _MATCH_TOKEN.findall(text.lower().replace("’", "'")):
        if token[0].isdigit():
            token = re.sub(r",(?=\d{3}(?!\d))", "", token)
        elif token in ("％", "percent"):
            token = "%"
        elif token.isalpha() and token.isascii():
            token = _stem(token)
        tokens.append(token)
    return tuple(tokens)


def has_cue(text: str) -> bool:
    """True when the text carries a negation or a comparison in a language we know."""
    words = set(_MATCH_TOKEN.findall(text.lower().replace("’", "'")))
    return (
        bool(words & CUE_WORDS)
        or any(c in text for c in CUE_SUBSTRINGS)
        or any(w.endswith("n't") for w in words)
    )


def _words(tokens: Sequence[str]) -> float:
    """About how many words the tokens make: a CJK character counts as half of one."""
    return sum(0.5 if _CJK_CHARACTER.fullmatch(t) else 1.0 for t in tokens)


def _is_close_copy(claim: Sequence[str], sentence: Sequence[str]) -> bool:
    """True when `claim` is `sentence` (or a leading part of it) nearly word for word, in order."""
    blocks = [
        b
        for b in SequenceMatcher(None, claim, sentence, autojunk=False).get_matching_blocks()
        if b.size
    ]
    if not blocks:
        return False
    matched_claim = {i for b in blocks for i in range(b.a, b.a + b.size)}
    matched_sentence = {j for b in blocks for j in range(b.b, b.b + b.size)}
    dropped = [t for i, t in enumerate(claim) if i not in matched_claim]
    first, last = blocks[0].b, blocks[-1].b + blocks[-1].size
    inserted = [sentence[j] for j in range(first, last) if j not in matched_sentence]
    numbers_kept = all(
        not t[0].isdigit() for t in dropped + [t for t in inserted if t not in HARMLESS]
    )
    return (
        all(t in HARMLESS for t in dropped)
        and _words([t for t in inserted if t not in HARMLESS]) <= MAX_INSERTED
        and _words(sentence[:first]) <= MAX_PREFIX
        and numbers_kept
        and len(sentence) - last <= max(4, len(matched_claim))  # a trailing qualifier at most
    )


def close_match(statement: str, passage: str) -> str:
    """The passage sentence that the statement copies closely and in order, or ''."""
    claim = _match_tokens(statement)
    if len([t for t in claim if t not in HARMLESS]) < MIN_WORDS:
        return ""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", passage)]
    for s, e in (span for line in lines for span in sentences(passage, *line)):
        sentence = passage[s:e]
        if _is_close_copy(claim, _match_tokens(sentence)):
            return " ".join(sentence.split())
    return ""


def lexical_verdict(statement: str, passage: str) -> Verdict | None:
    """A verdict only where no judgement is needed; None (ask the model) for everything else.

    `unsupported`: the source has no text. `supported`: the statement copies (a leading part
    of) one of its sentences word for word, in a script whose negations and comparisons we
    know, and neither carries one.
    """
    if not re.search(r"\w", passage):
        return "unsupported"
    script = script_of(statement)
    if script not in CUE_SCRIPTS or script != script_of(passage) or has_cue(statement):
        return None
    match = close_match(statement, passage)
    return "supported" if match and not has_cue(match) else None


def _windows(text: str, max_chars: int) -> list[str]:
    """The text if short enough, else overlapping word-aligned windows of at most `max_chars`."""
    if len(text) <= max_chars:
        return [text]
    windows: dict[str, None] = {}
    for i in range(0, len(text), max(1, max_chars // 4)):
        if i and not text[i - 1].isspace() and not re.match(f"[{_CJK}]", text[i]):
            i = text.find(" ", i) + 1  # start on the next word, not mid-word
            if not i:
                break
        window = text[i : i + max_chars]
        if i + max_chars < len(text) and not text[i + max_chars].isspace() and " " in window:
            window = window[: window.rindex(" ")]
        windows[window.strip()] = None
    return list(windows)


def best_quote(statement: str, passage: str, max_chars: int = 300) -> str:
    """The passage sentence (or window of a long one) sharing most with the statement, or ''."""
    claim, best, best_score = _tokens(statement), "", 0.0
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", passage)]
    for s, e in (span for line in lines for span in sentences(passage, *line)):
        for window in _windows(" ".join(passage[s:e].split()), max_chars):
            score = _recall(claim, _tokens(window))
            if score > best_score:
                best, best_score = window, score
    return best


def content_words(text: str) -> frozenset[str]:
    """The content tokens of `text` (numbers aside): what two passages must share to be about
    the same thing, for ordering candidates (it decides nothing)."""
    return frozenset(t for t in _tokens(text) if not t[0].isdigit())
