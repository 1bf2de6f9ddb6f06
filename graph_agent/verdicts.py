"""The checks the critic applies to one attempt. Pure functions, so they are easy to test.

Each check gives a :class:`Check`: its name, a verdict (``passed``, ``rejected``, ``not
checked`` or, for the LLM critic, ``not judged``) and the reason in words. The critic records
every check in the run's decisions, so the report can say why an output was trusted, and a
check that could not be made says so instead of passing silently.

Besides type, emptiness, files and confidence, a step is checked by what it asks and by what
its task declares:

- **target language**: a translation (any step with ``target_language``, also a chat model
  standing in for a translator) is checked with a dependency-free guess of the language: the
  writing system, and for the languages the model pack's chat models translate into (and a
  few close neighbours) the share of common function words. It rejects only a clear
  mismatch ("still English when French was asked") and says "not checked" when the text is
  too short or the language has no profile here.
- **task checks**, named by the task's spec (``TaskSpec.checks``) and run from
  :data:`TASK_CHECKS`, so a task registered from user code declares its own, and a check
  added with :func:`register_check` serves any task that names it. Built in:

  - **speech**: speech recognisers write markers such as ``[BLANK_AUDIO]`` or ``(music)`` for
    audio without speech; a transcript of markers only is not a transcript.
  - **not repetitive**: free writing that loops (see :func:`check_repetition`).
  - **condenses**: a "summary" at more than 80% of the input's length is an echo.

The optional LLM critic (:func:`llm_check`) asks a chat model whether a text output does its
step's part of the request; any failure of the model means "not judged", never a crash.
"""

from __future__ import annotations

import json
import re
import unicodedata
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graph_agent.chat import CRITIC_SYSTEM, critic_question, reply_text
from graph_agent.tools.spec import TaskTool
from graph_agent.tools.tasks import CONDENSES, REPETITION, SPEECH, TASKS

#: Below this top score a label is too unsure to pass on as an answer.
MIN_CONFIDENCE = 0.05
#: How much a summary must condense its text input: at more than 80% of the input's length
#: it is an echo, not a summary.
CONDENSE_RATIO = 0.8

Verdict = Literal["passed", "rejected", "not checked", "not judged"]
PASSED: Verdict = "passed"
REJECTED: Verdict = "rejected"
NOT_CHECKED: Verdict = "not checked"
#: The LLM critic could not give an opinion (no model, an error, an unreadable reply).
NOT_JUDGED: Verdict = "not judged"


@dataclass(frozen=True)
class Check:
    """One check's outcome; ``reason`` says why in words a report can show."""

    name: str
    verdict: Verdict
    reason: str

    @property
    def rejected(self) -> bool:
        return self.verdict == REJECTED

    def to_dict(self) -> dict[str, str]:
        return {"check": self.name, "verdict": self.verdict, "reason": self.reason}


# --------------------------------------------------------------------------- all checks


def checks(
    tool: TaskTool, attempt: dict[str, Any], args: dict[str, Any] | None = None
) -> list[Check]:
    """Every check that applies to an attempt of ``tool`` whose step had ``args``."""
    if attempt.get("status") != "ok":
        return [Check("ran", REJECTED, attempt.get("error") or "the tool failed")]
    args = args or {}
    result = attempt.get("result") or {}
    text = str(result.get("text") or "")
    spec = TASKS.get(tool.task)
    declared = [(name, TASK_CHECKS.get(name)) for name in (spec.checks if spec else ())]
    out: list[Check] = []
    modality = result.get("modality")
    if modality != tool.output:
        out.append(Check("output type", REJECTED, f"expected {tool.output} output, got {modality}"))
    else:
        out.append(Check("output type", PASSED, f"{tool.output} output, as {tool.task} gives"))
    if tool.output == "text":
        if not text.strip():
            out.append(Check("not empty", REJECTED, "the output text is empty"))
        else:
            out.append(Check("not empty", PASSED, f"{len(text)} characters of text"))
            out += _run_declared(declared, "text", text, attempt, args)
            if args.get("target_language"):
                out.append(check_language(text, str(args["target_language"])))
    if tool.output in ("image", "audio"):
        path = result.get("path")
        if not path or not Path(path).is_file() or Path(path).stat().st_size == 0:
            out.append(Check("file written", REJECTED, f"no {tool.output} file was written"))
        else:
            out.append(Check("file written", PASSED, f"{tool.output} file {Path(path).name}"))
    out += _run_declared(declared, "attempt", text, attempt, args)
    confidence = result.get("confidence")
    if confidence is not None:
        ok = confidence >= MIN_CONFIDENCE
        out.append(
            Check(
                "confidence",
                PASSED if ok else REJECTED,
                f"confidence {confidence:.3f} is {'at least' if ok else 'below'} {MIN_CONFIDENCE}",
            )
        )
    return out


