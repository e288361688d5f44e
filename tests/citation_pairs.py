"""Statement/source pairs with known truth, for the citation tests and bench/bench_citations.py.

Sources are English (most of the web is); statements are copies, paraphrases and translations
(zh-Hans, zh-Hant, ja, ko, de, fr) that a careful reader would accept, and reversals, negations,
swapped or wrong numbers and wrong-source citations that such a reader would reject.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCES = {
    1: "Zstandard (zstd) compresses much faster than xz, particularly when multithreading is "
    "enabled.",
    2: "At its highest preset, xz produced archives about 12% smaller than zstd level 19 on the "
    "same nginx logs.",
    3: "Compressing the 40 GB log archive with xz -9 took 6 hours, while zstd -19 finished in "
    "40 minutes.",
    4: "For the internal cluster network, use IPv4 only, not IPv6, because the load balancer "
    "drops IPv6 traffic.",
    5: "Solar panel prices fell 12% in 2024 as manufacturers expanded capacity.",
    6: "Lithium iron phosphate cells lasted about 3,000 charge cycles before falling to 80% "
    "capacity.",
    7: "PostgreSQL 16 added parallel execution of FULL and RIGHT joins.",
    8: "The Rust compiler rejects programs that could cause data races at compile time.",
    9: "In the field trial, air-source heat pumps had an average seasonal efficiency of 2.8 in "
    "unrenovated houses.",
    10: "The trial enrolled 1,200 adults, and 54 of them reported mild side effects.",
    11: "The reactor sustained the plasma for 1,066 seconds, a record for the device.",
    12: "Brotli was designed by Google for compressing web fonts and HTTP responses.",
    13: "据统计，2023年中国经济增长了5.2%，高于预期。",
    14: "",  # a source whose page returned no text
}


@dataclass(frozen=True)
class Pair:
    """One citation: a statement, the source it cites, and whether that source supports it."""

    language: str
    kind: str  # copy | paraphrase | translation | reversal | negation | numbers | wrong-source
    statement: str
    source: int
    true: bool


def _pairs(language: str, true: bool, kind: str, *items: tuple[int, str]) -> list[Pair]:
    return [Pair(language, kind, statement, source, true) for source, statement in items]


PAIRS: list[Pair] = [
    # English: copies, paraphrases, and what a careful reader rejects.
    *_pairs(
        "en",
        True,
        "copy",
        (1, SOURCES[1]),
        (3, SOURCES[3]),
        (5, SOURCES[5]),
        (7, SOURCES[7]),
        (9, SOURCES[9]),
        (11, SOURCES[11]),
        (12, SOURCES[12]),
    ),
    *_pairs(
        "en",
        True,
        "paraphrase",
        (
            2,
            "On the same nginx logs, xz at its highest preset made archives roughly 12% smaller "
            "than zstd level 19.",
        ),
        (3, "zstd -19 compressed the 40 GB archive in 40 minutes; xz -9 needed 6 hours."),
        (
            4,
            "The internal cluster network should use only IPv4, since the load balancer drops "
            "IPv6 traffic.",
        ),
        (6, "LFP cells kept 80% of their capacity for roughly 3,000 cycles."),
        (8, "Rust's compiler catches potential data races before the program ever runs."),
        (10, "Of the 1,200 adults enrolled in the trial, 54 reported mild side effects."),
        (11, "The device set a record by holding its plasma for more than 17 minutes."),
        (13, "China's economy grew 5.2% in 2023, more than expected."),
    ),
    *_pairs("en", False, "reversal", (1, "xz compresses much faster than zstd."))
    + _pairs(
        "en", False, "reversal", (4, "For the internal cluster network, use IPv6 only, not IPv4.")
    )
    + _pairs(
        "en",
        False,
        "reversal",
        (8, "The Rust compiler accepts programs that could cause data races at compile time."),
    ),
    *_pairs(
        "en",
        False,
        "numbers",
        (
            3,
            "Compressing the 40 GB log archive with xz -9 took 40 minutes, while zstd -19 "
            "finished in 6 hours.",
        ),
        (2, "zstd level 19 produced archives about 12% smaller than xz."),
        (
            6,
            "Lithium iron phosphate cells lasted about 800 charge cycles before falling to 30% "
            "capacity.",
        ),
        (7, "PostgreSQL 15 added parallel execution of FULL and RIGHT joins."),
        (10, "The trial enrolled 54 adults, and 1,200 of them reported mild side effects."),
    ),
    *_pairs("en", False, "negation", (5, "Solar panel prices did not fall in 2024.")),
    *_pairs(
        "en",
        False,
        "wrong-source",
        (6, "Solar panel prices fell 12% in 2024."),
        (11, "Brotli was designed by Google for compressing web fonts."),
        (12, "Brotli was designed by Facebook for compressing web fonts and HTTP responses."),
        (14, "Brotli is fast."),
    ),
    # Simplified Chinese from English sources.
    *_pairs(
        "zh-Hans",
        True,
        "translation",
        (1, "zstd 的压缩速度比 xz 快得多，尤其在多线程模式下。"),
        (3, "用 xz -9 压缩 40 GB 的日志归档耗时 6 小时，而 zstd -19 只用了 40 分钟。"),
        (4, "内部集群网络应只使用 IPv4，而不是 IPv6，因为负载均衡器会丢弃 IPv6 流量。"),
        (5, "2024 年太阳能电池板价格下降了 12%，因为制造商扩大了产能。"),
        (8, "Rust 编译器会在编译时拒绝可能导致数据竞争的程序。"),
        (10, "该试验招募了 1200 名成年人，其中 54 人报告了轻微副作用。"),
        (11, "该反应堆将等离子体维持了 1066 秒，创下该装置的纪录。"),
        (13, "2023年中国经济增长了5.2%。"),
    ),
    *_pairs("zh-Hans", False, "reversal", (1, "xz 的压缩速度比 zstd 快得多。")),
    *_pairs(
        "zh-Hans", False, "negation", (7, "PostgreSQL 16 删除了 FULL 和 RIGHT 连接的并行执行。")
    ),
    *_pairs("zh-Hans", False, "numbers", (13, "2023年中国经济增长了2.5%。")),
    # Traditional Chinese.
    *_pairs(
        "zh-Hant",
        True,
        "translation",
        (2, "在相同的 nginx 日誌上，xz 最高壓縮等級產生的檔案比 zstd 19 級小約 12%。"),
        (6, "磷酸鐵鋰電池約可充放電 3,000 次，容量才降至 80%。"),
    ),
    *_pairs("zh-Hant", False, "reversal", (5, "2024 年太陽能板價格上漲了 12%。")),
    *_pairs("zh-Hant", False, "wrong-source", (12, "zstd 由 Facebook 開發。")),
    # Japanese.
    *_pairs(
        "ja",
        True,
        "translation",
        (
            1,
            "zstd は xz よりはるかに高速に圧縮でき、"
            "特にマルチスレッドを有効にした場合に顕著である。",
        ),
        (
            2,
            "同じ nginx ログで、xz の最高プリセットは "
            "zstd レベル 19 より約 12% 小さいアーカイブを作った。",
        ),
        (7, "PostgreSQL 16 では FULL 結合と RIGHT 結合の並列実行が追加された。"),
        (9, "実地試験では、未改修の住宅で空気熱源ヒートポンプの平均季節効率は 2.8 だった。"),
        (12, "Brotli は Google が Web フォントと HTTP レスポンスの圧縮のために設計した。"),
    ),
    *_pairs(
        "ja",
        False,
        "numbers",
        (3, "40 GB のログアーカイブの圧縮は xz -9 で 40 分、zstd -19 で 6 時間かかった。"),
        (5, "2024年に太陽光パネルの価格は21%下落した。"),
    ),
    # Korean.
    *_pairs(
        "ko",
        True,
        "translation",
        (
            3,
            "40GB 로그 아카이브를 xz -9로 압축하는 데 6시간이 걸렸고, zstd -19는 40분 만에 끝났다.",
        ),
        (6, "리튬인산철 배터리는 약 3,000회 충전 후 용량이 80%로 떨어졌다."),
        (8, "Rust 컴파일러는 데이터 경합을 일으킬 수 있는 프로그램을 컴파일 단계에서 거부한다."),
        (12, "Brotli는 Google이 웹 폰트와 HTTP 응답을 압축하기 위해 설계했다."),
    ),
    *_pairs("ko", False, "negation", (10, "이 임상시험에서는 부작용을 보고한 참가자가 없었다.")),
    # German.
    *_pairs(
        "de",
        True,
        "translation",
        (
            1,
            "Zstandard komprimiert deutlich schneller als xz, "
            "besonders mit aktiviertem Multithreading.",
        ),
        (
            4,
            "Im internen Cluster-Netz sollte nur IPv4 verwendet werden, nicht IPv6, weil der Load "
            "Balancer IPv6-Verkehr verwirft.",
        ),
        (
            5,
            "Die Preise für Solarmodule sanken 2024 um 12 %, da die "
            "Hersteller ihre Kapazitäten ausbauten.",
        ),
        (
            9,
            "Im Feldtest erreichten Luftwärmepumpen in unsanierten Häusern eine mittlere "
            "Jahresarbeitszahl von 2,8.",
        ),
        (
            10,
            "An der Studie nahmen 1.200 Erwachsene teil; 54 von ihnen "
            "berichteten über leichte Nebenwirkungen.",
        ),
    ),
    *_pairs(
        "de",
        False,
        "numbers",
        (2, "xz erzeugte Archive, die etwa 21 % kleiner waren als bei zstd Stufe 19."),
        (
            9,
            "Im Feldtest erreichten Luftwärmepumpen in unsanierten Häusern eine mittlere "
            "Jahresarbeitszahl von 4,2.",
        ),
    ),
    *_pairs(
        "de",
        False,
        "negation",
        (7, "PostgreSQL 16 unterstützt keine parallele Ausführung von FULL- und RIGHT-Joins."),
        (6, "LFP-Zellen hielten nicht einmal 300 Ladezyklen durch."),
    ),
    # French.
    *_pairs(
        "fr",
        True,
        "translation",
        (
            8,
            "Le compilateur Rust rejette dès la compilation les programmes susceptibles de "
            "provoquer des courses de données.",
        ),
        (
            11,
            "Le réacteur a maintenu le plasma pendant 1 066 "
            "secondes, un record pour l'installation.",
        ),
        (
            9,
            "Lors de l'essai sur le terrain, les pompes à chaleur aérothermiques ont atteint une "
            "efficacité saisonnière moyenne de 2,8 dans les maisons non rénovées.",
        ),
    ),
    *_pairs(
        "fr",
        False,
        "reversal",
        (4, "Pour le réseau interne du cluster, il faut utiliser uniquement IPv6 et non IPv4."),
    ),
]

QUESTIONS = {
    "en": "Compare zstd and xz for log archives",
    "zh-Hans": "比较 zstd 和 xz 在日志归档中的表现",
    "zh-Hant": "比較 zstd 與 xz 在日誌歸檔中的表現",
    "ja": "ログのアーカイブに zstd と xz のどちらを使うべきか",
    "ko": "로그 보관에 zstd와 xz 중 무엇이 나은가",
    "de": "Wie unterscheiden sich zstd und xz bei der Archivierung von Logdateien?",
    "fr": "Comment zstd et xz se comparent-ils pour l'archivage des journaux ?",
}
"""A question in each language, so that a report of that language's pairs gets its marks."""


def truth(statement: str, source_text: str) -> str | None:
    """The known verdict for a statement and the text of the source it cites, None if unknown."""
    for pair in PAIRS:
        excerpt = SOURCES[pair.source]
        if pair.statement == statement and (excerpt in source_text or not excerpt):
            return "supported" if pair.true else "unsupported"
    return None
