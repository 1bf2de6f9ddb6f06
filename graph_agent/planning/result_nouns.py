"""A later clause that names an earlier result by its noun is read as naming "it".

"Transcribe lecture.mp3 and turn the transcript into a quiz", "caption beach.jpg and make a
poem out of the caption", "summarize notes.txt and give the summary a catchy title": the
clause classifier hears "transcript", "caption" and "summary" as the tasks that make them,
so the second clause looked like the first step said again and the writing step was lost
(issue 25, class 5). In a clause after the first, such a noun with a determiner ("the
transcript", "that summary") points back at a result; for the classifier it is replaced by
"it", padded to the same length so every clause span stays valid. Only the classifier
reads the masked text: steps keep the user's words, and the linker still reads "the
transcript" as a pointer back (``linking._BACK``). Training masks the same way
(``evals/train_planner.py``), so the classifier learns from what it will see.

Only the nouns of text results whose name is also a task's name are masked. "The image" or
"the recording" stay: the medium a clause works on is what tells its task.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph_agent.planning.clauses import Clause, split_clauses

#: Result nouns that also name the task producing them, after a word that points back.
_RESULT = re.compile(
    r"\b(?:the|that|this|your|its|their)\s+"
    r"(?:(?:resulting|generated|new|previous|above|same)\s+)?"
    r"(?:transcripts?|transcriptions?|captions?|summary|summaries|translations?)\b",
    re.IGNORECASE,
)


def mask_result_nouns(request: str, clauses: Sequence[Clause] | None = None) -> str:
    """``request`` with each result noun in a clause after the first read as "it"."""
    if clauses is None:
        clauses = split_clauses(request)
    if len(clauses) < 2:
        return request
    out = list(request)
    for clause in clauses[1:]:
        for m in _RESULT.finditer(request, clause.start, clause.end):
            out[m.start() : m.end()] = "it".ljust(m.end() - m.start())
    return "".join(out)