# --------------------------------------------------------------------------- task checks

#: A task check: (the output's text, the attempt, the step's arguments) -> its outcome, or
#: None when it has nothing to report (short or varied text for the repetition check).
TaskCheck = Callable[[str, Mapping[str, Any], Mapping[str, Any]], "Check | None"]


@dataclass(frozen=True)
class RegisteredCheck:
    """A task check and when it runs.

    ``stage`` "text": on a non-empty text output, right after "not empty" (a transcript's
    speech, free writing's repetition); "attempt": on every finished attempt, after the
    output and file checks (a summary's length against its input, which a missing output
    also answers).
    """

    run: TaskCheck
    stage: Literal["text", "attempt"] = "text"


#: Task checks by the name a spec lists them under (``TaskSpec.checks``).
TASK_CHECKS: dict[str, RegisteredCheck] = {}


def register_check(
    name: str, run: TaskCheck, *, stage: Literal["text", "attempt"] = "text"
) -> None:
    """Make ``name`` a task check any spec can list: ``run`` judges each output of a task
    whose spec names it, as the built-in ones do (see :class:`RegisteredCheck`)."""
    TASK_CHECKS[name] = RegisteredCheck(run, stage)


def _run_declared(
    declared: list[tuple[str, RegisteredCheck | None]],
    stage: str,
    text: str,
    attempt: Mapping[str, Any],
    args: Mapping[str, Any],
) -> list[Check]:
    """The outcomes of the declared checks of ``stage``, in the spec's order.

    A name no check is registered under says so once, with the "attempt" checks: a
    misspelt check must not pass silently.
    """
    out: list[Check] = []
    for name, check in declared:
        if check is None:
            if stage == "attempt":
                why = f"no check named {name!r} is registered (graph_agent.verdicts.register_check)"
                out.append(Check(name, NOT_CHECKED, why))
        elif check.stage == stage and (found := check.run(text, attempt, args)) is not None:
            out.append(found)
    return out


def check_condenses(text: str, attempt: Mapping[str, Any]) -> Check | None:
    """Reject a summary that is not clearly shorter than its text input; None when the
    input's length is not known (it was not text)."""
    source_chars = attempt.get("input_chars") or 0
    if not source_chars:
        return None
    out_chars = len(text)
    ok = out_chars <= CONDENSE_RATIO * source_chars
    return Check(
        "condenses",
        PASSED if ok else REJECTED,
        f"the summary {'condenses' if ok else 'does not condense'} the text "
        f"({out_chars} of {source_chars} characters)",
    )


def judge(tool: TaskTool, attempt: dict[str, Any], args: dict[str, Any] | None = None) -> list[str]:
    """Problems with an attempt's output; an empty list means it is accepted."""
    return [c.reason for c in checks(tool, attempt, args) if c.rejected]


# --------------------------------------------------------------------------- repetition

#: Only tasks whose output is free writing declare this check (a model can fall into a
#: loop there); lists a model makes on purpose (entities, labels, answers read off a
#: receipt) repeat by nature.
#: A run of up to ``LOOP_MAX_LINES`` lines or sentences (of at least ``REPEAT_MIN_WORDS``
#: words) said ``REPEAT_TIMES`` times in a row is a loop: the 0.5B chat model asked for a
#: poem wrote the same four lines until its token limit. A chorus between verses, or a
#: line of code used three times apart, is not in a row.
REPEAT_MIN_WORDS, REPEAT_TIMES, LOOP_MAX_LINES = 3, 3, 4
#: Text of at least this many characters that zlib shrinks by more than this factor repeats
#: itself (English prose shrinks about 2-2.5 times, code and lists 3-4.5; a loop far more).
LOOP_MIN_CHARS, LOOP_RATIO = 400, 5.0
#: Where a text splits into lines and sentences: a newline, or a sentence end before a
#: space (not the point in "3.50").
_SPLIT = re.compile(r"\n|(?<=[.!?])\s+")


