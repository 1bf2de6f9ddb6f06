"""Whether a request looks written in another language than English.

The offline planner's encoder (all-MiniLM-L6-v2) and its classifier learned English; a
request in German or French mostly finds no task, and the error should then say why and
what works instead, not only "name what to do". Short function words give the language
away: they are frequent, rarely shared with English, and need no model.
"""

from __future__ import annotations

import re

from graph_agent.planning.clauses import QUOTED


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Frequent function words of languages users write in, without those English has too
#: ("die", "was", "mit", "as", "do", "van", "met", "e" as in "e.g." ...).
_FUNCTION_WORDS = (
    _words(
        "der das und ist nicht ein eine einen dieses diese dieser für auf bitte zusammen "
        "ich mir mich sie wir ihr aus dem den oder wie kannst"
    ),
    _words(
        "le la les et est une des ce cette ces pour avec dans du moi je tu vous nous qui "
        "quoi sur pas mon ma mes peux plaît"
    ),
    _words(
        "el los las y es una por para con este esta estos del que mi yo tú usted puedes "
        "favor sobre pero"
    ),
    _words("il lo gli è una per con questo questa della che io puoi favore sono dei delle"),
    _words("de het en een niet dit deze voor ik mij jij je kun alsjeblieft wat"),
    _words("o os uma por para com este esta isto da que eu você pode favor"),
)
_ENGLISH = _words(
    "the a an and is are of to for with this that these it me my you your please can could "
    "what which in on from into"
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def looks_foreign(text: str) -> bool:
    """Whether ``text`` looks written in a language other than English: at least two
    function words of one language outside quotes, and more of them than English ones.
    "Fasse dieses Dokument zusammen" does; "summarize the article from Le Monde by De la
    Cruz" and 'translate "Der Hund ist nicht hier"' do not.
    """
    words = [w.lower() for w in _WORD.findall(QUOTED.sub(" ", text))]  # quotes are content
    english = sum(w in _ENGLISH for w in words)
    hits = max(sum(w in vocab for w in words) for vocab in _FUNCTION_WORDS)
    return hits >= 2 and hits > english
