"""The words the exports add around a report (contents, facts, verdicts, tables), per language.

A report is written in its run's language; the page around it must not switch to English. Every
label an export adds is here, for each language `domain.language` writes reports in; any other
language gets the English ones. The headings a report itself carries (sources, evidence) are in
`domain.language.Words`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Labels:
    """What an export says around the report, in one language."""

    report: str  # the title when there is no question
    contents: str
    date: str
    model: str
    rounds: str
    stop_reason: str
    cost: str
    quality: str
    citations_supported: str
    thread: str
    unknown: str
    supported: str  # verdicts
    partial: str
    unsupported: str
    not_checked: str
    lexical: str  # how a citation was checked
    by_model: str
    fallback: str
    rewrite: str
    back: str
    source: str  # evidence table columns
    statement: str
    verdict: str
    method: str
    evidence: str
    none_checked: str
    footer: str
    source_filter: str  # the run header's row naming the sources a run kept to
    read_at: str  # when the text a citation rests on was read (evidence lines)

    def verdict_name(self, verdict: str | None) -> str:
        """A citation check's verdict as a reader reads it (None: not checked)."""
        names = {"supported": self.supported, "partial": self.partial}
        return names.get(verdict or "", self.unsupported if verdict else self.not_checked)

    def method_name(self, method: str) -> str:
        """How a citation was checked, as a reader reads it."""
        names = {"lexical": self.lexical, "model": self.by_model, "fallback": self.fallback}
        return names.get(method, method)


ENGLISH = Labels(
    "Research report",
    "Contents",
    "date",
    "model",
    "rounds",
    "stop reason",
    "cost",
    "quality",
    "citations supported",
    "thread",
    "unknown",
    "supported",
    "partly supported",
    "not supported",
    "not checked",
    "lexical",
    "model",
    "fallback",
    "rewrite",
    "back",
    "source",
    "statement",
    "verdict",
    "method",
    "evidence",
    "(no cited statements were checked)",
    "Written by deep-research. Each citation links to the passage its check kept; marked "
    "statements found no support in the sources.",
    source_filter="sources kept to",
    read_at="read",
)

