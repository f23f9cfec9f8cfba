"""What a source URL points at, seen through archive and mirror wrappers.

A blocklisted outlet stays one when it is cited through a copy: the Wayback Machine's
``https://web.archive.org/web/2014/https://www.globaltimes.cn/...`` or archive.today's
``https://archive.ph/2020.01.01-000000/https://tass.com/...`` serve the outlet's page. The
``sources`` rule therefore judges the URL a wrapper names (:func:`unwrap`), and the
claims-per-source cap counts it as that URL. An archive link that does not name the page it holds
(archive.today's short ids such as ``https://archive.ph/AbCdE``, ghostarchive, perma.cc) is
*opaque*: nothing can be judged from it, so the rule asks for the original.

Wrappers read here (each is a URL layout, parsed without fetching anything):

=================================================  ============================================
wrapper                                            the original is
=================================================  ============================================
``web.archive.org/web/<timestamp>[flags]/<url>``   ``<url>`` (``http://`` added when the
(also ``wayback.archive.org``, ``archive.org``)    archived URL was written without a scheme)
``archive.today/<timestamp>/<url>`` and            ``<url>``; a bare ``/<id>`` is opaque
``/newest/``, ``/oldest/``, ``/o/<id>/``,
``/timegate/`` (also archive.ph, .is, .li, .vn,
.fo, .md)
``webcache.googleusercontent.com/search?q=cache:``  the URL after ``cache:`` (and an optional id)
``<host-with-dashes>.translate.goog/<path>``       ``https://<host>/<path>`` (Google Translate's
                                                   proxy: ``-`` is ``.``, ``--`` is ``-``)
``ghostarchive.org``, ``perma.cc``,                opaque
``webcitation.org``
=================================================  ============================================

No library does this offline: the Wayback Machine clients on PyPI (waybackpy and the like) call
its API, and none reads archive.today's layouts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

WAYBACK_HOSTS = frozenset({"web.archive.org", "wayback.archive.org", "archive.org"})
ARCHIVE_TODAY_HOSTS = frozenset(
    {"archive.today", "archive.ph", "archive.is", "archive.li", "archive.vn", "archive.fo", "archive.md"}
)
OPAQUE_HOSTS = frozenset({"ghostarchive.org", "perma.cc", "webcitation.org", "www.webcitation.org"})
GOOGLE_CACHE = "webcache.googleusercontent.com"
TRANSLATE_PROXY = ".translate.goog"

# A Wayback timestamp: 1-14 digits (or a * search), with optional flags such as id_ or im_.
_WAYBACK_TS = re.compile(r"^(?:[0-9]{1,14}|\*)(?:[a-z]{2}_)?$")
# archive.today's timestamps: 2020.01.01-000000, or 4-14 digits (a year, ... a second).
_TODAY_TS = re.compile(r"^(?:[0-9]{4}\.[0-9]{2}\.[0-9]{2}-[0-9]{6}|[0-9]{4,14})$")
_HOSTLIKE = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::[0-9]+)?$", re.IGNORECASE)
# An archive of an archive of ...: at most this many layers are read.
MAX_LAYERS = 4


@dataclass(frozen=True)
class Source:
    """A source URL as written, and what it points at."""

    url: str
    original: str  # the URL judged: the one a wrapper names, or ``url`` itself
    wrappers: tuple[str, ...] = ()  # the wrapping hosts, outermost first
    opaque: str = ""  # the archive host of an archive link that does not name its page

    @property
    def host(self) -> str:
        try:
            return (urlsplit(self.original).hostname or "").lower().rstrip(".")
        except ValueError:  # not a URL urlsplit can read (an unclosed IPv6 bracket): no host
            return ""

    @property
    def via(self) -> str:
        """`` (via web.archive.org)`` when the URL is wrapped, else ``""``."""
        return f" (via {', '.join(self.wrappers)})" if self.wrappers else ""


def unwrap(url: str) -> Source:
    """The page ``url`` serves, through every archive or mirror layer :data:`MAX_LAYERS` deep."""
    current, wrappers = url.strip(), list[str]()
    for _ in range(MAX_LAYERS):
        try:
            parts = urlsplit(current)
        except ValueError:  # a URL urlsplit refuses (an unclosed IPv6 bracket) wraps nothing
            break
        host = (parts.hostname or "").lower().rstrip(".")
        if host in OPAQUE_HOSTS:
            return Source(url, current, tuple(wrappers), opaque=host)
        inner = _inner(host, current)
        if inner is None:
            break
        if inner == "":
            return Source(url, current, tuple(wrappers), opaque=host)
        wrappers.append(host)
        current = inner
    return Source(url, current, tuple(wrappers))


def source_key(url: object) -> str | None:
    """The page the claims-per-source cap counts ``url`` as (normalised, unwrapped), or None for a
    value the cap does not count: not a string, a ``TODO`` placeholder, not http(s), no host, or
    not a URL at all (the schema or the sources rule reports each)."""
    from propeval.textnorm import normalise_url

    if not isinstance(url, str) or url.startswith("TODO"):
        return None
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        return normalise_url(unwrap(url).original)
    except ValueError:  # not a URL urlsplit can read: the sources rule reports it
        return None


def _inner(host: str, url: str) -> str | None:
    """The URL one layer in: None when ``url`` is no wrapper, "" when it is an opaque one."""
    parts = urlsplit(url)
    if host in WAYBACK_HOSTS:
        segments = parts.path.split("/", 3)  # "", "web", "<ts>", "<url>"
        if len(segments) == 4 and segments[1] == "web" and _WAYBACK_TS.match(segments[2]):
            return _absolute(segments[3], parts.query)
        return None  # archive.org/details/... is the archive's own page
    if host in ARCHIVE_TODAY_HOSTS:
        rest = parts.path.lstrip("/")
        head, _, tail = rest.partition("/")
        if head in ("newest", "oldest", "timegate", "timemap") or _TODAY_TS.match(head):
            return _absolute(tail, parts.query) if tail else ""
        if head == "o":
            _, _, tail = tail.partition("/")  # /o/<id>/<url>
            return _absolute(tail, parts.query) if tail else ""
        return ""  # a short id (archive.ph/AbCdE), the search page, ...: it names no page
    if host == GOOGLE_CACHE:
        q = parse_qs(parts.query).get("q", [""])[0]
        if q.startswith("cache:"):
            target = q.removeprefix("cache:")
            target = re.sub(r"^[A-Za-z0-9_-]{8,16}:", "", target)  # an optional cache id
            target = target.split(" ", 1)[0].split("+", 1)[0]
            return _absolute(target, "") if target else ""
        return ""
    if host.endswith(TRANSLATE_PROXY) and host != TRANSLATE_PROXY.lstrip("."):
        label = host.removesuffix(TRANSLATE_PROXY)
        real = label.replace("--", "\0").replace("-", ".").replace("\0", "-")
        query = "&".join(kv for kv in parts.query.split("&") if kv and not kv.startswith("_x_tr_"))
        return f"https://{real}{parts.path}" + (f"?{query}" if query else "")
    return None


def _absolute(inner: str, query: str) -> str:
    """An archived URL as a full URL: percent-decoded when the scheme was escaped, ``http://``
    added when the archive wrote it without one, the outer query kept (it belongs to it)."""
    if inner.lower().startswith(("http%3a", "https%3a")):
        inner = unquote(inner)
    # Archives fold "https://" to "https:/" in some links.
    inner = re.sub(r"^(https?):/(?!/)", r"\1://", inner, flags=re.IGNORECASE)
    if not re.match(r"^https?://", inner, re.IGNORECASE):
        host = inner.split("/", 1)[0]
        if not _HOSTLIKE.match(host):
            return ""
        inner = "http://" + inner
    return inner + (f"?{query}" if query and "?" not in inner else "")
