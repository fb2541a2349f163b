"""The documentation's relative links lead somewhere: every linked file exists and every
``#anchor`` names a heading of the page it points into (as GitHub makes anchors of headings)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("tts/**/*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, outside code blocks (a repeated heading gets ``-1``, ``-2``…)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#+\s+(.*)", line)
        if heading:
            anchor = heading_anchor(heading.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target} (no such heading)")
    return broken


def test_anchors_follow_github():
    assert heading_anchor("The fast student (bundled: `--vocoder vocos-student`)") == \
        "the-fast-student-bundled---vocoder-vocos-student"
    assert heading_anchor("Alignment against the truth") == "alignment-against-the-truth"


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## Same\n\n## Same\n\n```\n# not a heading\n```\n"
                    "[a](page.md#same-1) [b](#top) [c](missing.md) [d](#not-a-heading) [e](https://x.org/#y)\n")
    assert broken_links(page) == ["missing.md (no such file)", "#not-a-heading (no such heading)"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []
