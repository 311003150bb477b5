"""The ``rpa-sim`` command line: its entry point, and the one place where a mistake becomes an exit status.

Every command reads the results of the two stages (evaluate, then route and
sweep) and only formats them. The conventions (``docs/cli.md``): results go to
standard output, messages ("wrote ...", skipped records, progress bars) to
standard error; tabular results come as ``--format table|csv|json``;
``--out`` is always a file and ``--out-dir`` a folder. A user's mistake ends
in one line ``rpa-sim: error: ...`` on standard error, with exit status 1 for
bad input and 2 for bad usage; Ctrl-C exits with 130 and SIGTERM with 143,
leaving no partial output behind. A library's warning is said the same way,
``rpa-sim: warning: ...`` on one line, or not at all when it is meant for
developers.

The package: :mod:`~rpa_sim.cli.parser` builds the parser from the command groups
(:mod:`~rpa_sim.cli.scenarios`, :mod:`~rpa_sim.cli.evaluation`, :mod:`~rpa_sim.cli.records`,
:mod:`~rpa_sim.cli.export`, :mod:`~rpa_sim.cli.staffing`, :mod:`~rpa_sim.cli.monitoring`,
:mod:`~rpa_sim.cli.live`), whose options come
from :mod:`~rpa_sim.cli.options`; :mod:`~rpa_sim.cli.data` reads DATA, :mod:`~rpa_sim.cli.output` formats
what is printed, and :mod:`~rpa_sim.cli.named_files` keeps an output from replacing an input.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

from rpa_sim.cli import catalogue, evaluation, export, live, monitoring, records, scenarios, signals, staffing
from rpa_sim.cli.named_files import refuse_replacing_inputs
from rpa_sim.cli.output import one_line, say
from rpa_sim.cli.parser import EXIT_USAGE, build_parser, command_named
from rpa_sim.common.errors import InputError, UsageError

__all__ = ["COMMANDS", "EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_TERMINATED", "EXIT_USAGE", "UsageError", "main"]

EXIT_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 128 + signal.SIGINT, 128 + signal.SIGTERM

#: Each command's function, by its name: it returns the exit status, or raises InputError or UsageError.
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    **scenarios.COMMANDS, **catalogue.COMMANDS, **evaluation.COMMANDS, **signals.COMMANDS, **records.COMMANDS,
    **export.COMMANDS, **staffing.COMMANDS, **monitoring.COMMANDS, **live.COMMANDS}


class _Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so that every cleanup on the way out runs."""


_STOPPING = (signal.SIGINT, signal.SIGTERM)
# what is said when a signal stops a command, and the exit status
_STOPPED_BY = {signal.SIGINT: ("interrupted", EXIT_INTERRUPTED), signal.SIGTERM: ("terminated", EXIT_TERMINATED)}


@contextlib.contextmanager
def _stopped_once() -> Iterator[list[int]]:
    """While the command runs, the first Ctrl-C raises KeyboardInterrupt and the first SIGTERM :class:`_Terminated`,
    in the main thread; any signal after that one is ignored, for good.

    The first signal stops the command, and its cleanup (pools shut down, temporaries removed) then runs to the
    end, however many signals follow, and however close: a second one raised inside it would leave a pool half
    shut down, which hangs the exit, or a temporary file behind (issue 30). Once stopped, the process is on its
    way out: the handlers stay ignoring, so that a signal during the interpreter's exit neither prints a traceback
    nor changes the exit status. A command that ends otherwise gets its previous handlers back; a signal that
    was ignored when it started stays ignored. Yields the signal that stopped the command, once it came.
    """
    stopped: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield stopped
        return

    def stop(signum: int, frame: Any) -> NoReturn:
        for each in _STOPPING:
            signal.signal(each, signal.SIG_IGN)
        stopped.append(signum)
        raise KeyboardInterrupt if signum == signal.SIGINT else _Terminated

    # a signal ignored from the start (a job started in the background) stays ignored
    previous = {signum: signal.signal(signum, stop) for signum in _STOPPING
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield stopped
    finally:
        if not stopped:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


#: Warnings that speak to the authors of code using a library, not to someone running rpa-sim: never shown.
_DEVELOPERS_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: Any = None, line: str | None = None) -> None:
    """A library's warning said as rpa-sim says one: ``rpa-sim: warning: ...`` on one line, without the
    library's file, line and source (a path inside the installation means nothing to the user)."""
    say(f"rpa-sim: warning: {message}")


@contextlib.contextmanager
def _warnings_on_one_line() -> Iterator[None]:
    """While a command runs, every warning a library raises is said once on one line, or silenced when it
    is meant for developers (:data:`_DEVELOPERS_WARNINGS`). One of those that rpa-sim's own code causes (a
    deprecated call of a library, attributed to the calling module) is said too: it is for us to fix, and a
    test that compares what a command says catches it."""
    with warnings.catch_warnings():
        warnings.simplefilter("once")
        for category in _DEVELOPERS_WARNINGS:
            warnings.filterwarnings("ignore", category=category, module=r"(?!rpa_sim\b)")
        warnings.showwarning = _one_line_warning
        yield


def _fail(message: str, status: int) -> int:
    print(f"rpa-sim: {one_line(message)}", file=sys.stderr)
    return status


def _check_input_limits() -> None:
    """Refuse a bad ``RPA_SIM_MAX_LINE_BYTES`` or ``RPA_SIM_MAX_FILE_BYTES`` as bad usage, before any work."""
    from rpa_sim.common.inputs import check_limits  # noqa: PLC0415

    try:
        check_limits()
    except ValueError as error:
        raise UsageError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 bad input, 2 bad usage, 130/143 signals)."""
    with _stopped_once() as stopped, _warnings_on_one_line():
        try:
            return _run(argv)
        except Exception:
            if not stopped:
                raise
            # the signal's exception, raised inside code that turned it into another: a module being imported
            # (Python wraps it in a RuntimeError when it comes during a class's creation), a library's own handler
            return _fail(*_STOPPED_BY[signal.Signals(stopped[0])])


def _run(argv: Sequence[str] | None) -> int:
    try:
        try:
            argv = sys.argv[1:] if argv is None else list(argv)
            args = build_parser(only=command_named(argv)).parse_args(argv)
        except SystemExit as done:  # --help, --version, or a usage error already printed
            return int(done.code or 0)
        _check_input_limits()
        refuse_replacing_inputs(args)
        status = COMMANDS[args.command](args)
        for warning in getattr(args, "deprecations", ()):
            say(f"rpa-sim: warning: {warning}")
        return status
    except InputError as error:
        return _fail(f"error: {error}", EXIT_INPUT)
    except UsageError as error:
        return _fail(f"error: {error}", EXIT_USAGE)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except _Terminated:
        return _fail("terminated", EXIT_TERMINATED)
    except MemoryError:  # the sizes checked before work starts are estimates; a traceback here helps no one
        return _fail("error: out of memory: this machine has too little for the input (docs/cli.md, Sizes)",
                     EXIT_INPUT)
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): not an error of ours
        sys.stderr.close()
        return 0
    except OSError as error:  # the system refused a file: full disk, no permission, ...
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"error: {where}{error.strerror or error}", EXIT_INPUT)