def check_repetition(text: str) -> Check | None:
    """A rejection when ``text`` repeats itself the way a model stuck in a loop does, else
    None (no check to report: short or varied text)."""
    pieces = [" ".join(p.lower().split()).strip(" ,;:-.!?") for p in _SPLIT.split(text)]
    pieces = [p for p in pieces if p]
    for size in range(1, LOOP_MAX_LINES + 1):
        for start in range(len(pieces) - size * REPEAT_TIMES + 1):
            block = pieces[start : start + size]
            if len(" ".join(block).split()) < REPEAT_MIN_WORDS:
                continue
            times = 1
            while pieces[start + times * size : start + (times + 1) * size] == block:
                times += 1
            if times >= REPEAT_TIMES:
                shown = block[0] if len(block[0]) <= 60 else block[0][:57] + "..."
                lines = "" if size == 1 else f" (with the {size - 1} line(s) after it)"
                return Check(
                    "not repetitive",
                    REJECTED,
                    f"'{shown}'{lines} is repeated {times} times in a row",
                )
    raw = text.encode("utf-8")
    if len(raw) >= LOOP_MIN_CHARS:
        ratio = len(raw) / len(zlib.compress(raw))
        if ratio > LOOP_RATIO:
            return Check(
                "not repetitive", REJECTED, f"the text repeats itself (compresses {ratio:.1f}x)"
            )
    return None


# --------------------------------------------------------------------------- silence

#: What speech recognisers write for audio without speech, once bracketed text is removed:
#: ellipses, dashes, music notes and other punctuation.
_BRACKETED = re.compile(r"\[[^\]]{0,60}\]|\([^)]{0,60}\)|\*[^*]{0,60}\*|<[^>]{0,60}>")
#: Marker words a recogniser may write without brackets.
_BARE_MARKERS = re.compile(
    r"\b(?:blank_audio|blank audio|silence|no speech|music|noise|inaudible)\b", re.IGNORECASE
)


def speech_left(text: str) -> str:
    """``text`` without silence and noise markers: what is left is what was said."""
    rest = _BRACKETED.sub(" ", text)
    rest = _BARE_MARKERS.sub(" ", rest)
    return " ".join(w for w in rest.split() if any(ch.isalnum() for ch in w))


def check_transcript(text: str) -> Check:
    """Reject a transcript that holds only markers such as ``[BLANK_AUDIO]`` or ``(silence)``.

    Whisper writes such markers for silence, music or noise; passing them on as "the
    transcript" would feed a summary or a translation with nothing.
    """
    if speech_left(text):
        return Check("speech", PASSED, "the transcript has words, not only silence markers")
    shown = text.strip()[:60]
    return Check(
        "speech",
        REJECTED,
        f"the transcript holds no speech, only silence or noise markers ({shown!r})",
    )


register_check(SPEECH, lambda text, _attempt, _args: check_transcript(text))
register_check(REPETITION, lambda text, _attempt, _args: check_repetition(text))
register_check(
    CONDENSES, lambda text, attempt, _args: check_condenses(text, attempt), stage="attempt"
)


# --------------------------------------------------------------------------- language


def _words(text: str) -> frozenset[str]:
    """A word set from a space-separated string (easier to read and edit than a list)."""
    return frozenset(text.split())


#: Common function words per language (lower case). Overlaps between languages are fine: the
#: score is the share of a text's words in each list, and a language's own words tip it.
STOPWORDS: dict[str, frozenset[str]] = {
    "English": _words(
        "the and is are was were of to in that it this with for on be have has had not we "
        "you they he she will would at by from or an which our their there been about what "
        "all can should these those its into than then them also very"
    ),
    "French": _words(
        "le la les des du un une et est sont dans pour que qui pas nous vous ils elle elles "
        "avec sur au aux ce cette ces mais ou être été leur leurs sera très plus à l d qu c j "
        "ne se sa son ses lui y en on était ont"
    ),
    "German": _words(
        "der die das und ist sind nicht ein eine einen einem dem den des zu mit auf für von "
        "sich wir sie es ich auch werden wird wurde im bei nach aus dass oder aber noch über "
        "zum zur vom hat haben war"
    ),
    "Spanish": _words(
        "el la los las de del y es son en que un una por para con no se su sus al lo como más "
        "pero está están fue ser este esta estos nosotros también muy hay ha han"
    ),
    "Italian": _words(
        "il lo la gli le di del della dei e è che un una per con non sono si anche più ma come "
        "nel nella alla questo questa ci essere stato molto ha hanno"
    ),
    "Portuguese": _words(
        "o os a as de do da dos das e é que um uma em no na para com não se por mais mas como "
        "foi são está também muito ao nos pelo pela ele ela"
    ),
    "Dutch": _words(
        "de het een en is zijn van in op dat die niet met voor te er ook aan als maar wij we "
        "ze bij om dan nog wordt werd naar heeft hebben"
    ),
}

