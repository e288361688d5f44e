"""Full-text search over a local folder of documents: an incremental SQLite FTS5 index, bm25 ranked.

Tokenizer: `porter unicode61 remove_diacritics 2`, with every CJK run (Han, kana, Hangul)
rewritten as overlapping character bigrams ("中文文档" -> "中文 文文 文档") before it is indexed,
and queries rewritten the same way; a lone CJK character in a query becomes a prefix query, so
it also finds the bigrams it starts. Measured on the 10,453 passages of the 2,000-file bench
corpus (contentless FTS5 tables, 204 queries of which 20 are Chinese two-character words):

    bigrams + unicode61  index  5.3 MB  build 0.23 s  p50 1.0 ms  p95 4.2 ms  Chinese misses  0/20
    unicode61 alone      index  5.3 MB  build 0.14 s  p50 1.0 ms  p95 4.1 ms  Chinese misses 20/20
    trigram              index 26.6 MB  build 0.71 s  p50 4.1 ms  p95 10.8 ms Chinese misses 20/20

unicode61 alone keeps an unbroken CJK run as one token, so only an identical run matches.
`trigram` matches no term shorter than three characters, which loses the two-character words
most Chinese queries are made of (and "Go", "AI"); it also has no stemming, matches inside
words ("cat" in "concatenate"), and its index was five times larger and its queries slower.

Every user query becomes quoted terms joined by OR, so quotes, hyphens, colons, AND/OR/NEAR,
parentheses or any other FTS5 syntax in it is plain text, and passages matching only some terms
still rank (lower). The full-text table is contentless (the passage text is stored once, in
`passages`); deletes replay the indexed values, rebuilt from that table by `_indexed`.

Each file's language is detected when it is indexed (`domain.language.detect_language` on 400
characters from its start and middle), so that a run can be told which languages to search the
folder in: a Chinese query finds nothing in English documents. Files are re-read only when their
(size, mtime_ns) changes. The folder is walked without following any symlink (an inside target is
indexed on its own; an outside one is refused with a warning), hidden files and folders (".git")
are ignored, every path is resolved and must stay inside the folder, and nothing is written into
it: the index lives at `index_path`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from deep_research.domain.language import CJK_CHARACTERS, detect_language
from deep_research.state import SearchHit
from deep_research.tools.corpus.passages import blocks_of, first_heading, passages_of
from deep_research.tools.corpus.reading import SUFFIXES, SkippedFile, kind_of, read_document

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "2"  # 2: each file's language
TOKENIZER = "porter unicode61 remove_diacritics 2"
MAX_FILE_BYTES = 64 * 1024 * 1024
CONTENT_LIMIT = 1200
MAX_QUERY_TERMS = 32
LANGUAGE_SAMPLE = 400  # characters of a document its language is detected from (its start
# and its middle: a licence or title page in another language does not decide it alone)
# bm25 column weights: a query term in a heading counts double; title and body count once.
BM25_WEIGHTS = (1.0, 2.0, 1.0)

_CJK_RUN = re.compile(f"[{CJK_CHARACTERS}]+")
_WORD = re.compile(r"\w+")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        title TEXT NOT NULL,
        passages INTEGER NOT NULL,
        skipped TEXT,
        language TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE IF NOT EXISTS passages (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files (id),
        heading TEXT NOT NULL,
        anchor TEXT NOT NULL,
        text TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS passages_by_file ON passages (file_id)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts "
    f"USING fts5(title, heading, body, content = '', tokenize = '{TOKENIZER}')",
)
_TABLES = ("passages_fts", "passages", "files", "meta")

_SEARCH = """
SELECT f.path, f.title, p.heading, p.anchor, p.text, -m.score
FROM (
    SELECT rowid, bm25(passages_fts, ?, ?, ?) AS score
    FROM passages_fts WHERE passages_fts MATCH ? ORDER BY score LIMIT ?
) AS m
JOIN passages AS p ON p.id = m.rowid
JOIN files AS f ON f.id = p.file_id
ORDER BY m.score
"""


class CorpusError(ValueError):
    """The local corpus cannot be searched; the message says why in one sentence."""


@dataclass(frozen=True)
class RefreshStats:
    """What one refresh did: file changes, files not indexed, passages now indexed, seconds.

    `files_skipped` counts every supported file that is not searchable after this refresh
    (unreadable, binary, empty, too large, or a symlink refused), including unchanged ones that
    were skipped before and are not re-read; the other file counts are this refresh's changes.
    """

    files_added: int = 0
    files_updated: int = 0
    files_removed: int = 0
    files_skipped: int = 0
    passages: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class _Known:
    """What the index remembers of one file."""

    id: int
    size: int
    mtime_ns: int
    skipped: bool


def cjk_bigrams(text: str) -> str:
    """Text with every CJK run replaced by its overlapping character bigrams, space separated."""

    def spaced(match: re.Match[str]) -> str:
        """One CJK run as bigrams (a lone character stays itself)."""
        run = match.group()
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        return f" {' '.join(grams)} "

    return _CJK_RUN.sub(spaced, text)


def fts_query(query: str) -> str:
    """A user's text as a safe FTS5 query: each word quoted, joined by OR ('' if no words)."""
    terms: list[str] = []
    for word in _WORD.findall(cjk_bigrams(query)):
        term = f'"{word}" *' if len(word) == 1 and _CJK_RUN.fullmatch(word) else f'"{word}"'
        if term not in terms:
            terms.append(term)
    return " OR ".join(terms[:MAX_QUERY_TERMS])


