"""Selection constraints and languages read from a request's words (``planning/constraints``)."""

from __future__ import annotations

import pytest

from graph_agent.planning.constraints import constraints_from_request, target_language


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        # The issue's own examples.
        ("Use only Apache-2.0 models", {"licenses": ["apache-2.0"]}),
        ("transcribe call.wav with the smallest model", {"prefer_smallest": True}),
        ("transcribe call.wav with the best model on Common Voice", {"best_on": "Common Voice"}),
        # Licences as people write them, normalised to the Hub's ids.
        ("Summarize report.txt using only Apache 2.0 models.", {"licenses": ["apache-2.0"]}),
        ("only MIT-licensed models please", {"licenses": ["mit"]}),
        ("apache 2.0 or MIT weights only", {"licenses": ["apache-2.0", "mit"]}),
        ("CC BY-NC 4.0 models are fine", {"licenses": ["cc-by-nc-4.0"]}),
        ("the licence must be apache-2.0 or mit", {"licenses": ["apache-2.0", "mit"]}),
        ("caption it with a model under 100M parameters", {"max_parameters": 100_000_000}),
        # A licence's name that is not said of the models is no constraint.
        ("summarize the MIT press release", {}),
        ("I study at MIT and need a short summary", {}),
    ],
)
def test_constraints_stated_in_words(request_, expected):
    assert constraints_from_request(request_) == expected


def test_the_output_language_is_read_from_in_or_into():
    assert target_language("summarize it in French") == "French"
    assert target_language("translate the transcript into german") == "German"
    assert target_language("put it in writing") is None
