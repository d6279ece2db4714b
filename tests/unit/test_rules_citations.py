"""The product rules the code cites live in this repository (docs/rules/), and every citation resolves.

The rules used to be two files outside the repository (a contract and a decisions list in a shared
folder); a fresh clone could not read what the comments pointed at. Now a comment cites
``docs/rules/<page>.md#<anchor>``, and this test fails on a citation of the old files, or on one whose
page or anchor does not exist (anchors are written into the headings as ``{#anchor}``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules"
SCANNED = ("src", "tests", "sdk")
SUFFIXES = {".py", ".html", ".yaml", ".yml", ".json", ".css", ".js", ".md", ".toml", ".txt", ".ini"}
# Citations of the out-of-repository documents: their paths, or their numbered sections.
OUTSIDE = re.compile(r"\.\./shared|shared/spec|DECISIONS\.md|SPEC\.md|\bDECISIONS \d|\bSPEC \d")
CITATION = re.compile(r"docs/rules/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?")
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
    return set(re.findall(r"\{#([a-z0-9-]+)\}", page.read_text(encoding="utf-8")))


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
