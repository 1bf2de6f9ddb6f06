"""Licence strings from model cards, normalised to SPDX-style lowercase ids.

Users constrain selection with an allow-list ("apache-2.0 or mit only"). Card authors write the
same licence a dozen ways ("Apache 2.0", "apache license, version 2.0", "CC BY 4.0", lists), so
without one canonical id an allow-list would silently reject allowed models or, worse, the
constraint would be unusable. The ids follow the Hugging Face Hub's licence identifiers, which
are SPDX ids in lowercase plus the model-specific ones (``openrail++``, ``llama2`` ...).

Anything missing normalises to ``unknown``; a licence we cannot recognise and that does not look
like an id normalises to ``other``, so it is never mistaken for a permissive one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

UNKNOWN = "unknown"
OTHER = "other"

#: Ids the Hub uses that we pass through as they are (after lowercasing), so a constraint
#: written with the Hub's id always matches.
KNOWN_IDS: frozenset[str] = frozenset(
    {
        "apache-2.0", "mit", "openrail", "openrail++", "bigscience-openrail-m",
        "creativeml-openrail-m", "bigscience-bloom-rail-1.0", "bigcode-openrail-m",
        "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd", "bsd-2-clause", "bsd-3-clause",
        "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0",
        "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0",
        "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0",
        "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0", "cdla-sharing-1.0", "cdla-permissive-1.0",
        "cdla-permissive-2.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0", "etalab-2.0",
        "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0", "lgpl",
        "lgpl-2.1", "lgpl-3.0", "isc", "h-research", "intel-research", "lppl-1.3c", "ms-pl",
        "apple-ascl", "apple-amlr", "mpl-2.0", "odc-by", "odbl", "openmdw-1.0", "osl-3.0",
        "postgresql", "ofl-1.1", "ncsa", "unlicense", "zlib", "pddl", "lgpl-lr",
        "deepfloyd-if-license",
        "fair-noncommercial-research-license", "llama2", "llama3", "llama3.1", "llama3.2",
        "llama3.3", "llama4", "gemma", "deepseek", OTHER, UNKNOWN,
    }
)  # fmt: skip

#: Whole-string aliases, matched after lowercasing and collapsing separators to "-".
_ALIASES: dict[str, str] = {
    "apache": "apache-2.0",
    "apache2": "apache-2.0",
    "apache-2": "apache-2.0",
    "apache2.0": "apache-2.0",
    "asl-2.0": "apache-2.0",
    "mit-license": "mit",
    "the-mit-license": "mit",
    "expat": "mit",
    "unlicensed": "unlicense",
    "the-unlicense": "unlicense",
    "public-domain": "cc0-1.0",
    "cc0": "cc0-1.0",
    "wtf": "wtfpl",
    "openrail-m": "openrail",
    "openrail-plus-plus": "openrail++",
    "openrail++-m": "openrail++",
    "creativeml-openrail": "creativeml-openrail-m",
    "bloom-rail-1.0": "bigscience-bloom-rail-1.0",
    "llama-2": "llama2",
    "llama-2-community": "llama2",
    "llama2-community": "llama2",
    "llama-3": "llama3",
    "llama-3.1": "llama3.1",
    "llama-3.2": "llama3.2",
    "llama-3.3": "llama3.3",
    "deepseek-license": "deepseek",
    "deepseek-model": "deepseek",
    "mpl": "mpl-2.0",
    "none": UNKNOWN,
    "n/a": UNKNOWN,
    "na": UNKNOWN,
    "unknown": UNKNOWN,
    "unspecified": UNKNOWN,
    "proprietary": OTHER,
    "custom": OTHER,
}

_CC_PARTS = {
    "by": "by",
    "attribution": "by",
    "nc": "nc",
    "noncommercial": "nc",
    "non-commercial": "nc",
    "nd": "nd",
    "noderivatives": "nd",
    "noderivs": "nd",
    "sa": "sa",
    "sharealike": "sa",
    "share-alike": "sa",
}
_CC_ORDER = ("by", "nc", "nd", "sa")
_VERSION = re.compile(r"(\d+(?:\.\d+)?)")
_ID_LIKE = re.compile(r"^[a-z0-9][a-z0-9.+-]{0,47}$")
_FILLER = re.compile(r"\b(?:license|licence|licensed|version|ver)\b|\bv(?=\d)")


def _slug(text: str) -> str:
    """Lowercase with every run of spaces, underscores, commas or slashes turned into "-"."""
    s = _FILLER.sub(" ", text.strip().lower())
    s = re.sub(r"[\s_,/:;()]+", "-", s)
    return re.sub(r"-{2,}", "-", s).strip("-")


def _version(text: str, default: str) -> str:
    m = _VERSION.search(text)
    if not m:
        return default
    v = m.group(1)
    return v if "." in v else f"{v}.0"


def _creative_commons(s: str) -> str | None:
    """``cc-by-nc-sa-4.0`` from any spelling ("CC BY-NC-SA 4.0", "creative commons ...")."""
    if s.startswith("cc0") or "cc-zero" in s or s.startswith("creative-commons-zero"):
        return "cc0-1.0"
    if not (s.startswith("cc-") or s.startswith("creative-commons") or s.startswith("ccby")):
        return None
    body = s.replace("creative-commons", "cc").replace("ccby", "cc-by")
    words = [w for w in body.split("-") if w]
    parts = {_CC_PARTS[w] for w in words if w in _CC_PARTS}
    if "non" in words and "commercial" in words:
        parts.add("nc")
    if not parts:
        return "cc" if body == "cc" else None
    parts.add("by")
    version = _version(body, "")
    name = "cc-" + "-".join(p for p in _CC_ORDER if p in parts)
    return f"{name}-{version}" if version else name


def _gnu(s: str) -> str | None:
    """``gpl-3.0``, ``lgpl-2.1``, ``agpl-3.0`` from "GNU GPL v3", "gplv3", "lgpl 2.1" ..."""
    s = s.replace("gnu-", "").replace("general-public", "gpl").replace("lesser-gpl", "lgpl")
    s = s.replace("affero-gpl", "agpl").replace("library-gpl", "lgpl")
    m = re.match(r"^(a|l)?gpl-?(v?\d+(?:\.\d+)?)?(-only|-or-later|\+)?$", s)
    if not m:
        return None
    family = f"{m.group(1) or ''}gpl"
    if not m.group(2):
        return family
    version = _version(m.group(2), "")
    return f"{family}-{version}"


def normalize_license(raw: Any) -> str:
    """One licence id for ``raw`` (a string, a list of them, or None).

    For a list the first recognisable entry wins: authors list the main licence first, and
    :func:`normalize_licenses` keeps the others for dual-licensed models.
    """
    ids = normalize_licenses(raw)
    return ids[0] if ids else UNKNOWN


def normalize_licenses(raw: Any) -> list[str]:
    """Every licence id in ``raw``, deduplicated in order; ``[]`` when none is given.

    ``unknown`` entries are dropped when a real licence is also listed, since the known one
    is the better description of the model.
    """
    items: Iterable[Any] = raw if isinstance(raw, list | tuple | set) else [raw]
    out: list[str] = []
    for item in items:
        lid = _one(item)
        if lid and lid not in out:
            out.append(lid)
    if len(out) > 1 and UNKNOWN in out:
        out.remove(UNKNOWN)
    return out


def _one(raw: Any) -> str | None:
    if raw is None or raw is False:
        return None
    text = str(raw).strip()
    if not text:
        return None
    lowered = text.lower()
    if lowered in KNOWN_IDS:
        return lowered
    if lowered.startswith("license:"):  # a Hub tag such as "license:mit"
        return _one(lowered.removeprefix("license:"))
    s = _slug(text)
    # "apache-2.0"/"apache-license-2.0" lose "license" in _slug; try the raw slug too.
    for candidate in (s, re.sub(r"[\s_]+", "-", lowered)):
        if candidate in KNOWN_IDS:
            return candidate
        if candidate in _ALIASES:
            return _ALIASES[candidate]
    if s.startswith("apache"):
        return "apache-2.0" if _version(s, "2.0").startswith("2") else OTHER
    if s in {"mit", "mit-x11"} or s.startswith("mit-"):
        return "mit"
    if (cc := _creative_commons(s)) is not None:
        return cc
    if (gnu := _gnu(s)) is not None:
        return gnu
    if s.startswith("bsd"):
        if "3" in s:
            return "bsd-3-clause-clear" if "clear" in s else "bsd-3-clause"
        return "bsd-2-clause" if "2" in s else "bsd"
    if "openrail" in s:
        compact = s.replace("-", "")
        for prefix in ("creativeml", "bigscience", "bigcode"):
            if compact.startswith(prefix):
                return f"{prefix}-openrail-m"
        return "openrail++" if "++" in s else "openrail"
    if s.startswith("llama"):
        m = re.match(r"^llama-?(\d(?:\.\d)?)", s)
        return f"llama{m.group(1)}" if m else OTHER
    if s.startswith("mozilla") or s.startswith("mpl"):
        return "mpl-2.0"
    return lowered if _looks_like_id(lowered) else OTHER


def _looks_like_id(text: str) -> bool:
    """An unrecognised but id-shaped licence (``my-lab-license-1.0``) is kept as written.

    Keeping it lets a user allow that exact id. Hub ids never contain spaces, so free text
    ("see the LICENSE file") becomes ``other``.
    """
    return bool(_ID_LIKE.match(text)) and any(c.isalpha() for c in text)


def license_allowed(card_licenses: Iterable[str], allowed: Iterable[str]) -> bool:
    """Whether any of a card's licences (dual licensing) is in the user's allow-list.

    Both sides are normalised, so ``["Apache 2.0"]`` allows a card marked ``apache-2.0``.
    """
    allow = set(normalize_licenses(list(allowed)))
    return bool(allow & set(normalize_licenses(list(card_licenses))))
