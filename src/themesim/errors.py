"""Errors a researcher can act on."""

import difflib
import errno
import sys


class ThemesimError(Exception):
    """A failure whose message says what happened and what to do (no traceback needed)."""


class StepError(ThemesimError):
    """A workflow step that could not finish, e.g. a judge server that kept failing."""


class InputError(ThemesimError, ValueError):
    """Bad input: the message names the file, the row or key, and what to do."""

    def __init__(self, where: str, problem: str, fix: str):
        self.where = where
        self.problem = problem
        self.fix = fix
        super().__init__(f"{where}: {problem}. {fix}")

    def __reduce__(self):  # rebuilt from its three parts, e.g. raised in a forked step
        return (type(self), (self.where, self.problem, self.fix))


def disk_full(exc: BaseException | None) -> OSError | None:
    """The OSError "no space left on device" (or "disk quota exceeded") that `exc` is, or
    was raised while handling or from (its __cause__ / __context__ chain); else None. A
    library that catches the error and raises its own (PIL while saving a PNG) keeps it
    there."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def disk_full_error(exc: OSError, writing=()) -> StepError:
    """The one line for a full disk: what was being written (the error's file, else
    `writing`, e.g. a job's outputs), and what to do."""
    where = exc.filename or ", ".join(map(str, list(writing)[:3])) or "a result"
    return StepError(
        f"{where}: no space left on the device ({exc.strerror or 'disk full'}). Free space on "
        "that disk (`df -h .` shows it) and run again: the results already written are kept, "
        "and nothing half-written is left"
    )


def name_key(name) -> str:
    """How a name a user typed is matched: case and runs of whitespace ignored."""
    return " ".join(str(name).casefold().split())


def did_you_mean(word, choices) -> str:
    """' (did you mean 'x'?)' for the closest of `choices` (difflib), or ''. Names are
    compared by name_key: 'Money  worries' for 'money worries' is a near miss too."""
    folded = {name_key(c): c for c in choices}
    close = difflib.get_close_matches(name_key(word), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {str(folded[close[0]])!r}?)" if close else ""


def exit_on_error(fn, *args, **kwargs):
    """fn(*args, **kwargs); a ThemesimError ends the program with its one line on stderr.

    For workflow parse time: Snakemake would print its own stack after the message.
    """
    try:
        return fn(*args, **kwargs)
    except ThemesimError as e:
        print(f"Error: {e}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
