"""Requests in another language than English: told why nothing was planned."""

from __future__ import annotations

import pytest

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
        # English, with foreign names and quoted foreign text.
        ("summarize the article from Le Monde by De la Cruz", False),
        ('translate "Der Hund ist nicht hier und die Katze ist weg" into English', False),
        ("transcribe la grabación audio.wav", False),  # one word is not enough
        ("what is in photo.jpg", False),
        ("use MIT models; what was said in the van? e.g. names", False),  # English words too
        ("", False),
    ],
)
def test_looks_foreign(request_, foreign):
    assert looks_foreign(request_) is foreign


def test_a_foreign_request_nothing_was_found_in_says_the_planner_reads_english():
    with pytest.raises(RequestError, match="does not look like English") as exc:
        plan_offline("Fasse dieses Dokument zusammen", {"notes.txt": "text"})
    assert "Could not find a task" in str(exc.value)


def test_an_english_request_nothing_was_found_in_gets_no_language_hint():
    with pytest.raises(RequestError) as exc:
        plan_offline("fly me to Rome", {})
    assert "English" not in str(exc.value)
