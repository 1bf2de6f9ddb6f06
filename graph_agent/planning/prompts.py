"""What a picture or video step should show, read from the words that ask for it.

An image or video model renders every word of its prompt: "Can you first generate an image
that captures the concept of clean renewable energy" would put the request's wrapper into
the picture. The subject is the part after the medium ("an image *of* ...", "a video
*showing* ...") or after a verb that depicts ("draw ..."). Words that point back at
something else ("an image of it", "a video based on the summary") name no subject: the
caller keeps the clause, whose text the validator and the report still show.
"""

from __future__ import annotations

import re

_MEDIUM = (
    r"(?:image|picture|pic|illustration|photo(?:graph)?|video|clip|animation|movie|film|"
    r"drawing|painting|artwork|poster|visual(?:i[sz]ation)?|visual representation|"
    r"graphic|rendering|cartoon|sketch|depiction|portrait)s?"
)
_SHOWS = (
    r"(?:of|showing|depicting|capturing|illustrating|featuring|portraying|representing|"
    r"embodying|showcasing|displaying|about|with)"
)
_SHOWS_VERB = (
    r"(?:shows?|depicts?|captures?|illustrates?|features?|portrays?|represents?|embodies|"
    r"embody|showcases?|displays?)"
)
#: The rest of a sentence: up to a stop that ends it (not the one inside "3.5" or "e.g").
_REST = r"(?:[^.?!;]|[.?!;](?=\S))+"
#: "an image of X", "a video that (clearly) shows X", "draw X".
_SUBJECT = re.compile(
    rf"\b{_MEDIUM}\s+(?:{_SHOWS}|(?:that|which)\s+(?:\w+ly\s+)?{_SHOWS_VERB})\s+(?P<a>{_REST})"
    rf"|\b(?:draw|paint|sketch|depict|animate)\s+(?:me\s+)?(?P<b>{_REST})",
    re.IGNORECASE,
)
#: A subject that is only a pointer to something said or made elsewhere.
_POINTS_BACK = re.compile(
    r"(?:it|this|that|these|those|them|such|said|its|their|our|my|your|what|what's|"
    r"whatever|the\s+(?:above|same|result|output|summary|text|description|caption|answer|"
    r"transcript(?:ion)?|translation|narrat\w+|story|information|details|content|data|"
    r"findings|emotion|classification|categori[sz]ation|objects?|image|picture|photo|scene|"
    r"audio|recording|response|edited|generated|resulting|new|original|previous))\b",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"(?:[\s,]+(?:for me|please|for us|if possible))+\s*$", re.IGNORECASE)


def depicted(text: str) -> str | None:
    """The subject a picture or video request describes, or None when it names none."""
    for match in _SUBJECT.finditer(text):
        subject = _TRAILING.sub("", match.group("a") or match.group("b")).strip(" ,:'\"")
        if len(subject.split()) >= 2 and not _POINTS_BACK.match(subject):
            return subject
    return None
