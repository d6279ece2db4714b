"""The product rules the code cites live in this repository (docs/rules/), and every citation resolves.

The rules used to be two files outside the repository (a contract and a decisions list in a shared
folder); a fresh clone could not read what the comments pointed at. Now a comment cites
``docs/rules/<page>.md#<anchor>``, and this test fails on a citation of the old files, or on one whose
page or anchor does not exist (anchors are written into the headings as ``{#anchor}``). The same holds
for a citation of any other page of the docs site (``docs/operations/performance-history.md#profile``),
whose anchor may also be the one the site makes from a heading's text. And no comment cites what a
reader of the repository cannot open: an issue by its number, or the benchmarks' old notes
(bench/README.md, whose figures moved to docs/operations/performance*.md).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules"
DOCS = ROOT / "docs"
SCANNED = ("src", "tests", "sdk", "bench")
SUFFIXES = {".py", ".html", ".yaml", ".yml", ".json", ".css", ".js", ".md", ".toml", ".txt", ".ini"}
# Citations of the out-of-repository documents: their paths, or their numbered sections.
OUTSIDE = re.compile(r"\.\./shared|shared/spec|DECISIONS\.md|SPEC\.md|\bDECISIONS \d|\bSPEC \d")
CITATION = re.compile(r"docs/rules/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?")
# Any other page of the site: docs/<folder>/<page>.md, optionally #anchor.
PAGE_CITATION = re.compile(r"docs/((?!rules/)[a-z0-9-]+/[a-z0-9-]+\.md)(?:#([a-z0-9-]+))?")
UNREADABLE = re.compile(r"\b[Ii]ssues? \d+\b|bench/README\.md")
CODE_SUFFIXES = {".py", ".toml", ".css", ".html", ".js", ".sh", ".lua", ".ini", ".yaml", ".yml"}
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)
THIS_FILE = Path(__file__).resolve()


def scanned_files() -> list[Path]:
    files = []
    for top in SCANNED:
        for path in (ROOT / top).rglob("*"):
            skipped = any(part in {"__pycache__", "build", ".venv"} for part in path.parts)
            if path.is_file() and path.suffix in SUFFIXES and path.resolve() != THIS_FILE and not skipped:
                files.append(path)
    return files


def anchors(page: Path) -> set[str]:
    return set(re.findall(r"\{:?\s*#([a-z0-9-]+)\s*\}", page.read_text(encoding="utf-8")))


def heading_slugs(page: Path) -> set[str]:
    """The anchors the site gives headings without an explicit ``{#anchor}`` (Python-Markdown's toc slugify)."""
    slugs = set()
    for text in HEADING.findall(page.read_text(encoding="utf-8")):
        if re.search(r"\{:?\s*#", text):
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "").replace("*", "")
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        slugs.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower()))
    return slugs


def test_nothing_cites_documents_outside_the_repository() -> None:
    offenders = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "cite docs/rules/<page>.md#<anchor> instead:\n" + "\n".join(offenders)


def test_every_rules_citation_names_a_page_and_anchor_that_exist() -> None:
    broken = []
    cited = 0
    for path in scanned_files():
        for page, anchor in CITATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited += 1
            target = RULES / page
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: docs/rules/{page} does not exist")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{path.relative_to(ROOT)}: docs/rules/{page} has no anchor #{anchor}")
    assert cited > 100, cited  # the code does cite its rules; a scan that finds none is broken
    assert not broken, "\n".join(broken)


def test_every_docs_page_citation_names_a_page_and_anchor_that_exist() -> None:
    broken = []
    cited = 0
    for path in scanned_files():
        for page, anchor in PAGE_CITATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited += 1
            target = DOCS / page
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} does not exist")
            elif anchor and anchor not in anchors(target) | heading_slugs(target):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} has no anchor #{anchor}")
    assert cited > 10, cited  # the code does cite the site's pages; a scan that finds none is broken
    assert not broken, "\n".join(broken)


def test_no_comment_cites_an_issue_number_or_the_old_bench_notes() -> None:
    offenders = []
    for path in [*scanned_files(), *(ROOT / "bench").glob("*.sh"), ROOT / "pyproject.toml"]:
        if path.suffix not in CODE_SUFFIXES:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if UNREADABLE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "cite the docs page that holds the rule or the figure instead:\n" + "\n".join(offenders)
