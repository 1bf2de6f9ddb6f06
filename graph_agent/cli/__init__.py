"""The graph-agent command: run, plan, models, index, eval.

Every expected failure (missing file, wrong kind of input, empty request, missing models)
prints one clear message and exits with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import select
import sys
import threading
from collections.abc import Sequence

from rich.markup import escape

from graph_agent.cli import eval as eval_cmd
from graph_agent.cli import index, models, run
from graph_agent.cli.common import EXIT_OK, EXIT_STEP_FAILED, EXIT_USAGE, UsageError, console

__all__ = ["EXIT_OK", "EXIT_STEP_FAILED", "EXIT_USAGE", "build_parser", "console_main", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graph-agent", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (run, models, index, eval_cmd):
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # Our own progress lines replace the libraries' per-file bars and advisory warnings.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        _check_text(argv)
        args = build_parser().parse_args(argv)
        code = int(args.func(args))
    except UsageError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        code = EXIT_USAGE
    except KeyboardInterrupt:
        console.print("interrupted; resume with --thread-id")
        code = 130
    except BrokenPipeError as exc:
        if not _stdout_gone():  # a pipe to something else broke: a failure like any other
            console.print(f"[red]error:[/red] {escape(str(exc))}")
            return EXIT_STEP_FAILED
        code = EXIT_READER_GONE
    except Exception as exc:  # a bug: one line, and the traceback only when asked for
        if os.environ.get("GRAPH_AGENT_DEBUG"):
            raise
        console.print(
            f"[red]error:[/red] graph-agent failed unexpectedly: {escape(type(exc).__name__)}: "
            f"{escape(str(exc))} (set GRAPH_AGENT_DEBUG=1 to see the traceback)"
        )
        code = EXIT_STEP_FAILED
    return code


#: The shell's status for a process ended by SIGPIPE: the reader of stdout went away.
EXIT_READER_GONE = 128 + 13


def console_main() -> None:
    """The ``graph-agent`` command: `main`, then leave the process with its exit code.

    When the reader of stdout went away (`graph-agent plan ... | head`) it stops quietly,
    as other command-line tools do: what is still buffered goes nowhere rather than
    raising again when Python flushes stdout on the way out."""
    code = main()
    if code == EXIT_READER_GONE or _stdout_gone(ask_the_pipe=False):
        code = EXIT_READER_GONE
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    _leave(code)


def _stdout_gone(ask_the_pipe: bool = True) -> bool:
    """Whether stdout is a pipe whose reader has gone: flushing it fails with EPIPE, or,
    with nothing left to flush and ``ask_the_pipe``, the pipe reports an error (its reader
    closed it). Not asked after a run that wrote all it had: a reader that left after
    reading everything is no failure."""
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
    except BrokenPipeError:
        return True
    except (OSError, ValueError, AttributeError):
        return False  # no real stdout (a StringIO, a notebook): nothing to tell
    if not ask_the_pipe:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _check_text(argv: Sequence[str]) -> None:
    """Refuse an argument that is not valid UTF-8 (the shell passes raw bytes, which Python
    keeps as lone surrogates and every later print or database write would choke on)."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            raise UsageError(
                f"An argument is not valid UTF-8 text (byte {ord(arg[exc.start]) & 0xFF:#04x} in "
                f"{shown[:60]!r}). Write the request in UTF-8 (check the terminal's encoding)."
            ) from None


def _leave(code: int) -> None:
    """Exit the command with ``code``. While a model call that could not be stopped still
    runs in a thread, leave at once: interpreter shutdown under a running native call
    aborts the process ("terminate called without an active exception", exit 134) instead
    of exiting with ``code``. Only the command does this, never `main` called from Python."""
    stuck = [t for t in threading.enumerate() if t.name.startswith("graph-agent ") and t.is_alive()]
    if stuck:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
