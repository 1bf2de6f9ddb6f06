"""What a step's model is given to work from: a picture's subject, a question's words.

An image or video model renders every word of its prompt: "Can you first generate an image
that captures the concept of clean renewable energy" would put the request's wrapper into
the picture. The subject is the part after the medium ("an image *of* ...", "a video
*showing* ...") or after a verb that depicts ("draw ..."). Words that point back at
something else ("an image of it", "a video based on the summary") name no subject.

A question-answering model is asked best with the question alone: "could you tell me which
location is closest to the finish line" asks "Which location is closest to the finish
line?". When neither can be read, the caller keeps the clause, whose words the validator and
the report show as they are.
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


_WH = re.compile(r"(?:what|what's|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)
#: A yes/no question ("Is the door open?"), not a request put as one ("Could you ...?").
_AUX = re.compile(
    r"(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|had)\b(?!\s+you\b)",
    re.IGNORECASE,
)
#: Question words that also open relative clauses ("which is a scan of ..."): without a
#: question mark they ask nothing.
_RELATIVE = re.compile(r"(?:which|who|whom|whose)\b", re.IGNORECASE)
#: How a request wraps the question it asks ("could you tell me ...", "I'd like to know ...").
_FIND = (
    r"(?:tell(?:ing)?\s+me|let\s+me\s+know|find(?:ing)?\s+out|figur(?:e|ing)\s+out|"
    r"work(?:ing)?\s+out|determin(?:e|ing)|check(?:ing)?|answer(?:ing)?)"
)
_WRAPPER = re.compile(
    r"\W*(?:(?:and|also|then|so|please|now|lastly|finally|next)\b[\s,]*)*"
    r"(?:(?:(?:can|could|would|will)\s+you\s+(?:please\s+|kindly\s+|also\s+)?)?"
    rf"(?:(?:help|assist)\s+(?:me\s+)?(?:in\s+|with\s+|to\s+)?)?{_FIND}"
    r"|i\s+(?:want|need)\s+to\s+know|i(?:\s+would|'d)\s+like\s+to\s+know"
    r"|i(?:'m|\s+am)\s+(?:wondering|curious(?:\s+about)?)|i\s+wonder)\s*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def asked(text: str) -> str | None:
    """The question ``text`` asks, on its own ("Which location is closest to the finish
    line?"), or None when no sentence of it is or wraps one."""
    for sentence in _SENTENCE_END.split(text.strip()):
        sentence = sentence.strip()
        wrapper = _WRAPPER.match(sentence)
        rest = sentence[wrapper.end() :] if wrapper else ""
        if wrapper and wrapper.end() and _WH.match(rest) and len(rest.split()) >= 3:
            return rest[0].upper() + rest[1:].rstrip(" .?!") + "?"
        if sentence.endswith("?") and (_WH.match(sentence) or _AUX.match(sentence)):
            return sentence  # already a question of its own
        if _WH.match(sentence) and not _RELATIVE.match(sentence) and len(sentence.split()) >= 3:
            return sentence[0].upper() + sentence[1:].rstrip(" .!") + "?"
    return None
