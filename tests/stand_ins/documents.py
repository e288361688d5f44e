"""Real PDF files for tests and benchmarks, written with pypdf (a Helvetica text stream a page)."""

from __future__ import annotations

import io

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def make_pdf(
    pages: list[str],
    title: str | None = None,
    password: str | None = None,
    modified: str | None = None,
) -> bytes:
    """A PDF whose page N shows the lines of `pages[N]` (one per line of the string);
    `modified`: its metadata's modification date, as PDF writes dates (D:20220304120000Z)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
    for text in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
        shown = " ".join(f"({line}) Tj T*" for line in text.splitlines() or [""])
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 11 Tf 14 TL 60 740 Td {shown} ET".encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    if title:
        writer.add_metadata({"/Title": title})
    if modified:
        writer.add_metadata({"/ModDate": modified})
    if password:
        writer.encrypt(password, algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


LOG_ARCHIVES_QUESTION = "Compare zstd and xz for log archives"
LOG_ARCHIVES = {  # a small folder for real-model runs: two notes a 270M model can cite
    "zstd.md": "# zstd\n\nzstd (Zstandard) is a fast lossless compressor from Facebook. At "
    "level 3 it compresses text logs to about a quarter of their size and decompresses at over "
    "1 GB/s per core. Levels run from 1 to 19.\n",
    "xz.md": "# xz\n\nxz uses the LZMA2 algorithm. It compresses logs 10-20% smaller than zstd "
    "at its highest levels, but compresses several times slower and decompresses near "
    "100 MB/s.\n",
}
