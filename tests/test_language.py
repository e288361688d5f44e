"""The run's language: detected by script and py3langid, chosen by setting, used everywhere."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from pydantic import ValidationError

from deep_research.domain import language as language_module
from deep_research.domain.evidence import SectionEvidence
from deep_research.domain.language import WORDS, detect_language, run_language, words_for
from deep_research.nodes import prompts
from deep_research.nodes.writing import limitations, no_evidence_report, plain_error
from deep_research.settings import Settings
from deep_research.state import OutlineSection, WorkerResult


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("比较 zstd 和 xz 在日志归档中的表现", "zh-Hans"),
        ("为什么这个数据库这么慢？", "zh-Hans"),
        ("比較 zstd 與 xz 在日誌歸檔中的表現", "zh-Hant"),
        ("台灣的半導體產業為什麼這麼強", "zh-Hant"),
        ("ログのアーカイブに zstd と xz のどちらを使うべきか", "ja"),
        ("東京の家賃はなぜ上がっているのか", "ja"),
        ("로그 보관에 zstd와 xz 중 무엇이 나은가", "ko"),
        ("Compare zstd and xz for log archives", "en"),
        ("SQLite WAL mode performance", "en"),  # py3langid alone says French
        ("gRPC vs REST latency", "en"),
        ("How does 微信 handle payments?", "en"),  # a Chinese name in an English question
        ("Wie unterscheiden sich zstd und xz bei der Archivierung von Logdateien?", "de"),
        ("Lohnt sich eine Solaranlage auf dem Dach", "de"),
        ("Comment zstd et xz se comparent-ils pour l'archivage des journaux ?", "fr"),
        ("¿Cuál es la mejor base de datos para series temporales?", "es"),
        ("Почему растут цены на электроэнергию в Европе?", "ru"),
        ("Чому зростають ціни на електроенергію?", "und"),  # Ukrainian: no words of our own
        ("قارن بين zstd و xz", "und"),
        ("", "en"),
    ],
)
def test_detect_language(text, language):
    assert detect_language(text) == language


def test_the_language_models_tables_stay_out_of_the_garbage_collectors_walks(monkeypatch):
    monkeypatch.setattr(language_module, "_IDENTIFIERS", {})
    assert detect_language("Comparer zstd et xz pour les archives de journaux") == "fr"
    identifier = language_module._IDENTIFIERS[language_module._LATIN]
    tables = {name: getattr(identifier, name) for name in language_module._AUTOMATON_TABLES}
    gc.collect()  # a tuple of ints is untracked once the collector has seen it
    assert len(tables["tk_output"]) > 100_000  # the automaton's, not a part of one
    walked = [r for t in tables.values() if gc.is_tracked(t) for r in gc.get_referents(t)]
    walked += [r for r in walked if gc.is_tracked(r) for r in gc.get_referents(r)]
    assert len(walked) < 20, walked  # arrays, bytes and a range: the collector sees their types


def test_the_language_model_is_held_in_a_few_megabytes(monkeypatch):
    import py3langid.langid  # noqa: F401  (the modules' own memory is not the model's)

    import deep_research.domain.langid_automaton  # noqa: F401

    monkeypatch.setattr(language_module, "_IDENTIFIERS", {})
    gc.collect()
    tracemalloc.start()  # numpy's arrays are traced too
    try:
        assert detect_language("Почему растут цены на электроэнергию в Европе?") == "ru"
        assert detect_language("Comparer zstd et xz pour les archives de journaux") == "fr"
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 8 * 2**20, held  # the table of every move was 39 MB of it


def test_one_load_of_the_language_model_serves_both_scripts_with_only_their_weights(monkeypatch):
    monkeypatch.setattr(language_module, "_IDENTIFIERS", {})
    assert detect_language("Почему растут цены на электроэнергию в Европе?") == "ru"
    assert detect_language("Comparer zstd et xz pour les archives de journaux") == "fr"
    latin = language_module._IDENTIFIERS[language_module._LATIN]
    cyrillic = language_module._IDENTIFIERS[language_module._CYRILLIC]
    for name in language_module._AUTOMATON_TABLES:
        assert getattr(latin, name) is getattr(cyrillic, name), name
    for identifier, languages in (
        (latin, language_module._LATIN),
        (cyrillic, language_module._CYRILLIC),
    ):
        assert set(identifier.nb_classes) == set(languages)
        kept = {id(a): a for a in (identifier.nb_ptc, *identifier._full_model[:2])}.values()
        assert {a.shape[-1] for a in kept} == {len(identifier.nb_classes)}  # no other language's


def test_japanese_and_korean_never_get_chinese_words():
    for language in ("ja", "ko"):
        words = words_for(detect_language({"ja": "東京の家賃", "ko": "서울의 집값"}[language]))
        assert words == WORDS[language]
        assert words.sources not in (WORDS["zh-Hans"].sources, WORDS["zh-Hant"].sources)
        assert words.unsupported != WORDS["zh-Hans"].unsupported


def test_every_language_has_all_its_words():
    for code, words in WORDS.items():
        assert all(vars(words).values()), code


def test_the_setting_wins_and_is_validated():
    assert run_language("比较 zstd 和 xz", "de") == "de"
    assert run_language("比较 zstd 和 xz", None) == "zh-Hans"
    assert Settings(language="ja").language == "ja"
    with pytest.raises(ValidationError, match="language"):
        Settings(language="klingon")


PART = OutlineSection(title="t", question="q?", source_ids=[])


NOTHING = SectionEvidence([], [], [])


def test_every_prompt_names_the_runs_language():
    name = WORDS["ko"].name
    messages = [
        prompts.plan("q", 3, language="ko"),
        prompts.outline("q", [], [], (2, 3), 8000, language="ko"),
        prompts.section("q", "t", PART, [], [], NOTHING, 300, 8000, language="ko"),
        prompts.section("q", "t", PART, [], [], NOTHING, 300, 8000, language="ko", current="## t"),
        prompts.weigh("q", [], 8000, language="ko"),
        prompts.framing("q", "t", "## t", "summary", 8000, language="ko"),
        prompts.framing("q", "t", "## t", "conclusion", 8000, language="ko"),
        prompts.quality("q", "report", 1, 8000, language="ko"),
        prompts.gaps("q", "report", None, [], 2, 8000, language="ko"),
        prompts.rewrite_statements([], "q", 8000, "ko"),
    ]
    for pair in messages:
        assert name in pair[0].content
    assert "the language of the question" in prompts.write_in("und")


def test_the_no_evidence_report_is_in_the_runs_language_without_url_fragments():
    failed = WorkerResult(
        subtask_id=1,
        description="zstd 与 xz",
        status="failed",
        error="'zstd': HTTPStatusError: Client error '401 Unauthorized' for url "
        "'https://api.tavily.com/search'\nFor more information check: "
        "https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/401",
    )
    report = no_evidence_report("比较 zstd 和 xz", [failed], "zh-Hans")
    assert WORDS["zh-Hans"].no_evidence in report
    assert report.endswith("- zstd 与 xz: 'zstd': HTTPStatusError: Client error '401 Unauthorized'")
    assert "for url" not in report and "http" not in report
    assert limitations([failed], "ja").startswith("## 調査できなかった項目")


@pytest.mark.parametrize(
    ("error", "plain"),
    [
        ("search failed at https://x.org/a?b=c; giving up", "search failed; giving up"),
        ("timeout (https://x.org/slow)", "timeout"),
        ("", "failed"),
    ],
)
def test_plain_error(error, plain):
    assert plain_error(error) == plain


def test_a_report_the_writer_could_not_make_says_so_in_the_runs_language():
    """Seen against the real model server: a Russian run's failed writer was told in English."""
    from deep_research.nodes.writing import failed_report

    for language, opening in (
        ("ru", "**Отчёта нет"),
        ("de", "**Kein Bericht"),
        ("zh-Hans", "**没有报告"),
        ("en", "**No report"),
    ):
        report = failed_report("Q", "the reply is empty", [], language)
        head = report.split("\n\n")[1]
        assert head.startswith(opening) and "the reply is empty" in head


