"""Issue 42 (6): the documentation site (mkdocs.yml, docs/) builds in strict mode in the suite,
so CI builds it: a broken link, a missing anchor, a page outside the navigation or an API
page that cannot be generated fails. The build fetches nothing: it runs here with every
proxy variable pointing at a closed port, so a plugin or theme that reached for the
network (web fonts, a download) would fail it. The Python API reference covers every
name of `agentrt.__all__`. The code blocks of every page run in tests/test_readme_code.py."""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import agentrt
from tests._markdown import markdown_files

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "mkdocs.yml"
DOCS = ROOT / "docs"
API_PAGE = DOCS / "reference" / "api.md"
# Plugins known to build offline. A new one is added here only once it is known to fetch
# nothing at build time (Material's `privacy` and `social` plugins download, for example).
OFFLINE_PLUGINS = {"search", "mkdocstrings"}


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold `!!python/name:` tags (Material's emoji options); read as text."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: suffix)


def _config() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(CONFIG.read_text(), Loader=_Loader)
    return loaded


def _offline_env() -> dict[str, str]:
    """The environment of a build that cannot reach anything: every proxy a closed port."""
    env = dict(os.environ)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env[name] = "http://127.0.0.1:9"
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    env["NO_MKDOCS_2_WARNING"] = "1"  # Material's banner about its successor, on stderr
    return env


def _mkdocs(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", *args],
        cwd=cwd,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture(scope="module")
def typed_view() -> None:
    """mkdocstrings reads the package through the view `./dev` makes (build/typed), as mypy
    does; make it when a checkout has not run `./dev` yet."""
    if not (ROOT / "build" / "typed" / "agentrt" / "__init__.py").exists():
        subprocess.run([str(ROOT / "dev"), "typed-view"], cwd=ROOT, check=True)


def _nav_pages(nav: list[Any]) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("typed_view")
def test_the_site_builds_in_strict_mode_offline(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = _mkdocs("build", "--strict", "--site-dir", str(site))
    assert built.returncode == 0, built.stderr[-4000:]
    assert "WARNING" not in built.stderr, built.stderr[-4000:]
    html = (site / "reference" / "api" / "index.html").read_text()
    missing = [name for name in agentrt.__all__ if f'id="agentrt.{name}"' not in html]
    assert not missing, f"the API reference did not render: {missing}"
    # Pages are generated, not copied: the guarantee pages and the benchmarks are there.
    for page in ("concepts/write-fence", "architecture", "benchmarks/history"):
        assert (site / page / "index.html").is_file(), page
    # Every section heading of every page renders as one: a fence the renderer does not
    # take (`python compile` did) turns the rest of the page into text without a warning.
    swallowed = [
        f"{md.relative_to(DOCS)}: {count}"
        for md in DOCS.rglob("*.md")
        if (count := _headings(md)) > _rendered(site, md)
    ]
    assert not swallowed, f"headings not rendered (page: ## headings in its source): {swallowed}"


def _headings(md: Path) -> int:
    """Level-2 headings outside code blocks."""
    count, fenced = 0, False
    for line in md.read_text().splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            count += 1
    return count


def _rendered(site: Path, md: Path) -> int:
    rel = md.relative_to(DOCS).with_suffix("")
    page = site / (rel.parent if rel.name == "index" else rel) / "index.html"
    return page.read_text().count("<h2 id=") if page.is_file() else 0


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The strict settings catch what they are meant to: a link to a missing page, and one
    to a missing anchor (mkdocs.yml's `validation`), with the site's own theme."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](missing.md) and [nowhere](#no-such-heading)\n")
    config = _config()
    config.update(docs_dir=str(docs), nav=["index.md"], plugins=["search"])
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    built = _mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path)
    assert built.returncode != 0
    assert "missing.md" in built.stderr
    assert "no-such-heading" in built.stderr


def test_the_build_needs_no_network() -> None:
    """No web fonts (Material fetches Google's unless `font: false`) and only plugins known to
    fetch nothing."""
    config = _config()
    assert config["theme"]["name"] == "material"
    assert config["theme"]["font"] is False
    names = {next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]}
    assert names <= OFFLINE_PLUGINS, names - OFFLINE_PLUGINS
    assert config.get("strict") is True


def test_every_page_is_in_the_navigation_and_in_the_tested_manual() -> None:
    """A page left out of the nav would be unreachable; every page's code blocks are run by
    tests/test_readme_code.py, which reads exactly these files."""
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    nav = _nav_pages(_config()["nav"])
    assert sorted(nav) == sorted(pages)
    assert set(markdown_files(ROOT)) == {ROOT / "README.md", *(DOCS / p for p in pages)}


def test_the_api_reference_lists_every_public_name_once() -> None:
    listed = re.findall(r"^::: agentrt\.(\w+)$", API_PAGE.read_text(), re.M)
    assert sorted(listed) == sorted(agentrt.__all__)


def test_the_readme_is_a_pitch_and_a_map() -> None:
    """Issue 42: at most 250 lines, the two commands, and a link to every page of the site."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert "./dev demo" in readme and "./dev test" in readme
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)", readme))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages <= linked, sorted(pages - linked)


def test_benchmark_history_lives_in_one_place() -> None:
    """The sets are on the site; bench/ only points there."""
    history = DOCS / "benchmarks" / "history.md"
    sets = re.findall(r"^## Set (\d+[a-z]?) .*\{#set-\1\}$", history.read_text(), re.M)
    assert len(sets) >= 18
    for pointer in (ROOT / "bench" / "README.md", ROOT / "bench" / "HISTORY.md"):
        text = pointer.read_text()
        assert "docs/benchmarks/history.md" in text
        assert "| measure |" not in text and "## Set " not in text  # no figures of its own
