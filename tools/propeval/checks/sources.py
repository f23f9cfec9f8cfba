"""Sources are http(s) URLs, not state outlets, and no URL serves too many claims.

The blocklist and the cap live in ``[tool.propeval]`` (``source_blocklist``,
``max_claims_per_source``, default 13). A blocklisted domain matches itself and its subdomains.

Failing::

    source_url: https://www.globaltimes.cn/page/202206/1267905.shtml

gives ``[sources] source_url is on the source blocklist (globaltimes.cn): state outlets ...``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from propeval.result import Problem
from propeval.textnorm import normalise_url

if TYPE_CHECKING:
    from propeval.checks import Context

ID = "sources"


def blocked(host: str, blocklist: tuple[str, ...]) -> str | None:
    host = host.lower().rstrip(".")
    for domain in blocklist:
        if host == domain or host.endswith("." + domain):
            return domain
    return None


def check(ctx: Context) -> Iterator[Problem]:
    by_url: dict[str, list[Any]] = defaultdict(list)
    for claim in ctx.corpus.all_claims:
        url = claim.data.get("source_url")
        if not isinstance(url, str) or url.startswith("TODO"):
            continue
        doc = claim.doc
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            continue  # the schema's pattern reports it
        hit = blocked(parts.hostname, ctx.config.source_blocklist)
        if hit:
            yield doc.problem(
                "/source_url",
                ID,
                f"source_url is on the source blocklist ({hit}): state outlets are "
                "not acceptable sources of the facts; cite an independent or primary source",
            )
        by_url[normalise_url(url)].append(claim)
    cap = ctx.config.max_claims_per_source
    for url, claims in by_url.items():
        if len(claims) > cap:
            ids = ", ".join(sorted(c.id for c in claims))
            for claim in claims:
                yield claim.doc.problem(
                    "/source_url",
                    ID,
                    f"{url} serves {len(claims)} claims ({ids}), more than "
                    f"max_claims_per_source = {cap}; find another source for some of them",
                )
