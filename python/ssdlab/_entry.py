"""The ``ssdlab`` console script's entry point (``ssdlab._entry:main``).

Ctrl-C and SIGTERM are handled from the first moments of a run. This module and
``ssdlab/__init__.py`` import nothing but the C module ``_signal``; run as the console script, the
package sets handlers that only note a signal with its first statements, and `main` keeps noting;
then it imports the CLI (click, NumPy, the core, pydantic: about half a
second). A signal during those imports therefore interrupts nothing half-way (an exception raised
inside the import machinery would be printed as "Exception ignored ..."): once they are done the
run ends with one line and status 130 (SIGTERM: 143) before any command starts. From then on the
CLI's own handling applies (``ssdlab.cli.main``), and once the command has finished, signals are
ignored while the interpreter exits, so a late Ctrl-C cannot print a traceback either.

What stays out of reach is what runs before this code: Python's own start-up and the console
script the installer generates (``import re``, then the import of this module), 20-50 ms on a
loaded machine. A Ctrl-C then is the interpreter's to report, before anything is written.
"""

import _signal  # type: ignore[import-not-found,unused-ignore]  # the C module: `signal` would import enum
import sys

from ssdlab import _early_handlers as _ORIGINAL  # noqa: E402 - set up by the package's first statements
from ssdlab import _early_signals as _EARLY

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads either)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
_SIGNALS = (_signal.SIGINT, _signal.SIGTERM)


class _Terminated(KeyboardInterrupt):
    """SIGTERM before the CLI's own handler is set, unwound like Ctrl-C."""


def _on_sigterm(signum: int, frame: "Any") -> None:
    raise _Terminated()


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # stderr closed or gone
        pass


def _ignore_signals() -> None:
    """From here on the command's outcome is decided: signals no longer interrupt the exit."""
    for sig in _SIGNALS:
        try:
            _signal.signal(sig, _signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread
            pass


def main(argv: "Optional[Sequence[str]]" = None) -> int:
    """Runs the CLI (``ssdlab.cli.main``) and returns its exit status.

    Called as the console script (no `argv`), it ignores signals once the command is over, while
    the process exits; called from a program (with `argv`), it puts back the handlers it found.
    """
    script = argv is None
    noted: "List[int]" = []

    def note(signum: int, frame: "Any") -> None:
        noted.append(signum)

    previous: "Dict[int, Any]" = {}
    try:
        for sig in _SIGNALS:
            found = _signal.signal(sig, note)
            previous[sig] = _ORIGINAL.pop(sig) if sig in _ORIGINAL else found  # what was there before the noting one
    except ValueError:  # not the main thread: leave the signals alone
        pass
    noted.extend(_EARLY)  # what the console script's import noted (after `note` took over: none lost)
    del _EARLY[:]
    try:
        try:
            from ssdlab import cli
        finally:
            for sig, handler in previous.items():
                _signal.signal(sig, _on_sigterm if sig == _signal.SIGTERM else handler)
        if noted:
            terminated = _signal.SIGTERM in noted
            _say("ssdlab: terminated" if terminated else "ssdlab: interrupted")
            return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
        status = cli.main(argv)
    except KeyboardInterrupt as err:  # in the moments between the CLI's handlers
        if script:
            _ignore_signals()
        terminated = isinstance(err, _Terminated) or bool(getattr(sys.modules.get("ssdlab.cli"), "_terminated", False))
        _say("ssdlab: terminated" if terminated else "ssdlab: interrupted")
        status = EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    finally:
        if script:
            _ignore_signals()
        elif _signal.SIGTERM in previous:
            _signal.signal(_signal.SIGTERM, previous[_signal.SIGTERM])
    return status


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
