"""Translation with Apertium: the translation back end for cards whose ``library`` is
"apertium".

No neural translation model can be had offline here, and the pack's 0.5B chat model
translates loosely. Apertium, a rule-based translator packaged by Debian
(``apt-get install apertium apertium-eng-spa``), translates English and Spanish well in a
fraction of a second. It is GPL, so it is run as a separate program (``apertium MODE``,
text on stdin) and never linked or imported.

The model pack cannot hold a system program, so the pack's card folder
(``<models>/apertium-eng-spa``) holds only the card; the card names the program
(``program: apertium``) and the pack source marks the card runnable only while that program
is on PATH. If the program or the language pair's data is missing when a step runs, the
call fails with a message saying what to install, and the critic moves on to the next
candidate (the chat model).

A card is one language pair; the folder's name says which (``apertium-eng-spa``). The
direction follows the step's target language (Spanish: ``eng-spa``; English: ``spa-eng``).
The source is the pair's other language; a text that is clearly in neither (French into
Spanish) is refused, so the critic hands it to a model that reads French, and a text already
in the target language is refused too (there is nothing to translate).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from graph_agent.tools.cancel import check_cancelled
from graph_agent.tools.errors import ModelUnavailableError, ToolError
from graph_agent.tools.results import ToolResult
from graph_agent.tools.spec import TaskTool, ToolCall

PROGRAM = "apertium"
#: A card folder is named ``apertium-<from>-<to>`` after the Debian package of the pair.
FOLDER_PREFIX = "apertium-"
#: Apertium's three-letter codes -> the ISO 639-1 codes cards use, and the English names
#: requests use, for the pairs Debian ships.
CODES = {
    "eng": ("en", "English"),
    "spa": ("es", "Spanish"),
    "cat": ("ca", "Catalan"),
    "fra": ("fr", "French"),
    "por": ("pt", "Portuguese"),
    "ita": ("it", "Italian"),
    "glg": ("gl", "Galician"),
    "oci": ("oc", "Occitan"),
    "ron": ("ro", "Romanian"),
    "epo": ("eo", "Esperanto"),
    "eus": ("eu", "Basque"),
}
#: Seconds one translation may take (a 50,000-character text takes a few seconds); the
#: step's own timeout also stops it (the program is killed).
TIMEOUT_S = 120.0
#: langid's probability above which the source language is taken as known.
_SURE = 0.95


def installed_modes() -> frozenset[str]:
    """The translation modes installed (``apertium -l``: "eng-spa", "spa-eng" ...), or an
    empty set when the program is not on PATH. Asked each time a pair loads (once per
    warm pipeline), so installing a pair needs no restart."""
    if shutil.which(PROGRAM) is None:
        return frozenset()
    done = subprocess.run([PROGRAM, "-l"], capture_output=True, text=True, timeout=30, check=False)
    return frozenset(line.strip() for line in done.stdout.splitlines() if line.strip())


class ApertiumPair:
    """One installed language pair: runs ``apertium MODE`` for either direction."""

    def __init__(self, model_dir: str) -> None:
        name = Path(model_dir).name
        pair = name.removeprefix(FOLDER_PREFIX).split("-")
        if not name.startswith(FOLDER_PREFIX) or len(pair) != 2 or not set(pair) <= set(CODES):
            raise ModelUnavailableError(
                f"{model_dir} is not an Apertium card folder: its name must be "
                "apertium-<from>-<to> with Apertium's language codes (apertium-eng-spa)."
            )
        self.left, self.right = pair
        if shutil.which(PROGRAM) is None:
            raise ModelUnavailableError(
                "Apertium is not installed, so this translator cannot run. Install it with "
                f"`apt-get install apertium apertium-{self.left}-{self.right}`; meanwhile "
                "another translation model is used."
            )
        missing = {self.mode(self.right), self.mode(self.left)} - installed_modes()
        if missing:
            raise ModelUnavailableError(
                f"Apertium has no {', '.join(sorted(missing))} mode installed. Install the "
                f"language pair with `apt-get install apertium-{self.left}-{self.right}`."
            )

    def mode(self, target: str) -> str:
        """The mode that translates into ``target`` (a code of this pair)."""
        source = self.left if target == self.right else self.right
        return f"{source}-{target}"

    def target_code(self, language: str) -> str | None:
        """This pair's code for a language name or ISO code ("Spanish", "es" -> "spa")."""
        wanted = language.strip().lower()
        for code in (self.left, self.right):
            iso, name = CODES[code]
            if wanted in (code, iso, name.lower()):
                return code
        return None

    def translate(self, text: str, mode: str) -> str:
        """``text`` through ``apertium -u MODE`` (``-u``: no marks on unknown words).

        Run as its own process group (``apertium`` is a shell script that starts a pipeline
        of a dozen programs): the whole group is killed when it passes `TIMEOUT_S` or when
        the step is cancelled (checked every 0.1 s), so no translation outlives its step.
        """
        proc = subprocess.Popen(
            [PROGRAM, "-u", mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        started = time.monotonic()
        payload: bytes | None = text.encode("utf-8")
        try:
            while True:
                try:
                    out, err = proc.communicate(payload, timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    payload = None  # sent by the first call; later calls only wait
                    check_cancelled()
                    if time.monotonic() - started > TIMEOUT_S:
                        raise ToolError(
                            f"Apertium ({mode}) took more than {TIMEOUT_S:g} s; send a "
                            "shorter text."
                        ) from None
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 0:
            detail = err.decode("utf-8", "replace").strip()[-300:]
            raise ToolError(f"Apertium ({mode}) failed with exit code {proc.returncode}: {detail}")
        return out.decode("utf-8", "replace").strip()


def load_apertium(model_dir: str) -> ApertiumPair:
    return ApertiumPair(model_dir)


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    """langid's identifier with probabilities normalised (its model ships in the module)."""
    from langid.langid import LanguageIdentifier, model

    return LanguageIdentifier.from_modelstring(model, norm_probs=True)


def detect_language(text: str) -> tuple[str, float]:
    """``(ISO code, probability)`` of ``text``'s language, by langid (97 languages).

    Short texts are guesses ("Hola" -> English at 0.17): callers act only on a sure one.
    """
    code, probability = _identifier().classify(text)
    return str(code), float(probability)


def _translate(pair: ApertiumPair, call: ToolCall) -> ToolResult:
    text = str(call.args["text"]).strip()
    if not text:
        raise ToolError("Translation needs some text to translate.")
    wanted = str(call.args.get("target_language") or "English")
    target = pair.target_code(wanted)
    if target is None:
        names = " and ".join(CODES[c][1] for c in (pair.left, pair.right))
        raise ToolError(
            f"This Apertium pair translates between {names} only, not into {wanted}; "
            "another translation model must do it."
        )
    source = pair.left if target == pair.right else pair.right
    found, probability = detect_language(text)
    if probability >= _SURE and found != CODES[source][0]:
        said = "already in " if found == CODES[target][0] else "in "
        raise ToolError(
            f"The text looks {said}{_name(found)} (langid {probability:.2f}), but "
            f"Apertium's {pair.mode(target)} mode translates {CODES[source][1]} into "
            f"{CODES[target][1]}; another translation model must do it."
        )
    check_cancelled()
    out = pair.translate(text, pair.mode(target))
    if not out:
        raise ToolError(f"Apertium ({pair.mode(target)}) returned no text.")
    return ToolResult(
        kind="translation",
        modality="text",
        text=out,
        extra={
            "mode": pair.mode(target),
            "source_language": CODES[source][1],
            "detected": {"language": found, "probability": round(probability, 3)},
        },
    )


def _name(iso: str) -> str:
    return next((name for code, name in CODES.values() if code == iso), iso)


TOOLS: list[TaskTool] = [
    TaskTool(
        task="translation",
        inputs=(("text", "text"),),
        output="text",
        loader="apertium",
        call=_translate,
        description="Translate between the two languages of an Apertium pair (rule-based).",
        options=("target_language",),
        library="apertium",
        make_loader=load_apertium,
        imports=("langid",),
    ),
]
