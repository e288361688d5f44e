"""The run's language: detected from the question, and the words a report uses in it.

Detection goes by script first (kana means Japanese, Hangul Korean, Han alone Chinese, simplified
or traditional by the characters that differ), and for Latin and Cyrillic text by py3langid,
restricted to the languages we have words for and trusted only when it is confident (English
otherwise: a short technical question is easily mistaken for Danish). py3langid ships its model
inside the package, so nothing is downloaded at run time.
"""

from __future__ import annotations

import re
import threading
from array import array
from dataclasses import dataclass, replace

from deep_research.settings import LanguageCode

_LATIN = ("en", "de", "fr", "es", "it", "pt", "nl")
CONFIDENT = 0.75  # py3langid's normalised probability below which a Latin question is English
_SCRIPTS = {
    "han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef",
    "kana": "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    "cyrillic": "\u0400-\u04ff",
    "latin": "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f",
    "other": "\u0370-\u03ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f",
}
_SCRIPT = {name: re.compile(f"[{chars}]") for name, chars in _SCRIPTS.items()}
CJK_CHARACTERS = _SCRIPTS["han"] + _SCRIPTS["kana"] + _SCRIPTS["hangul"]
"""Characters of Chinese, Japanese and Korean text (Han, kana, Hangul): the one list of them."""
CJK_MARKS = "\u3000-\u303f\uff00-\uffef"
"""CJK punctuation and full-width forms: not letters, but they cost tokens like them."""
# Frequent characters whose simplified and traditional forms differ (same position, same word).
_SIMPLIFIED = (
    "这个们来说为与会对经过发学国时实点种体关么还让应没区产电价较统压缩资库务长开问题见现样动机"
    "气业从东马书车门网线论语话认识请读写买卖钱银铁乐无万亿历级组织结给终绝续响顾预领频风飞鱼鸟"
    "龙节药华单双际阶随险陈处备复杂确离争战转输运进远连选适释数据显汇优势报场块坏声标权极构检测"
    "济环观规视觉计订记许设证评试详误调谁负质贵费赛总术导层岁师带广庆张强录态惯愿户扩护担择换损"
)
_TRADITIONAL = (
    "這個們來說為與會對經過發學國時實點種體關麼還讓應沒區產電價較統壓縮資庫務長開問題見現樣動機"
    "氣業從東馬書車門網線論語話認識請讀寫買賣錢銀鐵樂無萬億歷級組織結給終絕續響顧預領頻風飛魚鳥"
    "龍節藥華單雙際階隨險陳處備復雜確離爭戰轉輸運進遠連選適釋數據顯匯優勢報場塊壞聲標權極構檢測"
    "濟環觀規視覺計訂記許設證評試詳誤調誰負質貴費賽總術導層歲師帶廣慶張強錄態慣願戶擴護擔擇換損"
)


@dataclass(frozen=True)
class Words:
    """What a report says in one language: its name for prompts, headings and marks."""

    name: str  # as a prompt names it
    sources: str  # heading of the sources section
    unsupported: str  # appended to a statement no source supports
    unchecked: str  # appended to a statement whose citations could not be checked
    not_researched: str  # heading of the subtopics no worker could research
    evidence: str  # heading of the --evidence table
    no_evidence: str  # the whole text of a report without evidence
    budget_before_evidence: str  # the same, when a run budget ran out before any evidence
    revised_round: (
        str  # under the title: an earlier round's report, revised ({round} {score} {later})
    )
    kept_round: str  # the same, handed back unchanged ({round} {score})
    writer_failed: str  # a report the writer's reply could not make, above the notes ({problem})
    writer_failed_alone: str  # the same, when the citation check left none of the notes


