"""Sources are http(s) URLs, not state outlets, and no URL serves too many claims.

The blocklist and the cap live in ``[tool.propeval]`` (``source_blocklist``,
``max_claims_per_source``, default 13). A blocklisted domain matches itself and its subdomains.
An archive or mirror URL is judged by the page it holds (:mod:`propeval.sourceurl`): a Wayback
Machine copy of a state outlet is that outlet. An archive link that does not name its page
(``https://archive.ph/AbCdE``) is a warning that asks for the original.

A claim about what a state body said may cite that body's own record of it, blocklisted or not,
when it says so: ``source_role: official_statement``. Declaring it turns the error into an
exception that a maintainer approves, as an allowlist entry is: ``propeval ci --base REF`` fails
a pull request that adds or changes such a claim (``policy-change``) until a maintainer's signed
approval (``propeval ledger approve``) covers it, or the base already has the claim with that
source and role (:func:`propeval.policy_files.source_exceptions`). ``check`` on a working tree cannot know who approved
what, and does not report it.

Failing::

    source_url: https://www.globaltimes.cn/page/202206/1267905.shtml
    source_url: https://web.archive.org/web/2014/https://www.globaltimes.cn/content/1.shtml

gives ``[sources] source_url is on the source blocklist (globaltimes.cn): state outlets ...``.

Passing (approved in review)::

    source_url: http://en.kremlin.ru/events/president/news/67843
    source_role: official_statement
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from propeval.result import Problem, Rule, Severity
from propeval.sourceurl import unwrap
from propeval.textnorm import normalise_url

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "sources"
RULE = Rule(
    ID,
    "check",
    description="source_url is http(s), not blocklisted (an archived copy judged by its page), serves <= N claims",
    wrong=(
        "not http(s), a state outlet on the blocklist (directly or through an archive copy such as "
        "web.archive.org/web/<date>/<url>), or a URL serving too many claims; warning: an archive link that does not "
        "show which page it holds (archive.ph/AbCdE)"
    ),
    fix=(
        "cite an independent or primary source; for a state body's own record of a statement the claim is about, add "
        "`source_role: official_statement` (a maintainer approves it: `propeval ledger approve`); for an opaque "
        "archive link, write the original page's URL"
    ),
    also=(Severity.WARNING,),  # an opaque archive link
)
OFFICIAL = "official_statement"


def blocked(host: str, blocklist: tuple[str, ...]) -> str | None:
    host = host.lower().rstrip(".")
    for domain in blocklist:
        if host == domain or host.endswith("." + domain):
            return domain
    return None


def exception(data: Any, blocklist: tuple[str, ...]) -> tuple[str, str] | None:
    """(blocklisted domain, the URL judged) when a claim's data cites a blocklisted outlet under
    ``source_role: official_statement``; None otherwise."""
    if not isinstance(data, dict) or data.get("source_role") != OFFICIAL:
        return None
    url = data.get("source_url")
    if not isinstance(url, str):
        return None
    src = unwrap(url)
    hit = blocked(src.host, blocklist)  # an unreadable URL has no host, so is blocked by nothing
    return (hit, normalise_url(src.original)) if hit else None


def check(ctx: Context) -> Iterator[Problem]:
    # Each claim the run reports on is judged by its own URL; the cap counts every claim's
    # (Claim.source_key: a claim from the load cache has it without its URL being parsed again).
    for claim in ctx.claims():
        url = claim.data.get("source_url")
        if not isinstance(url, str) or url.startswith("TODO"):
            continue
        doc = claim.doc
        try:
            parts = urlsplit(url)
            hostname = parts.hostname
        except ValueError as e:  # "https://[abc/x": the schema's pattern passes it, urlsplit cannot read it
            yield doc.problem(
                "/source_url", RULE, f"source_url is not a URL that can be read ({e}); write the page's full address"
            )
            continue
        if parts.scheme not in ("http", "https") or not hostname:
            continue  # the schema's pattern reports it
        src = unwrap(url)
        if src.opaque:
            yield doc.problem(
                "/source_url",
                RULE,
                f"source_url is an archive link ({src.opaque}) that does not show which page it archived, so the "
                "source cannot be checked; write the original page's URL (an archive link that names it, such as "
                "https://web.archive.org/web/<date>/<original URL>, is fine)",
                severity=Severity.WARNING,  # the rule's one warning (its `wrong` says so)
            )
        hit = blocked(src.host, ctx.config.source_blocklist)
        if hit and claim.data.get("source_role") != OFFICIAL:
            yield doc.problem(
                "/source_url",
                RULE,
                f"source_url is on the source blocklist ({hit}){src.via}: state outlets are not acceptable sources "
                "of the facts; cite an independent or primary source. If this page is the primary record of an "
                f"official statement that the claim is about, say so with source_role: {OFFICIAL} (a maintainer "
                "approves it)",
            )
    by_url: dict[str, list[Any]] = defaultdict(list)
    for claim in ctx.corpus.all_claims:
        key = claim.source_key
        if key is not None:
            by_url[key].append(claim)
    cap = ctx.config.max_claims_per_source
    for url, claims in by_url.items():
        if len(claims) > cap:
            ids = ", ".join(sorted(c.id for c in claims))
            for claim in claims:
                yield claim.doc.problem(
                    "/source_url",
                    RULE,
                    f"{url} serves {len(claims)} claims ({ids}), more than "
                    f"max_claims_per_source = {cap}; find another source for some of them",
                )