LABELS: dict[str, Labels] = {
    "en": ENGLISH,
    "zh-Hans": Labels(
        "研究报告",
        "目录",
        "日期",
        "模型",
        "轮次",
        "结束原因",
        "费用",
        "质量",
        "引用获支持",
        "线程",
        "未知",
        "有支持",
        "部分支持",
        "无支持",
        "未核查",
        "文字比对",
        "模型判断",
        "后备",
        "改写",
        "返回",
        "来源",
        "陈述",
        "结论",
        "方法",
        "证据",
        "（没有核查任何引用的陈述）",
        "由 deep-research 撰写。每个引用都链接到核查时保留的原文段落；"
        "被标记的陈述在来源中找不到支持。",
        source_filter="来源限定",
        read_at="读取于",
    ),
    "zh-Hant": Labels(
        "研究報告",
        "目錄",
        "日期",
        "模型",
        "輪次",
        "結束原因",
        "費用",
        "品質",
        "引用獲支持",
        "執行緒",
        "未知",
        "有支持",
        "部分支持",
        "無支持",
        "未核查",
        "文字比對",
        "模型判斷",
        "後備",
        "改寫",
        "返回",
        "來源",
        "陳述",
        "結論",
        "方法",
        "證據",
        "（沒有核查任何引用的陳述）",
        "由 deep-research 撰寫。每個引用都連結到核查時保留的原文段落；"
        "被標記的陳述在來源中找不到支持。",
        source_filter="來源限定",
        read_at="讀取於",
    ),
    "ja": Labels(
        "調査レポート",
        "目次",
        "日付",
        "モデル",
        "ラウンド",
        "終了理由",
        "費用",
        "品質",
        "裏付けのある引用",
        "スレッド",
        "不明",
        "裏付けあり",
        "一部裏付けあり",
        "裏付けなし",
        "未検証",
        "字句照合",
        "モデル判定",
        "代替",
        "書き直し",
        "戻る",
        "出典",
        "記述",
        "判定",
        "方法",
        "根拠",
        "（検証された引用はありません）",
        "deep-research が作成。各引用は検証で確認した箇所にリンクしています。"
        "印の付いた記述は出典で裏付けられませんでした。",
        source_filter="情報源の絞り込み",
        read_at="取得日時",
    ),
    "ko": Labels(
        "조사 보고서",
        "목차",
        "날짜",
        "모델",
        "라운드",
        "종료 사유",
        "비용",
        "품질",
        "뒷받침된 인용",
        "스레드",
        "알 수 없음",
        "뒷받침됨",
        "일부 뒷받침됨",
        "뒷받침되지 않음",
        "확인하지 않음",
        "문자 대조",
        "모델 판단",
        "대체",
        "재작성",
        "돌아가기",
        "출처",
        "진술",
        "판정",
        "방법",
        "근거",
        "(확인한 인용 진술이 없습니다)",
        "deep-research가 작성했습니다. 각 인용은 검증에서 확인한 구절로 연결됩니다. "
        "표시된 진술은 출처에서 뒷받침되지 않았습니다.",
        source_filter="출처 제한",
        read_at="읽은 시각",
    ),
    "de": Labels(
        "Recherchebericht",
        "Inhalt",
        "Datum",
        "Modell",
        "Runden",
        "Abbruchgrund",
        "Kosten",
        "Qualität",
        "belegte Zitate",
        "Thread",
        "unbekannt",
        "belegt",
        "teilweise belegt",
        "nicht belegt",
        "nicht geprüft",
        "wörtlich",
        "Modell",
        "Ersatz",
        "Neufassung",
        "zurück",
        "Quelle",
        "Aussage",
        "Urteil",
        "Methode",
        "Beleg",
        "(keine zitierte Aussage wurde geprüft)",
        "Geschrieben von deep-research. Jedes Zitat verweist auf die Stelle, die seine Prüfung "
        "gefunden hat; markierte Aussagen fanden in den Quellen keinen Beleg.",
        source_filter="Quellenauswahl",
        read_at="gelesen",
    ),
    "fr": Labels(
        "Rapport de recherche",
        "Sommaire",
        "date",
        "modèle",
        "tours",
        "motif d'arrêt",
        "coût",
        "qualité",
        "citations étayées",
        "fil",
        "inconnu",
        "étayé",
        "partiellement étayé",
        "non étayé",
        "non vérifié",
        "lexicale",
        "modèle",
        "repli",
        "réécriture",
        "retour",
        "source",
        "affirmation",
        "verdict",
        "méthode",
        "preuve",
        "(aucune affirmation citée n'a été vérifiée)",
        "Rédigé par deep-research. Chaque citation renvoie au passage retenu par sa vérification ; "
        "les affirmations marquées ne sont pas étayées par les sources.",
        source_filter="sources retenues",
        read_at="lu le",
    ),
    "es": Labels(
        "Informe de investigación",
        "Índice",
        "fecha",
        "modelo",
        "rondas",
        "motivo de parada",
        "coste",
        "calidad",
        "citas respaldadas",
        "hilo",
        "desconocido",
        "respaldado",
        "parcialmente respaldado",
        "no respaldado",
        "sin comprobar",
        "léxica",
        "modelo",
        "alternativa",
        "reescritura",
        "volver",
        "fuente",
        "afirmación",
        "veredicto",
        "método",
        "evidencia",
        "(no se comprobó ninguna afirmación citada)",
        "Escrito por deep-research. Cada cita enlaza con el pasaje que conservó su comprobación; "
        "las afirmaciones marcadas no encontraron respaldo en las fuentes.",
        source_filter="fuentes admitidas",
        read_at="leído",
    ),
    "it": Labels(
        "Rapporto di ricerca",
        "Indice",
        "data",
        "modello",
        "round",
        "motivo di arresto",
        "costo",
        "qualità",
        "citazioni supportate",
        "thread",
        "sconosciuto",
        "supportato",
        "parzialmente supportato",
        "non supportato",
        "non verificato",
        "lessicale",
        "modello",
        "ripiego",
        "riscrittura",
        "indietro",
        "fonte",
        "affermazione",
        "verdetto",
        "metodo",
        "prova",
        "(nessuna affermazione citata è stata verificata)",
        "Scritto da deep-research. Ogni citazione rimanda al passo conservato dalla sua verifica; "
        "le affermazioni segnate non hanno trovato supporto nelle fonti.",
        source_filter="fonti ammesse",
        read_at="letto",
    ),
    "pt": Labels(
        "Relatório de pesquisa",
        "Sumário",
        "data",
        "modelo",
        "rodadas",
        "motivo de parada",
        "custo",
        "qualidade",
        "citações sustentadas",
        "thread",
        "desconhecido",
        "sustentado",
        "parcialmente sustentado",
        "não sustentado",
        "não verificado",
        "léxica",
        "modelo",
        "alternativa",
        "reescrita",
        "voltar",
        "fonte",
        "afirmação",
        "veredito",
        "método",
        "evidência",
        "(nenhuma afirmação citada foi verificada)",
        "Escrito por deep-research. Cada citação leva ao trecho que a sua verificação guardou; "
        "as afirmações marcadas não encontraram sustentação nas fontes.",
        source_filter="fontes admitidas",
        read_at="lido",
    ),
    "nl": Labels(
        "Onderzoeksrapport",
        "Inhoud",
        "datum",
        "model",
        "rondes",
        "stopreden",
        "kosten",
        "kwaliteit",
        "onderbouwde bronvermeldingen",
        "thread",
        "onbekend",
        "onderbouwd",
        "deels onderbouwd",
        "niet onderbouwd",
        "niet gecontroleerd",
        "letterlijk",
        "model",
        "terugval",
        "herschreven",
        "terug",
        "bron",
        "bewering",
        "oordeel",
        "methode",
        "bewijs",
        "(geen geciteerde bewering is gecontroleerd)",
        "Geschreven door deep-research. Elke bronvermelding verwijst naar de passage die de "
        "controle bewaarde; gemarkeerde beweringen vonden geen steun in de bronnen.",
        source_filter="toegelaten bronnen",
        read_at="gelezen",
    ),
    "ru": Labels(
        "Исследовательский отчёт",
        "Содержание",
        "дата",
        "модель",
        "раунды",
        "причина остановки",
        "стоимость",
        "качество",
        "подтверждённые ссылки",
        "поток",
        "неизвестно",
        "подтверждено",
        "частично подтверждено",
        "не подтверждено",
        "не проверено",
        "текстовое сравнение",
        "модель",
        "запасной вариант",
        "переписано",
        "назад",
        "источник",
        "утверждение",
        "вердикт",
        "метод",
        "свидетельство",
        "(ни одно процитированное утверждение не проверялось)",
        "Написано deep-research. Каждая ссылка ведёт к фрагменту, сохранённому при проверке; "
        "отмеченные утверждения не нашли подтверждения в источниках.",
        source_filter="отбор источников",
        read_at="прочитано",
    ),
}


def labels_for(language: str) -> Labels:
    """The export's words in `language` (English for a language we have none for)."""
    return LABELS.get(language, ENGLISH)