_ENGLISH = Words(
    "English",
    "Sources",
    " *(not supported by the sources found)*",
    " *(citation could not be checked)*",
    "Not researched",
    "Citation evidence",
    "No evidence could be gathered: every search failed or returned nothing, so no report "
    "grounded in sources can be written.",
    "No evidence could be gathered: the run's budget was spent before any search returned "
    "anything, so no report grounded in sources can be written.",
    "This is the round {round} report (rated {score}/100), revised with what round {later} found: "
    "the later report was rated lower.",
    "This is the round {round} report (rated {score}/100): the later report was rated lower and "
    "found nothing new.",
    "**No report: the writer model's reply could not be used ({problem}).** Below are the "
    "findings as the researchers recorded them.",
    "**No report: the writer model's reply could not be used ({problem}), and none of the "
    "researchers' findings held up under the citation check.**",
)
WORDS: dict[str, Words] = {
    "en": _ENGLISH,
    "zh-Hans": Words(
        "Simplified Chinese (简体中文)",
        "参考来源",
        "（未经来源证实）",
        "（引用未能核实）",
        "未能研究的子课题",
        "引用核查",
        "未能收集到任何证据：所有检索均失败或没有结果，因此无法撰写有依据的报告。",
        "未能收集到任何证据：在任何检索返回结果之前，本次运行的预算已经用完，因此无法撰写有依据"
        "的报告。",
        "本报告是第 {round} 轮的报告（评分 {score}/100），并已补入第 {later} 轮的发现：之后的报告"
        "评分较低。",
        "本报告是第 {round} 轮的报告（评分 {score}/100）：之后的报告评分较低，且没有新的发现。",
        "**没有报告：写作模型的回复无法使用（{problem}）。** 以下是研究人员记录的发现。",
        "**没有报告：写作模型的回复无法使用（{problem}），"
        "研究人员记录的发现也没有一条通过引用核查。**",
    ),
    "zh-Hant": Words(
        "Traditional Chinese (繁體中文)",
        "參考來源",
        "（未經來源證實）",
        "（引用未能核實）",
        "未能研究的子課題",
        "引用核查",
        "未能收集到任何證據：所有檢索均失敗或沒有結果，因此無法撰寫有依據的報告。",
        "未能收集到任何證據：在任何檢索返回結果之前，本次執行的預算已經用完，因此無法撰寫有依據"
        "的報告。",
        "本報告是第 {round} 輪的報告（評分 {score}/100），並已補入第 {later} 輪的發現：之後的報告"
        "評分較低。",
        "本報告是第 {round} 輪的報告（評分 {score}/100）：之後的報告評分較低，且沒有新的發現。",
        "**沒有報告：寫作模型的回覆無法使用（{problem}）。** 以下是研究人員記錄的發現。",
        "**沒有報告：寫作模型的回覆無法使用（{problem}），"
        "研究人員記錄的發現也沒有一條通過引用核查。**",
    ),
    "ja": Words(
        "Japanese (日本語)",
        "出典",
        "（出典では確認できません）",
        "（引用を検証できませんでした）",
        "調査できなかった項目",
        "引用の検証",
        "証拠を集められませんでした。すべての検索が失敗したか結果がなかったため、"
        "出典に基づくレポートは作成できません。",
        "証拠を集められませんでした。検索結果が得られる前に実行の予算を使い切ったため、出典に基"
        "づくレポートは作成できません。",
        "これは第{round}ラウンドのレポート（評価 {score}/100）に、第{later}ラウンドで見つかった内"
        "容を加えて改訂したものです。後のレポートの評価はより低いものでした。",
        "これは第{round}ラウンドのレポート（評価 {score}/100）です。後のレポートの評価はより低く、"
        "新たな発見はありませんでした。",
        "**レポートはありません：執筆モデルの応答を使用できませんでした（{problem}）。** 以下は"
        "調査担当が記録した発見です。",
        "**レポートはありません：執筆モデルの応答を使用できませんでした（{problem}）。"
        "調査担当が記録した発見も、引用の確認を通ったものはありませんでした。**",
    ),
    "ko": Words(
        "Korean (한국어)",
        "출처",
        " *(찾은 출처로 뒷받침되지 않음)*",
        " *(인용을 확인하지 못함)*",
        "조사하지 못한 항목",
        "인용 검증",
        "증거를 수집하지 못했습니다. 모든 검색이 실패했거나 결과가 없어 출처에 근거한 "
        "보고서를 작성할 수 없습니다.",
        "증거를 수집하지 못했습니다. 검색 결과를 얻기 전에 실행 예산을 모두 사용하여 출처에 근"
        "거한 보고서를 작성할 수 없습니다.",
        "이 보고서는 {round}라운드 보고서(평가 {score}/100)에 {later}라운드에서 찾은 내용을 반영해"
        " 고친 것입니다. 이후 보고서는 더 낮게 평가되었습니다.",
        "이 보고서는 {round}라운드 보고서(평가 {score}/100)입니다. 이후 보고서는 더 낮게 평가되었"
        "고 새로 찾은 내용이 없었습니다.",
        "**보고서 없음: 작성 모델의 응답을 사용할 수 없었습니다({problem}).** 아래는 조사자들이 "
        "기록한 발견입니다.",
        "**보고서 없음: 작성 모델의 응답을 사용할 수 없었고({problem}), 조사자들이 "
        "기록한 발견 중 인용 확인을 통과한 것도 없었습니다.**",
    ),
    "de": Words(
        "German (Deutsch)",
        "Quellen",
        " *(von den gefundenen Quellen nicht belegt)*",
        " *(Zitat konnte nicht geprüft werden)*",
        "Nicht recherchiert",
        "Belege der Zitate",
        "Es konnten keine Belege gesammelt werden: Jede Suche ist fehlgeschlagen oder blieb "
        "ohne Ergebnis, daher kann kein auf Quellen gestützter Bericht geschrieben werden.",
        "Es konnten keine Belege gesammelt werden: Das Budget des Laufs war aufgebraucht, "
        "bevor eine Suche etwas lieferte, daher kann kein auf Quellen gestützter Bericht "
        "geschrieben werden.",
        "Dies ist der Bericht aus Runde {round} (bewertet mit {score}/100), ergänzt um das, was "
        "Runde {later} fand: der spätere Bericht wurde schlechter bewertet.",
        "Dies ist der Bericht aus Runde {round} (bewertet mit {score}/100): der spätere Bericht "
        "wurde schlechter bewertet und fand nichts Neues.",
        "**Kein Bericht: Die Antwort des Schreibmodells war nicht verwendbar ({problem}).** "
        "Unten stehen die Ergebnisse, wie die Recherche sie festgehalten hat.",
        "**Kein Bericht: Die Antwort des Schreibmodells war nicht verwendbar ({problem}), und "
        "keines der Ergebnisse der Recherche hielt der Prüfung der Zitate stand.**",
    ),
    "fr": Words(
        "French (français)",
        "Sources",
        " *(non étayé par les sources trouvées)*",
        " *(citation non vérifiable)*",
        "Non étudié",
        "Justification des citations",
        "Aucune preuve n'a pu être recueillie : toutes les recherches ont échoué ou n'ont rien "
        "donné, aucun rapport fondé sur des sources ne peut donc être rédigé.",
        "Aucune preuve n'a pu être recueillie : le budget de l'exécution a été épuisé avant "
        "qu'une recherche ne donne quoi que ce soit, aucun rapport fondé sur des sources ne "
        "peut donc être rédigé.",
        "Ceci est le rapport du tour {round} (noté {score}/100), révisé avec ce qu'a trouvé le "
        "tour {later} : le rapport ultérieur a été moins bien noté.",
        "Ceci est le rapport du tour {round} (noté {score}/100) : le rapport ultérieur a été "
        "moins bien noté et n'a rien trouvé de nouveau.",
        "**Aucun rapport : la réponse du modèle rédacteur était inutilisable ({problem}).** "
        "Voici les constats tels que les chercheurs les ont consignés.",
        "**Aucun rapport : la réponse du modèle rédacteur était inutilisable ({problem}), et "
        "aucun des constats des chercheurs n'a résisté à la vérification des citations.**",
    ),
    "es": Words(
        "Spanish (español)",
        "Fuentes",
        " *(no respaldado por las fuentes encontradas)*",
        " *(no se pudo comprobar la cita)*",
        "No investigado",
        "Evidencia de las citas",
        "No se pudo reunir ninguna evidencia: todas las búsquedas fallaron o no devolvieron "
        "nada, por lo que no se puede escribir un informe basado en fuentes.",
        "No se pudo reunir ninguna evidencia: el presupuesto de la ejecución se agotó antes de "
        "que alguna búsqueda devolviera resultados, por lo que no se puede redactar un informe "
        "basado en fuentes.",
        "Este es el informe de la ronda {round} (valorado en {score}/100), revisado con lo que "
        "encontró la ronda {later}: el informe posterior obtuvo una valoración más baja.",
        "Este es el informe de la ronda {round} (valorado en {score}/100): el informe posterior "
        "obtuvo una valoración más baja y no encontró nada nuevo.",
        "**No hay informe: la respuesta del modelo redactor no se pudo usar ({problem}).** A "
        "continuación, los hallazgos tal como los registraron los investigadores.",
        "**No hay informe: la respuesta del modelo redactor no se pudo usar ({problem}), y "
        "ninguno de los hallazgos de los investigadores superó la verificación de las citas.**",
    ),
    "it": Words(
        "Italian (italiano)",
        "Fonti",
        " *(non supportato dalle fonti trovate)*",
        " *(citazione non verificabile)*",
        "Non ricercato",
        "Verifica delle citazioni",
        "Non è stato possibile raccogliere alcuna prova: tutte le ricerche sono fallite o non "
        "hanno dato risultati, quindi non si può scrivere un rapporto basato su fonti.",
        "Non è stato possibile raccogliere prove: il budget dell'esecuzione si è esaurito "
        "prima che una ricerca restituisse qualcosa, quindi non si può scrivere un rapporto "
        "basato su fonti.",
        "Questo è il rapporto del round {round} (valutato {score}/100), rivisto con quanto "
        "trovato nel round {later}: il rapporto successivo è stato valutato meno.",
        "Questo è il rapporto del round {round} (valutato {score}/100): il rapporto successivo è "
        "stato valutato meno e non ha trovato nulla di nuovo.",
        "**Nessun rapporto: la risposta del modello redattore non era utilizzabile ({problem}).** "
        "Di seguito i risultati come li hanno registrati i ricercatori.",
        "**Nessun rapporto: la risposta del modello redattore non era utilizzabile ({problem}), "
        "e nessuno dei risultati dei ricercatori ha superato la verifica delle citazioni.**",
    ),
    "pt": Words(
        "Portuguese (português)",
        "Fontes",
        " *(não sustentado pelas fontes encontradas)*",
        " *(não foi possível verificar a citação)*",
        "Não pesquisado",
        "Evidência das citações",
        "Não foi possível reunir nenhuma evidência: todas as pesquisas falharam ou não "
        "retornaram nada, portanto não é possível escrever um relatório baseado em fontes.",
        "Não foi possível reunir evidências: o orçamento da execução esgotou-se antes de "
        "qualquer pesquisa devolver resultados, por isso não é possível redigir um relatório "
        "baseado em fontes.",
        "Este é o relatório da rodada {round} (avaliado em {score}/100), revisto com o que a "
        "rodada {later} encontrou: o relatório posterior foi avaliado abaixo.",
        "Este é o relatório da rodada {round} (avaliado em {score}/100): o relatório posterior "
        "foi avaliado abaixo e não encontrou nada de novo.",
        "**Sem relatório: a resposta do modelo redator não pôde ser usada ({problem}).** Abaixo "
        "estão as constatações tal como os pesquisadores as registraram.",
        "**Sem relatório: a resposta do modelo redator não pôde ser usada ({problem}), e nenhuma "
        "das constatações dos pesquisadores passou na verificação das citações.**",
    ),
    "nl": Words(
        "Dutch (Nederlands)",
        "Bronnen",
        " *(niet onderbouwd door de gevonden bronnen)*",
        " *(bronvermelding kon niet worden gecontroleerd)*",
        "Niet onderzocht",
        "Onderbouwing van de bronvermeldingen",
        "Er kon geen bewijs worden verzameld: elke zoekopdracht mislukte of leverde niets op, "
        "dus er kan geen op bronnen gebaseerd rapport worden geschreven.",
        "Er kon geen bewijs worden verzameld: het budget van de run was op voordat een "
        "zoekopdracht iets opleverde, dus er kan geen op bronnen gebaseerd rapport worden "
        "geschreven.",
        "Dit is het rapport van ronde {round} (beoordeeld met {score}/100), bijgewerkt met wat "
        "ronde {later} vond: het latere rapport werd lager beoordeeld.",
        "Dit is het rapport van ronde {round} (beoordeeld met {score}/100): het latere rapport "
        "werd lager beoordeeld en vond niets nieuws.",
        "**Geen rapport: het antwoord van het schrijfmodel was onbruikbaar ({problem}).** "
        "Hieronder staan de bevindingen zoals de onderzoekers ze vastlegden.",
        "**Geen rapport: het antwoord van het schrijfmodel was onbruikbaar ({problem}), en geen "
        "van de bevindingen van de onderzoekers doorstond de controle van de citaten.**",
    ),
    "ru": Words(
        "Russian (русский)",
        "Источники",
        " *(не подтверждается найденными источниками)*",
        " *(ссылку не удалось проверить)*",
        "Не исследовано",
        "Проверка ссылок",
        "Не удалось собрать никаких данных: все поиски завершились ошибкой или ничего не "
        "нашли, поэтому отчёт, основанный на источниках, написать нельзя.",
        "Не удалось собрать никаких свидетельств: бюджет запуска был исчерпан до того, как "
        "какой-либо поиск дал результат, поэтому отчёт с опорой на источники написать нельзя.",
        "Это отчёт раунда {round} (оценка {score}/100), дополненный тем, что нашёл раунд {later}: "
        "более поздний отчёт получил более низкую оценку.",
        "Это отчёт раунда {round} (оценка {score}/100): более поздний отчёт получил более низкую "
        "оценку и не нашёл ничего нового.",
        "**Отчёта нет: ответ модели-автора не удалось использовать ({problem}).** Ниже — "
        "находки в том виде, в каком их записали исследователи.",
        "**Отчёта нет: ответ модели-автора не удалось использовать ({problem}), и ни одна из "
        "находок исследователей не прошла проверку цитат.**",
    ),
    "und": replace(_ENGLISH, name="the language of the question"),
}


