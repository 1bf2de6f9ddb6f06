"""Requests in another language than English: told why nothing was planned."""

from __future__ import annotations

import pytest
from scaling import grows_linearly

from graph_agent.errors import RequestError
from graph_agent.planning.offline import plan_offline
from graph_agent.planning.request_language import looks_foreign


@pytest.mark.parametrize(
    ("request_", "foreign"),
    [
        ("Fasse dieses Dokument zusammen", True),
        ("Résume ce document s'il te plaît", True),
        ("Resume este documento por favor", True),
        ("Riassumi questo documento per favore", True),
        ("Vat dit document samen alsjeblieft", True),
        ("Переведи notes.txt на английский", True),  # another script
        ("请总结这个文件 notes.txt", True),
        # English, with foreign names and quoted foreign text.
        ("summarize the article from Le Monde by De la Cruz", False),
        ('translate "Der Hund ist nicht hier und die Katze ist weg" into English', False),
        ("transcribe la grabación audio.wav", False),  # one word is not enough
        ("what is in photo.jpg", False),
        ("what's the exchange rate per euro, per dollar?", False),
        ("weather Las Vegas vs Los Angeles", False),
        ("translate 'こんにちは、元気ですか' into English", False),  # the quote is content
        ("use MIT models; what was said in the van? e.g. names", False),  # English words too
        # What an English instruction's colon introduces is content too.
        (
            "Please read this toast out loud as written: ¡Salud y amor para ti y para tu "
            "familia, que la vida es corta!",
            False,
        ),
        ("Fasse dieses Dokument zusammen: notes.txt", True),
        ("Lula da Silva bio, e.g. early years", False),  # short words English text holds
        ("", False),
    ],
)
def test_looks_foreign(request_, foreign):
    assert looks_foreign(request_, instruction=True) is foreign
    # Pasted text is judged whole: a Spanish article opening "Última hora desde Madrid:".
    news = "Última hora desde Madrid: el gobierno dice que habrá una línea de metro para la ciudad"
    assert looks_foreign(news) and looks_foreign(f"Última hora: {news}")


@pytest.mark.parametrize(
    "request_",
    [
        "Fasse dieses Dokument zusammen",
        "请总结这个文件 notes.txt",
        "Résume ce document s'il te plaît",
        "Vat dit document samen alsjeblieft",
    ],
)
def test_a_foreign_request_nothing_sure_was_found_in_says_the_planner_reads_english(request_):
    # Planned before as image-to-text on notes.txt, translation ("résume" is "summarize")
    # and document QA plus similarity: guesses of an English model, not plans.
    with pytest.raises(RequestError, match="does not look like English") as exc:
        plan_offline(request_, {"notes.txt": "text"})
    assert "Could not find a task" in str(exc.value)


def test_an_english_request_nothing_was_found_in_gets_no_language_hint():
    with pytest.raises(RequestError) as exc:
        plan_offline("fly me to Rome", {})
    assert "English" not in str(exc.value)


def test_the_language_check_grows_linearly():
    assert grows_linearly(looks_foreign, lambda n: "der die 'a' x.jpg " * 400 * n)
