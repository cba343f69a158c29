"""Errors a user can cause.  The CLI prints ``str(error)`` as one line and exits with code 2."""

import reprlib
from collections.abc import Iterable


class FairallocError(Exception):
    """Base class: a problem with the user's input or a solve that cannot be trusted."""


class CaseError(FairallocError, ValueError):
    """An instance or case file is malformed; the message starts with the offending field."""


class SolverError(FairallocError, RuntimeError):
    """A solver failed or returned an answer that does not pass the feasibility check."""


class FairallocWarning(UserWarning):
    """Something was skipped but fairalloc goes on (e.g. a plug-in whose entry point is broken)."""


class UnknownNameError(FairallocError, KeyError):
    """An unknown mechanism, method, user or resource name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def closest(name: object, known: Iterable[object], n: int = 3) -> list[str]:
    """The known names closest to ``name`` (case-insensitive), best first; empty when none is close."""
    import difflib

    names = [str(k) for k in known]
    lowered = {k.lower(): k for k in names}
    hits = difflib.get_close_matches(str(name).lower(), list(lowered), n=n, cutoff=0.6)
    return [lowered[h] for h in hits]


def did_you_mean(name: object, known: Iterable[object]) -> str:
    """``"; did you mean 'drf'?"`` for the closest known names, or ``""`` when none is close."""
    close = closest(name, known)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def unknown(what: str, name: object, known: Iterable[object], plural: str | None = None) -> str:
    """``unknown mechanism 'dfr'; did you mean 'drf'?``, or the known names when none is close.

    Every "unknown name" message of fairalloc is written by this function, so they all suggest.
    """
    names = [str(k) for k in known]
    hint = did_you_mean(name, names)
    listing = ", ".join(map(shown, names[:12])) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")
    listing = f" ({plural or what + 's'}: {listing or 'none'})"
    # a short list helps beside the suggestion ('gpu' is no typo of 'cpu'); a long one buries it
    return f"unknown {what} {quoted(name)}{hint}" + (listing if not hint or len(names) <= 6 else "")


def check_known(where: str, what: str, name: object, known: Iterable[object]) -> str:
    """``name`` as text if it is one of ``known``, else a :class:`CaseError` at ``where`` that
    suggests the closest (:func:`unknown`)."""
    names = known if isinstance(known, (set, frozenset, dict)) else list(known)
    if str(name) not in names:
        raise CaseError(f"{where}: {unknown(what, name, names)}")
    return str(name)


def one_line(text: object, limit: int | None = None) -> str:
    r"""``text`` (an exception, a library's message) on one line, its whitespace runs made single
    spaces, cut at ``limit`` characters with ``...``: error messages are one line.

    >>> one_line("a\n  b"), one_line("x" * 10, 6)
    ('a b', 'xxx...')
    """
    flat = " ".join(str(text).split())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 3] + "..."


def shown(text: object) -> str:
    r"""A name, a path or a field of a message as written, unless it is long or not printable
    (a newline would break the one-line message): then its bounded :func:`excerpt`.

    >>> shown("cpu"), shown(chr(10).join("ab")), len(shown("x" * 1000)) <= 60
    ('cpu', "'a\\nb'", True)
    """
    from fairalloc.core.limits import MAX_EXCERPT

    string = str(text)
    return string if len(string) <= MAX_EXCERPT and string.isprintable() else excerpt(string)


def quoted(text: object) -> str:
    """``'cpu'``: a name in quotes for a message, bounded and on one line like :func:`shown`."""
    string = str(text)
    plain_text = shown(string)
    return f"'{plain_text}'" if plain_text == string else plain_text


_BOUNDED = reprlib.Repr()  # keyword arguments need Python 3.12
_BOUNDED.maxlevel, _BOUNDED.maxstring, _BOUNDED.maxother, _BOUNDED.maxlong = 3, 40, 40, 40
_BOUNDED.maxdict = _BOUNDED.maxlist = _BOUNDED.maxtuple = _BOUNDED.maxset = 4


def field_path(parts: Iterable[object]) -> str:
    """A field's location as messages write it: ``spec.tasks[0].template`` from
    ``("spec", "tasks", 0, "template")``, each key :func:`shown`.

    >>> field_path(["spec", "tasks", 0, "template"])
    'spec.tasks[0].template'
    """
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{shown(p)}" if text else shown(p))
    return text


def excerpt(value: object, limit: int | None = None) -> str:
    """A bounded ``repr`` of an offending value for an error message: nested and shared
    structures (YAML aliases) are cut at a few levels and items, and the text at ``limit``
    characters (default :data:`fairalloc.core.limits.MAX_EXCERPT`), so a message never expands a
    document.

    >>> excerpt(list(range(100)))
    '[0, 1, 2, 3, ...]'
    >>> excerpt("x" * 500, 20)
    "'xxxxxxxxxxxxxx...'"
    """
    from fairalloc.core.limits import MAX_EXCERPT

    limit = MAX_EXCERPT if limit is None else limit
    text = _BOUNDED.repr(value)
    if len(text) > limit:
        quote = text[0] if text[:1] in "'\"" else ""
        text = text[: limit - 4 - len(quote)] + "..." + quote
    return text
