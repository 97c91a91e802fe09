#!/usr/bin/env python3
"""Checks docs/errors.md against the code (ctest docs.errors_table; standard library only).

Every table of docs/errors.md with a "message (template)" and a "test" column is read row by
row:

- each code span of the message column is a message template: the text between placeholders
  (`<file>`, `<n>`, `<…>`, anything in angle brackets) must occur in the string literals of
  include/ (adjacent literals joined, escapes undone), either inside one literal or as a run of
  literals (the end of one, whole ones, the start of another), as a message built by `+` is;
  pieces without a letter or digit (": ", ", ") are not checked;
- the test column is "—" or one or more `"<TEST_CASE name>" (<file>.cpp)`, separated by ";";
  each file must exist under tests/ and hold TEST_CASE("<name>" (the name may be split into
  adjacent literals over several lines).
- no row is longer than 320 characters.

Exits 1 naming every failing row (section and condition), 0 otherwise; prints the row counts.

usage: check_errors_table.py [REPO_ROOT]
"""
import os
import re
import sys

MAX_ROW = 320


def cpp_literals(text):
    """The string literals of C++ source `text`, adjacent ones joined, escapes undone."""
    out = []
    i, n = 0, len(text)
    current = None  # the literal being joined, or None
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            if current is not None:
                out.append(current)
                current = None
            continue
        if c == '"':
            j = i + 1
            buf = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    e = text[j + 1]
                    buf.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(e, e))
                    j += 2
                else:
                    buf.append(text[j])
                    j += 1
            s = "".join(buf)
            current = s if current is None else current + s
            i = j + 1
            continue
        if not c.isspace() and current is not None:
            out.append(current)
            current = None
        i += 1
    if current is not None:
        out.append(current)
    return out


class Corpus:
    def __init__(self, root):
        lits = []
        for d, _, files in os.walk(os.path.join(root, "include")):
            for f in files:
                if f.endswith((".hpp", ".h")):
                    with open(os.path.join(d, f), encoding="utf-8") as fh:
                        lits.extend(cpp_literals(fh.read()))
        self.literals = [s for s in set(lits) if s]
        self.whole = set(self.literals)
        self.suffixes = {s[k:] for s in self.literals for k in range(len(s))}
        self.prefixes = {s[:k] for s in self.literals for k in range(1, len(s) + 1)}

    def has(self, piece):
        if any(piece in s for s in self.literals):
            return True
        # A run of literals: a suffix of one, whole ones, a prefix of another.
        n = len(piece)
        reach = [False] * (n + 1)
        for j in range(1, n):
            if piece[:j] in self.suffixes:
                reach[j] = True
        for i in range(1, n):
            if not reach[i]:
                continue
            if piece[i:] in self.prefixes:
                return True
            for j in range(i + 1, n):
                if piece[i:j] in self.whole:
                    reach[j] = True
        return False


def split_row(line):
    """Cells of a Markdown table row; '|' inside code spans or escaped does not split."""
    cells, buf, i, tick = [], [], 0, 0
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    while i < len(body):
        c = body[i]
        if c == "`":
            j = i
            while j < len(body) and body[j] == "`":
                j += 1
            run = j - i
            tick = 0 if tick == run else (run if tick == 0 else tick)
            buf.append(body[i:j])
            i = j
            continue
        if c == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            buf.append("|")
            i += 2
            continue
        if c == "|" and tick == 0:
            cells.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
        i += 1
    cells.append("".join(buf).strip())
    return cells


CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
PLACEHOLDER = re.compile(r"<[^<>]+>")
TEST_REF = re.compile(r'"([^"]+)"\s*\(([\w./-]+\.cpp)\)')


TEST_CASE_RE = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\\n]|\\.)*"\s*)+)')


def test_case_names(text):
    """The names of the Catch2 TEST_CASEs of `text`, adjacent literals joined."""
    return {"".join(cpp_literals(m.group(1))) for m in TEST_CASE_RE.finditer(text)}


def templates(cell):
    out = []
    for m in CODE_SPAN.finditer(cell):
        t = m.group(2)
        if len(m.group(1)) > 1 and t.startswith(" ") and t.endswith(" "):
            t = t[1:-1]
        out.append(t)
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    doc = os.path.join(root, "docs", "errors.md")
    with open(doc, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    corpus = Corpus(root)
    test_files = {}
    for d, _, files in os.walk(os.path.join(root, "tests")):
        for f in files:
            if f.endswith(".cpp"):
                test_files.setdefault(f, os.path.join(d, f))
    test_text = {}

    errors = []
    rows = with_test = 0
    section = "(no section)"
    header = None
    for lineno, line in enumerate(lines, 1):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = split_row(line)
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        if "message (template)" not in header or "test" not in header:
            continue
        rows += 1
        where = f"docs/errors.md:{lineno}: [{section}] row '{cells[0]}'"
        if len(line) > MAX_ROW:
            errors.append(f"{where}: {len(line)} characters, more than {MAX_ROW}")
        if len(cells) != len(header):
            errors.append(f"{where}: {len(cells)} cells, the header has {len(header)}")
            continue
        message = cells[header.index("message (template)")]
        tmpls = templates(message)
        if not tmpls:
            errors.append(f"{where}: no message template (a code span) in the message column")
        for t in tmpls:
            for piece in PLACEHOLDER.split(t):
                piece = piece.strip()
                if not re.search(r"[A-Za-z0-9]", piece):
                    continue
                if not corpus.has(piece):
                    errors.append(f"{where}: template piece '{piece}' (of `{t}`) occurs in no "
                                  "string literal of include/")
        test = cells[header.index("test")]
        if test in ("—", "-"):
            continue
        refs = TEST_REF.findall(test)
        if not refs or len(refs) != len([p for p in test.split(";") if p.strip()]):
            errors.append(f"{where}: test column '{test}' is not '—' or "
                          "'\"<TEST_CASE name>\" (<file>.cpp)' separated by ';'")
            continue
        ok = True
        for name, fname in refs:
            path = test_files.get(os.path.basename(fname))
            if path is None:
                errors.append(f"{where}: test file {fname} is not in tests/")
                ok = False
                continue
            if path not in test_text:
                with open(path, encoding="utf-8") as fh:
                    test_text[path] = test_case_names(fh.read())
            if name not in test_text[path]:
                errors.append(f'{where}: {fname} has no TEST_CASE("{name}")')
                ok = False
        with_test += ok

    for e in errors:
        print(e)
    print(f"docs/errors.md: {rows} rows, {with_test} with a test, {rows - with_test} without; "
          f"{len(errors)} problem(s)")
    if rows == 0:
        print("docs/errors.md: no table with a 'message (template)' and a 'test' column")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
