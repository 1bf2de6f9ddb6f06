"""Secrets out of text that is shown, logged or stored: the one redaction helper.

Connection strings and endpoint URLs carry credentials in several places, and every one of
them reaches error messages, tracebacks and then checkpointed graph state unless removed:

- the password in a URL's userinfo: ``https://user:pass@host/`` (any scheme, so libpq's
  ``postgresql://user:pass@host/db`` too);
- secret-looking query parameters: ``?api_key=...``, ``&token=...``, ``?password=...`` (libpq
  URIs accept ``postgresql://host/db?password=x``), ``sig``/``signature`` (signed URLs) ...;
- ``password=...`` in a keyword/value DSN (``host=db user=u password='a b'``);
- a secret-looking field in JSON a server echoes back (``"api_key": "..."``);
- a bearer or basic credential (``Authorization: Bearer ...``) and a Hugging Face token
  (``hf_...``).

:func:`redact` masks all of these wherever they stand in a text, keeping the rest (host, port,
database, harmless parameters such as ``sslmode``) because that is what a person needs to see
which setting is wrong. :func:`public_url` is stricter, for an endpoint shown in a report:
the URL without any userinfo or query at all.

This module imports only the standard library, so both ``graph_agent`` core (checkpointing,
the executor) and ``graph_agent.tools`` can use it without import cycles or heavy imports.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

#: What a secret is replaced by.
MASK = "***"

#: Query parameter names whose value is a secret (compared case-insensitively, ``-`` as ``_``).
SECRET_PARAMS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "sslpassword",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth",
        "auth_token",
        "authorization",
        "api_key",
        "apikey",
        "key",
        "secret",
        "client_secret",
        "sig",
        "signature",
        "x_amz_signature",
        "x_amz_security_token",
        "x_goog_signature",
    }
)

# scheme://userinfo@ : userinfo runs to the last '@' before the host ends (a raw '@' in a
# password is common even though it should be percent-encoded).
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#]*)@")
# ?name=value or &name=value (also ';', which some servers use as a separator).
_QUERY_PARAM = re.compile(r"(?P<lead>[?&;](?P<name>[A-Za-z0-9_.\-]+)=)(?P<value>[^&#\s'\"<>]*)")
# password=value in a keyword/value DSN; the value may be single-quoted with spaces inside.
_DSN_PASSWORD = re.compile(
    r"(?P<lead>(?<![\w.\-])(?:password|passwd|sslpassword)\s*=\s*)"
    r"(?P<value>'(?:[^'\\]|\\.)*'|[^\s'\"&,;)]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?P<lead>\b(?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=\-]+", re.IGNORECASE)
#: Parts of a parameter name that make its value a secret, beyond the exact names above
#: (``x-api-key``, ``api_token``, ``access_key``, ``subscription-key``, ``private_token``).
SECRET_NAME_PARTS = ("key", "token", "secret", "passw", "signature", "credential")
# "name": "value" (JSON a server echoes back in an error) with a secret-looking name.
_JSON_FIELD = re.compile(r'(?P<lead>"(?P<name>[A-Za-z0-9_.\-]+)"\s*:\s*")(?P<value>[^"]*)"')
_HF_TOKEN = re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")


def _userinfo(match: re.Match[str]) -> str:
    user, sep, _password = match["userinfo"].partition(":")
    return f"{match['scheme']}{user}{':' + MASK if sep else ''}@"


def is_secret_name(name: str) -> bool:
    """Whether a parameter or field called ``name`` holds a secret."""
    name = name.lower().replace("-", "_")
    return name in SECRET_PARAMS or any(part in name for part in SECRET_NAME_PARTS)


def _query_param(match: re.Match[str]) -> str:
    if not match["value"] or not is_secret_name(match["name"]):
        return match[0]
    return match["lead"] + MASK


def _json_field(match: re.Match[str]) -> str:
    if not match["value"] or not is_secret_name(match["name"]):
        return match[0]
    return match["lead"] + MASK + '"'


def redact(text: str) -> str:
    """``text`` with every credential this module recognises replaced by ``***``.

    Works on a single URL or DSN as well as on a whole message or traceback, so it is safe
    to apply to anything before it is logged, shown or stored; text without secrets comes
    back unchanged.
    """
    if not text:
        return text
    text = _USERINFO.sub(_userinfo, text)
    text = _QUERY_PARAM.sub(_query_param, text)
    text = _JSON_FIELD.sub(_json_field, text)
    text = _DSN_PASSWORD.sub(lambda m: m["lead"] + MASK, text)
    text = _BEARER.sub(lambda m: m["lead"] + MASK, text)
    return _HF_TOKEN.sub("hf_" + MASK, text)


def public_url(url: str) -> str:
    """``url`` reduced to scheme, host, port and path: no userinfo and no query string.

    For an endpoint shown in a report or the graph state: nothing there needs the query, and
    dropping it all (rather than masking the parameters :func:`redact` knows) also drops a
    secret under a name nobody thought of.
    """
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # IPv6: urlsplit drops the brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # a malformed port: show none rather than fail while reporting
        port = None
    if port:
        host += f":{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


__all__ = ["MASK", "SECRET_PARAMS", "is_secret_name", "public_url", "redact"]