#: Unicode blocks of the writing systems told apart here.
_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x0400, 0x04FF, "Cyrillic"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0750, 0x077F, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x1100, 0x11FF, "Hangul"),
    (0x3040, 0x30FF, "Kana"),
    (0x3130, 0x318F, "Hangul"),
    (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"),
    (0xAC00, 0xD7AF, "Hangul"),
)

#: The scripts a language is written in, for every language a request may name
#: (``planning.constraints.LANGUAGES``). Japanese mixes kana with Han characters.
LANGUAGE_SCRIPTS: dict[str, frozenset[str]] = {
    **{
        name: frozenset({"Latin"})
        for name in _words(
            "English French German Spanish Italian Portuguese Dutch Turkish Polish Swedish "
            "Norwegian Danish Finnish Czech Vietnamese Indonesian Romanian Hungarian Swahili"
        )
    },
    "Chinese": frozenset({"Han"}),
    "Japanese": frozenset({"Kana", "Han"}),
    "Korean": frozenset({"Hangul"}),
    "Russian": frozenset({"Cyrillic"}),
    "Ukrainian": frozenset({"Cyrillic"}),
    "Greek": frozenset({"Greek"}),
    "Hebrew": frozenset({"Hebrew"}),
    "Arabic": frozenset({"Arabic"}),
    "Persian": frozenset({"Arabic"}),
    "Urdu": frozenset({"Arabic"}),
    "Hindi": frozenset({"Devanagari"}),
    "Bengali": frozenset({"Bengali"}),
    "Thai": frozenset({"Thai"}),
}
_ALIASES = {"mandarin": "Chinese", "farsi": "Persian"}

#: Fewer letters or words than these, and a guess would be noise: "not checked".
MIN_LETTERS = 12
MIN_WORDS = 4
#: A script must hold this share of the letters to say the text is written in it.
SCRIPT_SHARE = 0.6
#: The target passes when at least this share of the words are its common words and its
#: share is close to the best language's (within this ratio)...
MIN_PASS_SHARE = 0.1
PASS_RATIO = 0.8
#: ... and it is rejected only when another language clearly leads: that language's share is
#: at least ``CLEAR_SHARE`` and the target's at most ``REJECT_RATIO`` of it. In between, the
#: text is mixed or too plain to tell: "not checked".
CLEAR_SHARE = 0.15
REJECT_RATIO = 0.5
#: For a Latin-script target without a word list, only a clearly English text is rejected.
CLEAR_ENGLISH = 0.3

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def language_name(name: str) -> str:
    """A language name as ``LANGUAGE_SCRIPTS`` spells it ("french" -> "French")."""
    key = name.strip().lower()
    return _ALIASES.get(key, key.capitalize())


def script_counts(text: str) -> dict[str, int]:
    """Letters per writing system; characters outside the known blocks are ignored."""
    counts: dict[str, int] = {}
    for ch in text:
        if not ch.isalpha():
            continue
        code = ord(unicodedata.normalize("NFC", ch)[0])
        for low, high, script in _SCRIPT_RANGES:
            if low <= code <= high:
                counts[script] = counts.get(script, 0) + 1
                break
    return counts


def stopword_shares(text: str) -> dict[str, float]:
    """Per profiled language, the share of ``text``'s words that are its stopwords."""
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return dict.fromkeys(STOPWORDS, 0.0)
    return {
        lang: round(sum(w in stop for w in words) / len(words), 3)
        for lang, stop in STOPWORDS.items()
    }


def _shares(scores: dict[str, float], *langs: str) -> str:
    return ", ".join(f"{lang} {scores.get(lang, 0.0):.2f}" for lang in langs)


