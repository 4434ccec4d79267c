"""Diagnostics shared by every stage: `file:line:col: error: message`, the line, a caret.

A stage that finds bad input raises CompileError (or collects several in an
ErrorList); the command line prints them with `format()` and exits 1.  Nothing
else should reach a user: a Python traceback is a bug.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SourceLoc:
    file: str
    line: int  # 1-based
    col: int   # 1-based


@dataclass
class Diagnostic:
    message: str
    loc: SourceLoc | None = None
    severity: str = "error"

    def format(self, source: str | None = None) -> str:
        if self.loc is None:
            return f"ptxc: {self.severity}: {self.message}"
        head = f"{self.loc.file}:{self.loc.line}:{self.loc.col}: {self.severity}: {self.message}"
        if source is None:
            return head
        lines = source.splitlines()
        if not 1 <= self.loc.line <= len(lines):
            return head
        text = lines[self.loc.line - 1].expandtabs(1)
        caret = " " * (max(self.loc.col, 1) - 1) + "^"
        return f"{head}\n{text}\n{caret}"


class CompileError(Exception):
    """One or more diagnostics about the user's input; `source` lets them show the line."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic, source: str | None = None):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = diagnostics
        self.source = source
        self.sources: dict[str, str] = {}   # file -> text, for diagnostics in other files (headers)
        super().__init__("; ".join(d.message for d in diagnostics))

    def with_sources(self, sources: dict[str, str]) -> "CompileError":
        self.sources = dict(sources)
        return self

    @classmethod
    def at(cls, message: str, file: str, line: int, col: int, source: str | None = None):
        return cls(Diagnostic(message, SourceLoc(file, line, col)), source)

    def source_of(self, diag: Diagnostic) -> str | None:
        if diag.loc is not None and diag.loc.file in self.sources:
            return self.sources[diag.loc.file]
        return self.source

    def format(self) -> str:
        return "\n".join(d.format(self.source_of(d)) for d in self.diagnostics)
