"""Worked examples for the LLM planner's prompt.

Small models copy the *shape* of what they are shown far more reliably than they follow a
schema described in words, so each example is a complete request -> plan pair in exactly the
JSON the parser expects. They were written for this project (not taken from TaskBench, whose
dev split is used to score the planner) and between them show: a chain through ``<node-j>``,
independent steps with no deps, literal text arguments, a second text role (``other``) and a
request with nothing to plan. They are few on purpose: every prompt token costs prefill time
on a CPU, and four examples cover the shapes.
"""

from __future__ import annotations

from typing import Any

#: (request, inputs as name -> kind, plan as the model should write it)
EXAMPLES: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    (
        "Transcribe interview.wav and then give me a short summary of it.",
        {"interview.wav": "audio"},
        {
            "subtasks": [
                {
                    "id": "node-0",
                    "task": "automatic-speech-recognition",
                    "args": {"audio": "interview.wav"},
                    "deps": [],
                },
                {
                    "id": "node-1",
                    "task": "summarization",
                    "args": {"text": "<node-0>"},
                    "deps": ["node-0"],
                },
            ]
        },
    ),
    (
        "What objects are in street.png? Also estimate how far away things are in it.",
        {"street.png": "image"},
        {
            "subtasks": [
                {
                    "id": "node-0",
                    "task": "object-detection",
                    "args": {"image": "street.png"},
                    "deps": [],
                },
                {
                    "id": "node-1",
                    "task": "depth-estimation",
                    "args": {"image": "street.png"},
                    "deps": [],
                },
            ]
        },
    ),
    (
        "Paint a lighthouse in a storm, write a caption for the picture, and tell me whether "
        "that caption means the same as 'a tower by the sea'.",
        {},
        {
            "subtasks": [
                {
                    "id": "node-0",
                    "task": "text-to-image",
                    "args": {"text": "a lighthouse in a storm"},
                    "deps": [],
                },
                {
                    "id": "node-1",
                    "task": "image-to-text",
                    "args": {"image": "<node-0>"},
                    "deps": ["node-0"],
                },
                {
                    "id": "node-2",
                    "task": "sentence-similarity",
                    "args": {"text": "<node-1>", "other": "a tower by the sea"},
                    "deps": ["node-1"],
                },
            ]
        },
    ),
    (
        "Book me a table for two tonight.",
        {},
        {"subtasks": []},
    ),
]
