"""Reports people can hand on: the finished report as Markdown, HTML, Word or PDF.

`document` turns a run's output into one structure (from markdown-it-py's tokens); each format
renders that structure, and none re-parses another's output (the PDF is the HTML page, printed).
"""