def _count(script: str, text: str) -> int:
    return len(_SCRIPT[script].findall(text))


_CYRILLIC = ("ru", "uk", "bg", "be", "sr", "mk")
_IDENTIFIERS: dict[tuple[str, ...], object] = {}
_IDENTIFIERS_BUILT = threading.Lock()


def _identifier(languages: tuple[str, ...]):
    """py3langid's identifier restricted to `languages` (`_LATIN` or `_CYRILLIC`): its bundled
    model is loaded once per process, also when several runs detect their question's language
    at the same moment (with a `functools.cache`, every first call that came before the first
    load ended loaded its own copy)."""
    found = _IDENTIFIERS.get(languages)
    if found is not None:
        return found
    with _IDENTIFIERS_BUILT:
        if not _IDENTIFIERS:
            _IDENTIFIERS.update(_restricted_identifiers((_LATIN, _CYRILLIC)))
        return _IDENTIFIERS[languages]


# py3langid's automaton, as its identifier holds it: the moves and each state's output
_AUTOMATON_TABLES = ("tk_nextmove", "tk_output", "_rowbase")


def _restricted_identifiers(language_sets: tuple[tuple[str, ...], ...]) -> dict:
    """One identifier for each set of languages, from one load of the model, sharing its
    automaton, each keeping only its own languages' weights. The library's own restriction
    keeps the whole model's weights too (27 MB, for a later reset we never make), and a second
    identifier loaded the model again.

    The automaton is held as its trie (`langid_automaton`: 1.3 MB where the table of every
    move is 39 MB) and its states' outputs as an array of ints, which the garbage collector
    never walks. A later py3langid whose tables are another automaton's keeps them as they are
    (its lists of ints as tuples)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from deep_research.domain.langid_automaton import trie_moves

    model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    automaton = {name: getattr(model, name) for name in _AUTOMATON_TABLES}
    compact = trie_moves(model.tk_nextmove, model.tk_row)
    if compact is not None:
        automaton["tk_nextmove"], automaton["_rowbase"] = compact
        automaton["tk_output"] = array("i", automaton["tk_output"])
    else:  # lists of ints as tuples, which the collector stops walking once it has seen them
        automaton = {n: tuple(t) if isinstance(t, list) else t for n, t in automaton.items()}
    identifiers = {}
    for languages in language_sets:
        model.set_languages(list(languages))
        identifier = LanguageIdentifier(
            model.nb_ptc,  # a copy of the languages' columns
            model.nb_pc,
            model.nb_classes,
            automaton["tk_nextmove"],
            automaton["tk_output"],
            norm_probs=True,
            tk_row=model.tk_row,
        )
        for name, table in automaton.items():
            setattr(identifier, name, table)
        identifiers[languages] = identifier
    return identifiers


def _chinese(text: str) -> LanguageCode:
    """Simplified or traditional, by the frequent characters whose forms differ."""
    simplified = sum(text.count(c) for c in set(text) & set(_SIMPLIFIED))
    traditional = sum(text.count(c) for c in set(text) & set(_TRADITIONAL))
    return "zh-Hant" if traditional > simplified else "zh-Hans"


def detect_language(text: str) -> LanguageCode:
    """The language `text` is written in, by script and, for Latin or Cyrillic, by py3langid."""
    han, kana, hangul = (_count(s, text) for s in ("han", "kana", "hangul"))
    counts = {
        "cjk": 2 * (han + kana + hangul),  # a CJK character carries about a word's meaning
        "latin": _count("latin", text),
        "cyrillic": _count("cyrillic", text),
        "other": _count("other", text),
    }
    script = max(counts, key=counts.get)
    if not counts[script]:
        return "en"
    if script == "cjk":
        if hangul > han:
            return "ko"
        if kana and kana >= 0.05 * (han + kana):
            return "ja"
        return _chinese(text)
    if script == "cyrillic":
        language, confidence = _identifier(_CYRILLIC).classify(text)
        return "und" if language != "ru" and confidence >= CONFIDENT else "ru"
    if script == "other":
        return "und"
    language, confidence = _identifier(_LATIN).classify(text)
    return language if confidence >= CONFIDENT else "en"


def words_for(language: str) -> Words:
    """The words of a report in `language` (English ones for a language we have none for)."""
    return WORDS.get(language, _ENGLISH)


def is_cjk(language: str) -> bool:
    """True for Chinese, Japanese and Korean, whose sentences and marks need no spaces."""
    return language in ("zh-Hans", "zh-Hant", "ja", "ko")


def script_of(text: str) -> str:
    """The script most of `text`'s letters are in: cjk, latin, cyrillic, other or none."""
    counts = {
        "cjk": sum(_count(s, text) for s in ("han", "kana", "hangul")),
        "latin": _count("latin", text),
        "cyrillic": _count("cyrillic", text),
        "other": _count("other", text),
    }
    script = max(counts, key=counts.get)
    return script if counts[script] else "none"


def run_language(question: str, chosen: str | None) -> LanguageCode:
    """The language a run writes in: the `language` setting, else the question's."""
    return chosen or detect_language(question)  # type: ignore[return-value]