def check_language(text: str, target: str) -> Check:
    """Is ``text`` in ``target`` (a language name such as "French")?

    Rejects only a clear mismatch: a text in another writing system, or one whose common words
    are clearly another language's and hardly the target's. Short texts, mixed texts and
    languages with no profile here are "not checked", with the reason.
    """
    name = "target language"
    want = language_name(target)
    scripts = LANGUAGE_SCRIPTS.get(want)
    if scripts is None:
        return Check(name, NOT_CHECKED, f"no language check for {target!r}")
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < MIN_LETTERS:
        return Check(name, NOT_CHECKED, f"too short to tell the language ({letters} letters)")
    script, most = max(counts.items(), key=lambda kv: kv[1])
    share = most / letters
    if script not in scripts:
        if share >= SCRIPT_SHARE:
            return Check(
                name,
                REJECTED,
                f"the text is written in {script} script ({share:.0%} of letters), "
                f"but {want} is written in {' or '.join(sorted(scripts))}",
            )
        return Check(name, NOT_CHECKED, f"mixed scripts; the most is {script} ({share:.0%})")
    if script != "Latin":
        return Check(name, PASSED, f"written in {script} script, as {want} is")
    words = _WORD.findall(text)
    if len(words) < MIN_WORDS:
        return Check(name, NOT_CHECKED, f"too short to tell the language ({len(words)} words)")
    scores = stopword_shares(text)
    best = max(scores, key=lambda lang: scores[lang])
    if want not in STOPWORDS:
        if best == "English" and want != "English" and scores["English"] >= CLEAR_ENGLISH:
            return Check(
                name,
                REJECTED,
                f"the text is still English, not {want} (English common words "
                f"{scores['English']:.2f} of all words)",
            )
        return Check(name, NOT_CHECKED, f"no word list for {want}; Latin script, as expected")
    if scores[want] >= MIN_PASS_SHARE and scores[want] >= PASS_RATIO * scores[best]:
        return Check(
            name, PASSED, f"looks like {want} (common-word shares: {_shares(scores, want, best)})"
        )
    if scores[best] >= CLEAR_SHARE and scores[want] <= REJECT_RATIO * scores[best]:
        still = "still " if best == "English" else ""
        return Check(
            name,
            REJECTED,
            f"the text is {still}{best}, not {want} (common-word shares: "
            f"{_shares(scores, best, want)})",
        )
    return Check(
        name,
        NOT_CHECKED,
        f"cannot tell clearly whether it is {want} (common-word shares: "
        f"{_shares(scores, want, best)})",
    )


# --------------------------------------------------------------------------- LLM critic

#: How much of an input or output the LLM critic is shown (characters).
LLM_SHOWN_CHARS = 1500
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(reply: str) -> tuple[bool | None, str]:
    """``(answer, reason)`` from a free-form reply; ``answer`` is None when it is neither.

    Tolerates JSON (``{"answer": "no", "reason": ...}``), Markdown emphasis, a leading
    "Answer:" and yes/no anywhere in the first line, in that order of trust.
    """
    text = reply.strip().strip("`").strip()
    if text.lower().startswith("json"):
        text = text[4:].strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        raw = next(
            (data[k] for k in ("answer", "verdict", "ok", "judgement", "judgment") if k in data),
            None,
        )
        why = str(data.get("reason") or data.get("why") or "").strip()
        if isinstance(raw, bool):
            return raw, why
        if isinstance(raw, str) and (m := _YES_NO.search(raw)):
            return m.group(1).lower() == "yes", why
    plain = text.replace("*", "").replace("_", " ")
    first_line = plain.split("\n", 1)[0]
    # The first line is where the answer was asked for; elsewhere "yes" may be quoted text.
    m = _YES_NO.search(first_line) or _YES_NO.search(plain)
    if m is None:
        return None, ""
    why = plain[m.end() :].strip().lstrip(".,:;-–—!) ").strip()
    return m.group(1).lower() == "yes", " ".join(why.split())[:300]


def llm_check(
    model: Any, request: str, step: dict[str, Any], inputs: dict[str, str], output: str
) -> Check:
    """Ask ``model`` (a LangChain chat model) whether ``output`` does the step's part.

    A "no" rejects like any other check. Any error, or a reply that is neither yes nor no,
    is "not judged": the LLM critic can only add doubt, never break a run.
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    name = "llm critic"
    try:
        messages = [
            SystemMessage(CRITIC_SYSTEM),
            HumanMessage(critic_question(request, step, inputs, output, LLM_SHOWN_CHARS)),
        ]
        reply = reply_text(model.invoke(messages))
    except Exception as exc:  # any provider error: a network failure, a bad key, a timeout
        return Check(name, NOT_JUDGED, f"the LLM critic failed: {type(exc).__name__}: {exc}")
    answer, why = parse_yes_no(reply)
    if answer is None:
        return Check(name, NOT_JUDGED, f"the LLM critic's reply was not yes or no: {reply[:120]!r}")
    if answer:
        return Check(name, PASSED, f"the LLM critic says it does: {why or 'no reason given'}")
    return Check(name, REJECTED, f"the LLM critic says it does not: {why or 'no reason given'}")