def test_a_language_model_whose_table_is_not_a_trie_is_used_as_it_is(monkeypatch):
    from deep_research.domain import langid_automaton

    monkeypatch.setattr(language_module, "_IDENTIFIERS", {})
    monkeypatch.setattr(langid_automaton, "trie_moves", lambda nextmove, rows: None)
    assert detect_language("Comparer zstd et xz pour les archives de journaux") == "fr"
    assert detect_language("Почему растут цены на электроэнергию в Европе?") == "ru"
    identifier = language_module._IDENTIFIERS[language_module._LATIN]
    assert len(identifier.tk_nextmove) > 1_000_000  # the library's own table of every move
    assert isinstance(identifier.tk_output, tuple)


@pytest.mark.parametrize("language", sorted(WORDS))
def test_a_failed_writers_note_says_no_findings_follow_when_the_check_left_none(language):
    """Seen with Gemma 3 270M on a German question: the writer's replies were empty, the one
    finding was "1" under a summary of "][", the citation check marked it, and the report said
    the findings followed with nothing after it."""
    import asyncio

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from deep_research.nodes.writing import failed_report, finalize
    from deep_research.state import Finding, SourceEvidence
    from deep_research.tools.run_resources import LiveRuns

    words = WORDS[language]
    source = SourceEvidence(id=1, url="https://example.org/a", title="A", excerpt="Words.")
    worker = WorkerResult(
        subtask_id=1,
        description="The subtask",
        summary="][",
        sources=[source],
        findings=[Finding(claim="1", source_ids=[1])],
    )
    unused = GenericFakeChatModel(messages=iter([]))  # finalize asks no model
    runs = LiveRuns(lambda settings, role: unused)
    failed = failed_report("Q", "the reply is empty", [worker], language)

    def final(report: str) -> str:
        state = {
            "question": "Q",
            "report": report,
            "report_problem": "the reply is empty",
            "worker_results": [worker],
            "stop_reason": "max_iterations",
            "settings": Settings(language=language),
            "run_id": f"failed-{language}",
        }
        return asyncio.run(finalize(state, runs=runs))["report"]

    checked = failed.replace("- 1 [1]", f"- 1{words.unchecked}")  # as the check leaves it
    alone = words.writer_failed_alone.format(problem="the reply is empty")
    assert alone in final(checked) and "##" not in final(checked)
    assert words.writer_failed.format(problem="the reply is empty") not in final(checked)
    kept = final(failed.replace("- 1 [1]", "- Zstd is faster [1]"))  # a finding that holds
    assert alone not in kept and "Zstd is faster" in kept and "## The subtask" in kept
