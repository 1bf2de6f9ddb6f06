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
    r"embodying|showcasing|displaying|about)"
)
_SHOWS_VERB = (
    r"(?:shows?|depicts?|captures?|illustrates?|features?|portrays?|represents?|embodies|"
    r"embody|showcases?|displays?)"
)
#: Where a subject starts: after "an image of", "a video that (clearly) shows" ...
_AFTER_MEDIUM = re.compile(
    rf"\b{_MEDIUM}\s+(?:{_SHOWS}|(?:that|which)\s+(?:\w+ly\s+)?{_SHOWS_VERB})\s+(?=\S)",
    re.IGNORECASE,
)
#: ... or, when no medium is named with it, after a verb that depicts ("draw a cat").
_AFTER_VERB = re.compile(r"\b(?:draw|paint|sketch|depict|animate)\s+(?:me\s+)?(?=\S)", re.I)
#: A subject that is only a pointer to something said or made elsewhere.
_POINTS_BACK = re.compile(
    r"(?:it|this|that|these|those|them|such|said|its|their|our|my|your|what|what's|"
    r"whatever|the\s+(?:above|same|result|output|summary|text|description|caption|answer|"
    r"transcript(?:ion)?|translation|narrat\w+|story|information|details|content|data|"
    r"findings|emotion|classification|categori[sz]ation|objects?|image|picture|photo|scene|"
    r"audio|recording|response|edited|generated|resulting|new|original|previous))\b",
    re.IGNORECASE,
)
#: Courtesy at the end ("..., please"); the look-behind keeps the match linear.
_TRAILING = re.compile(
    r"(?<![\s,])(?:[\s,]+(?:for me|please|for us|if possible))+\s*$", re.IGNORECASE
)
#: A sentence that asks, thanks or goes on to the next step rather than says more about
#: the content.
_ASIDE = re.compile(
    r"\?|\b(?:can|could|would|will)\s+you\b|\bplease\b|\bthanks?\b|\bthank you\b|"
    r"^\W*(?:tell me|let me know)\W*$|"
    r"^\W*(?:then|and then|after that|afterwards|next|also|finally|lastly)\b",
    re.IGNORECASE,
)
#: Stops that do not end a sentence ("Dr. Smith", "cats vs. dogs", "e.g. apples").
_ABBREVIATIONS = frozenset(
    {"dr", "mr", "mrs", "ms", "prof", "st", "mt", "jr", "sr", "vs", "etc", "e.g", "i.e", "no"}
)
_STOP = re.compile(r"[.?!;]+(?=\s+[A-Z0-9\"'(]|\s*$)")


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``: a stop ends one only before a capital
    (or the end), and not after an abbreviation."""
    spans, start = [], 0
    for stop in _STOP.finditer(text):
        before = text[max(start, stop.start() - 8) : stop.start()].split()  # the last word
        if before and before[-1].lower().rstrip(".") in _ABBREVIATIONS:
            continue
        spans.append((start, stop.end()))
        start = stop.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def _rest_of(text: str, at: int) -> str:
    """From ``at`` to the end of its sentence, and on through the sentences after it that
    say more rather than ask or thank ("... in the woods. Make it snowy.")."""
    spans = sentences(text)
    i = next((k for k, (_, end) in enumerate(spans) if at < end), len(spans) - 1)
    parts = [text[at : spans[i][1]]]
    for start, end in spans[i + 1 :]:
        if _ASIDE.search(text[start:end]):
            break
        parts.append(text[start:end])
    return " ".join(p.strip() for p in parts)


def depicted(text: str) -> str | None:
    """The subject a picture or video request describes, or None when it names none."""
    starts = [m.end() for m in _AFTER_MEDIUM.finditer(text)]
    starts += [m.end() for m in _AFTER_VERB.finditer(text)]
    for at in starts:
        subject = _TRAILING.sub("", _rest_of(text, at).rstrip(" .?!;")).strip(" ,:'\"")
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
#: An embedded question in statement order that ends on its verb ("what color the bus is").
_STATEMENT_ORDER = re.compile(
    r"(?P<wh>\w+(?:\s+\w+)?)\s+(?P<subject>(?:the|a|an|this|that|these|those|my|your|his|"
    r"her|its|our|their)\b.+?)\s+(?P<verb>is|are|was|were)",
    re.IGNORECASE,
)
_COURTESY = re.compile(r"\W*(?:thanks|thank you|please|tell me|let me know)\W*$", re.IGNORECASE)


def _direct(question: str) -> str:
    """An embedded question as one asked: capitalised, in question order when it ends on
    its verb ("what color the bus is" -> "What color is the bus?")."""
    question = question.rstrip(" .?!")
    if m := _STATEMENT_ORDER.fullmatch(question):
        question = f"{m['wh']} {m['verb']} {m['subject']}"
    return question[0].upper() + question[1:] + "?"


def asked(text: str) -> str | None:
    """The question ``text`` asks, on its own ("Which location is closest to the finish
    line?"), with any sentences after it that say more; None when no sentence of it is
    or wraps a question."""
    spans = sentences(text)
    for i, (start, end) in enumerate(spans):
        sentence = text[start:end].strip()
        wrapper = _WRAPPER.match(sentence)
        rest = sentence[wrapper.end() :] if wrapper else ""
        if wrapper and wrapper.end() and _WH.match(rest) and len(rest.split()) >= 3:
            question = _direct(rest)
        elif sentence.endswith("?") and (_WH.match(sentence) or _AUX.match(sentence)):
            question = sentence  # already a question of its own
        elif _WH.match(sentence) and not _RELATIVE.match(sentence) and len(sentence.split()) >= 3:
            question = _direct(sentence)
        else:
            continue
        more = [text[a:b].strip() for a, b in spans[i + 1 :]]
        return " ".join([question, *(m for m in more if not _COURTESY.match(m))])
    return None
