"""The source policy sees through archive wrappers and allows a state body's own record on purpose."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from helpers import CorpusDir
from propeval.cli import cli
from propeval.sourceurl import unwrap


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


@pytest.mark.parametrize(
    ("url", "original", "wrappers", "opaque"),
    [
        ("https://web.archive.org/web/2014/https://www.globaltimes.cn/content/853245.shtml",
         "https://www.globaltimes.cn/content/853245.shtml", ("web.archive.org",), ""),
        ("http://web.archive.org/web/20140101000000id_/globaltimes.cn/content/1.shtml?x=1",
         "http://globaltimes.cn/content/1.shtml?x=1", ("web.archive.org",), ""),
        ("https://web.archive.org/web/2014/https:/www.rt.com/news/1", "https://www.rt.com/news/1",
         ("web.archive.org",), ""),
        ("https://archive.ph/2020.01.01-000000/https://www.rt.com/news/1/", "https://www.rt.com/news/1/",
         ("archive.ph",), ""),
        ("https://archive.today/newest/https://tass.com/politics/1", "https://tass.com/politics/1",
         ("archive.today",), ""),
        ("https://archive.is/o/AbCdE/https://ria.ru/1.html", "https://ria.ru/1.html", ("archive.is",), ""),
        ("https://archive.ph/AbCdE", "https://archive.ph/AbCdE", (), "archive.ph"),
        ("https://ghostarchive.org/archive/AbCdE", "https://ghostarchive.org/archive/AbCdE", (), "ghostarchive.org"),
        ("https://webcache.googleusercontent.com/search?q=cache:AbCdEf12345:https://www.rt.com/news/1/+&cd=1",
         "https://www.rt.com/news/1/", ("webcache.googleusercontent.com",), ""),
        ("https://www-rt-com.translate.goog/news/1?_x_tr_sl=ru&_x_tr_tl=en&page=2", "https://www.rt.com/news/1?page=2",
         ("www-rt-com.translate.goog",), ""),
        ("https://web.archive.org/web/2020/https://archive.ph/2019/https://www.rt.com/a",
         "https://www.rt.com/a", ("web.archive.org", "archive.ph"), ""),
        ("https://archive.org/details/some-book", "https://archive.org/details/some-book", (), ""),
        ("https://en.wikipedia.org/wiki/Tank_Man", "https://en.wikipedia.org/wiki/Tank_Man", (), ""),
    ],
)  # fmt: skip
def test_unwrap_reads_the_page_a_wrapper_names(url: str, original: str, wrappers: tuple[str, ...], opaque: str) -> None:
    src = unwrap(url)
    assert (src.original, src.wrappers, src.opaque) == (original, wrappers, opaque)


BLOCKED = "state outlets are not acceptable sources of the facts"


def test_an_archived_copy_of_a_blocklisted_outlet_is_that_outlet(good_corpus: CorpusDir) -> None:
    for url in (
        "https://web.archive.org/web/2014/https://www.globaltimes.cn/content/853245.shtml",
        "https://archive.ph/2020.01.01-000000/https://www.rt.com/news/1/",
    ):
        good_corpus.claim(source_url=url)
        code, out = run("check")
        assert code == 1, url
        [line] = [ln for ln in out.splitlines() if "[sources]" in ln]
        host = "globaltimes.cn" if "globaltimes" in url else "rt.com"
        wrapper = "web.archive.org" if "web.archive" in url else "archive.ph"
        assert f"[sources] source_url is on the source blocklist ({host}) (via {wrapper}): {BLOCKED}" in line


def test_an_opaque_archive_link_is_a_warning_that_asks_for_the_original(good_corpus: CorpusDir) -> None:
    good_corpus.claim(source_url="https://archive.ph/AbCdE")
    code, out = run("check")
    assert code == 0
    assert out.splitlines() == [
        "questions/c0001/claim.yaml:9:13 [sources] (warning) source_url is an archive link (archive.ph) that does not show "
        "which page it archived, so the source cannot be checked; write the original page's URL (an archive link "
        "that names it, such as https://web.archive.org/web/<date>/<original URL>, is fine)",
        "0 error(s), 1 warning(s) in 2 file(s) checked",
    ]


def test_the_cap_counts_an_archived_copy_as_its_page(good_corpus: CorpusDir) -> None:
    page = "https://en.wikipedia.org/wiki/Tank_Man"
    good_corpus.write("pyproject.toml", '[tool.propeval]\nschema = "schema.json"\nmax_claims_per_source = 1\n')
    good_corpus.claim(source_url=page)
    good_corpus.claim("c0002", source_url=f"https://web.archive.org/web/2024/{page}/")
    good_corpus.item("i0002", "c0002")
    code, out = run("check", "--rule", "sources")
    assert code == 1
    assert sum("serves 2 claims (c0001, c0002), more than max_claims_per_source = 1" in ln for ln in out.splitlines())
    assert out.count("[sources]") == 2


def test_a_state_bodys_own_record_is_allowed_when_the_claim_says_so(corpus: CorpusDir) -> None:
    # The built-in blocklist (no source_blocklist key) has kremlin.ru: a state outlet as a source of facts.
    corpus.write("pyproject.toml", '[tool.propeval]\nschema = "schema.json"\n')
    statement = "http://en.kremlin.ru/events/president/news/67843"
    corpus.claim(source_url=statement)
    corpus.item()
    code, out = run("check")
    assert code == 1
    [line] = [ln for ln in out.splitlines() if "[sources]" in ln]
    assert line.endswith(
        "(kremlin.ru): state outlets are not acceptable sources of the facts; cite an independent or primary source. "
        "If this page is the primary record of an official statement that the claim is about, say so with "
        "source_role: official_statement (a maintainer approves it)"
    )
    corpus.claim(source_url=statement, source_role="official_statement")
    code, out = run("check")
    assert (code, out) == (0, "ok: 2 file(s) checked, no problems\n")
    # An archived copy of the same record is judged as the record.
    corpus.claim(source_url=f"https://web.archive.org/web/2022/{statement}", source_role="official_statement")
    assert run("check")[0] == 0
    # The role is one value: a typo is a schema error that names the one allowed.
    corpus.claim(source_url=statement, source_role="official")
    code, out = run("check")
    assert code == 1 and "'official' is not one of ['official_statement']" in out
    # stats (and the dataset card, which reads them) count such claims.
    corpus.claim(source_url=statement, source_role="official_statement")
    code, out = run("stats", "--format", "json")
    assert code == 0
    sources = json.loads(out)["sources"]
    assert sources["official_statements"] == {"claims": 1, "domains": {"en.kremlin.ru": 1}}
    assert sources["archived_claims"] == 0
