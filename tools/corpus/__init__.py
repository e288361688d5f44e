"""Local-documents search: research over your own folder of Markdown, text, RST, HTML and PDF."""

from deep_research.tools.corpus.index import CorpusError, LocalCorpus, RefreshStats

__all__ = ["CorpusError", "LocalCorpus", "RefreshStats"]