def check_fts5() -> None:
    """Raise CorpusError unless this Python's SQLite can build the FTS5 table we need."""
    with closing(sqlite3.connect(":memory:")) as db:
        try:
            db.execute(f"CREATE VIRTUAL TABLE probe USING fts5(body, tokenize = '{TOKENIZER}')")
        except sqlite3.OperationalError as error:
            raise CorpusError(
                f"This Python's SQLite {sqlite3.sqlite_version} lacks FTS5 ({error}), "
                "which local document search needs; use a Python built with FTS5."
            ) from error


def named_folder(corpus_dir: str | Path | None) -> Path:
    """The corpus folder as given; an empty or missing name is refused, never taken as "here"
    (the current folder is whatever the process was started in, not a folder anyone chose)."""
    if corpus_dir is None or not str(corpus_dir).strip():
        raise CorpusError("no corpus folder is named (corpus_dir is empty)")
    return Path(corpus_dir)


class LocalCorpus:
    """A folder of local documents searchable like a web search backend, via an SQLite index."""

    def __init__(self, corpus_dir: str | Path, index_path: str | Path) -> None:
        """Point at a folder and an index file outside it; nothing is read or built yet."""
        check_fts5()
        self.root = named_folder(corpus_dir).expanduser().resolve()
        self.index_path = Path(index_path).expanduser().resolve()
        self._check_folder()
        if self.index_path.is_relative_to(self.root):
            raise CorpusError(
                f"The index file {self.index_path} must live outside the corpus folder "
                f"{self.root}, which is never written to."
            )
        self._refresh_lock = threading.Lock()
        self._ready_lock = threading.Lock()
        self._ready = False

    # ------------------------------------------------------------ public API

    def refresh(self) -> RefreshStats:
        """Bring the index in line with the folder, re-reading only files whose stat changed."""
        started = time.perf_counter()
        self._check_folder()
        with self._refresh_lock, self._connect() as db:
            found, refused = self._scan()
            known = {
                path: _Known(file_id, size, mtime_ns, skipped is not None)
                for path, file_id, size, mtime_ns, skipped in db.execute(
                    "SELECT path, id, size, mtime_ns, skipped FROM files"
                )
            }
            with _transaction(db):
                counts = self._apply(db, found, known)
            documents, passages = db.execute(
                "SELECT count(*), coalesce(sum(passages), 0) FROM files WHERE passages > 0"
            ).fetchone()
        stats = RefreshStats(
            files_added=counts["added"],
            files_updated=counts["updated"],
            files_removed=counts["removed"],
            files_skipped=counts["skipped"] + refused,
            passages=passages,
            seconds=time.perf_counter() - started,
        )
        if not documents:
            raise CorpusError(
                f"The corpus folder {self.root} holds no readable documents "
                f"({', '.join(sorted(SUFFIXES))}); "
                f"{stats.files_skipped} file(s) were skipped."
            )
        self._ready = True
        return stats

    def search(self, query: str, max_results: int = 5) -> list[SearchHit]:
        """The passages that best match the query, best first, one hit per URL."""
        match = fts_query(query)
        if not match or max_results < 1:
            return []
        self._ensure_ready()
        with self._connect() as db:
            rows = db.execute(_SEARCH, (*BM25_WEIGHTS, match, max_results * 4)).fetchall()
        hits: list[SearchHit] = []
        for path, title, heading, anchor, text, score in rows:
            url = (self.root / path).as_uri() + (f"#{quote(anchor, safe='=-')}" if anchor else "")
            if any(hit.url == url for hit in hits):
                continue
            hits.append(
                SearchHit(
                    url=url,
                    title=_hit_title(title, heading),
                    content=text[:CONTENT_LIMIT],
                    score=score,
                    query=query,
                )
            )
            if len(hits) == max_results:
                break
        return hits

    def languages(self) -> dict[str, int]:
        """The languages of the documents indexed (`domain.language` codes; `und`: another
        one), with how many documents are in each, most first."""
        self._ensure_ready()
        with self._connect() as db:
            rows = db.execute(
                "SELECT language, count(*) AS n FROM files WHERE passages > 0 AND language != '' "
                "GROUP BY language ORDER BY n DESC, language"
            ).fetchall()
        return dict(rows)

    async def asearch(self, query: str, max_results: int = 5) -> list[SearchHit]:
        """`search` in a worker thread, so the event loop keeps running meanwhile."""
        return await asyncio.to_thread(self.search, query, max_results)

    # ------------------------------------------------------------ internals

    def _check_folder(self) -> None:
        """Raise CorpusError unless the corpus folder exists and is a directory."""
        if not self.root.exists():
            raise CorpusError(f"The corpus folder {self.root} does not exist.")
        if not self.root.is_dir():
            raise CorpusError(f"The corpus folder {self.root} is not a directory.")

    def _ensure_ready(self) -> None:
        """Refresh once before this instance's first search (the index is built on first use)."""
        if self._ready:
            return
        with self._ready_lock:
            if not self._ready:
                self.refresh()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A fresh connection to the index (one per call, so threads never share one)."""
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.index_path, timeout=30, isolation_level=None)
        try:
            self._prepare(db)
            yield db
        finally:
            db.close()

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Create the schema if missing; start over if it is another version or folder's."""
        try:
            if self._current(db):
                return
            db.execute("PRAGMA journal_mode = WAL")
            with _transaction(db):
                if self._current(db):
                    return
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                    logger.warning("Rebuilding the corpus index %s from scratch", self.index_path)
                for table in _TABLES:
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SCHEMA:
                    db.execute(statement)
                db.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("schema", SCHEMA_VERSION), ("root", str(self.root))],
                )
        except sqlite3.DatabaseError as error:
            raise CorpusError(
                f"The index file {self.index_path} is not a usable SQLite index ({error})."
            ) from error

    def _current(self, db: sqlite3.Connection) -> bool:
        """Whether the index file holds our schema version, built for this folder."""
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            return False
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        return meta == {"schema": SCHEMA_VERSION, "root": str(self.root)}

    def _scan(self) -> tuple[dict[str, os.stat_result], int]:
        """Supported regular files under the folder by relative path, and symlinks refused."""
        found: dict[str, os.stat_result] = {}
        refused = 0
        root = str(self.root)
        for directory, dirnames, filenames in os.walk(root, onerror=_walk_error):
            kept = []
            for name in dirnames:
                path = os.path.join(directory, name)
                if name.startswith("."):
                    continue
                if os.path.islink(path):
                    self._refuse_link(path)
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in filenames:
                path = os.path.join(directory, name)
                if name.startswith(".") or kind_of(Path(name)) is None:
                    continue
                if not _utf8(path):  # the index stores names as UTF-8 text
                    shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                    logger.warning("Skipping %s: its name is not valid UTF-8", ascii(shown))
                    refused += 1
                    continue
                try:
                    info = os.lstat(path)
                except OSError as error:
                    logger.warning("Skipping %s: cannot be examined (%s)", path, error.strerror)
                    refused += 1
                    continue
                if stat.S_ISLNK(info.st_mode):
                    refused += self._refuse_link(path)
                elif stat.S_ISREG(info.st_mode) and self._inside(path):
                    found[Path(path).relative_to(self.root).as_posix()] = info
        return found, refused

    def _inside(self, path: str) -> bool:
        """Whether a path's real location is inside the corpus folder (warn if it is not)."""
        if Path(os.path.realpath(path)).is_relative_to(self.root):
            return True
        logger.warning("Skipping %s: its real path is outside the corpus folder", path)
        return False

    def _refuse_link(self, path: str) -> int:
        """Never follow a symlink; warn if it leads out of the folder. 1 if it was refused."""
        if self._inside(path):
            logger.debug("Not following symlink %s: its target is indexed on its own", path)
            return 0
        return 1

    def _apply(
        self, db: sqlite3.Connection, found: dict[str, os.stat_result], known: dict[str, _Known]
    ) -> dict[str, int]:
        """Write the folder's changes into the index (inside the caller's transaction)."""
        counts = {"added": 0, "updated": 0, "removed": 0, "skipped": 0}
        for path in known.keys() - found.keys():
            _forget(db, known[path].id, drop_file=True)
            counts["removed"] += 1
        for path in sorted(found):
            info, old = found[path], known.get(path)
            if old and (old.size, old.mtime_ns) == (info.st_size, info.st_mtime_ns):
                counts["skipped"] += int(old.skipped)
                continue
            if old:
                _forget(db, old.id, drop_file=False)
            indexed = self._index_file(db, path, info, old)
            if not indexed:
                counts["skipped"] += 1
            else:
                counts["updated" if old else "added"] += 1
        return counts

    def _index_file(
        self, db: sqlite3.Connection, path: str, info: os.stat_result, old: _Known | None
    ) -> bool:
        """Read one file and store its passages; on a SkippedFile, remember it and warn."""
        full = self.root / path
        try:
            if info.st_size > MAX_FILE_BYTES:
                raise SkippedFile(f"is larger than {MAX_FILE_BYTES // 2**20} MiB")
            document = read_document(full)
            blocks = blocks_of(document)
            passages = passages_of(blocks)
            if not passages:
                raise SkippedFile("holds no text")
            title = document.title or first_heading(blocks) or full.name
            skipped = None
            language = detect_language(_language_sample(" ".join(p.text for p in passages)))
        except SkippedFile as reason:
            logger.warning("Skipping %s: %s", full, reason)
            passages, title, skipped, language = [], full.name, str(reason), ""
        row = (path, info.st_size, info.st_mtime_ns, title, len(passages), skipped, language)
        if old:
            db.execute(
                "UPDATE files SET path = ?, size = ?, mtime_ns = ?, title = ?, passages = ?, "
                "skipped = ?, language = ? WHERE id = ?",
                (*row, old.id),
            )
            file_id = old.id
        else:
            file_id = db.execute(
                "INSERT INTO files (path, size, mtime_ns, title, passages, skipped, language) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            ).lastrowid
        for passage in passages:
            passage_id = db.execute(
                "INSERT INTO passages (file_id, heading, anchor, text) VALUES (?, ?, ?, ?)",
                (file_id, passage.heading, passage.anchor, passage.text),
            ).lastrowid
            db.execute(
                "INSERT INTO passages_fts (rowid, title, heading, body) VALUES (?, ?, ?, ?)",
                (passage_id, *_indexed(title, passage.heading, passage.text)),
            )
        return skipped is None


def _language_sample(text: str) -> str:
    """What a document's language is detected from: `LANGUAGE_SAMPLE` characters, half from its
    start and half from its middle (py3langid takes about 0.3 ms for 400 characters)."""
    if len(text) <= LANGUAGE_SAMPLE:
        return text
    half, middle = LANGUAGE_SAMPLE // 2, len(text) // 2
    return f"{text[:half]} {text[middle : middle + half]}"


def _utf8(path: str) -> bool:
    """Whether a path from the file system is valid UTF-8 (not bytes smuggled as surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _hit_title(title: str, heading: str) -> str:
    """'Title — heading', without repeating the title when the heading path starts with it."""
    if heading == title:
        return title
    heading = heading.removeprefix(f"{title} > ")
    return f"{title} — {heading}" if heading else title


def _forget(db: sqlite3.Connection, file_id: int, *, drop_file: bool) -> None:
    """Delete a file's passages from the index, and its row too if `drop_file`.

    The full-text table is contentless, so a delete must repeat the values once inserted:
    they are rebuilt from the stored title, heading and text by the same `_indexed`.
    """
    rows = db.execute(
        "SELECT p.id, f.title, p.heading, p.text FROM passages AS p "
        "JOIN files AS f ON f.id = p.file_id WHERE p.file_id = ?",
        (file_id,),
    ).fetchall()
    db.executemany(
        "INSERT INTO passages_fts (passages_fts, rowid, title, heading, body) "
        "VALUES ('delete', ?, ?, ?, ?)",
        [
            (passage_id, *_indexed(title, heading, text))
            for passage_id, title, heading, text in rows
        ],
    )
    db.execute("DELETE FROM passages WHERE file_id = ?", (file_id,))
    if drop_file:
        db.execute("DELETE FROM files WHERE id = ?", (file_id,))


def _indexed(title: str, heading: str, text: str) -> tuple[str, str, str]:
    """The (title, heading, body) the full-text table indexes for one passage."""
    return cjk_bigrams(title), cjk_bigrams(heading), cjk_bigrams(text)


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back if anything raises (then re-raised)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _walk_error(error: OSError) -> None:
    """A folder the walk cannot enter is skipped with a warning, not a crash."""
    logger.warning("Skipping %s: cannot be listed (%s)", error.filename, error.strerror)
