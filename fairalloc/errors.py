"""Errors a user can cause.  The CLI prints ``str(error)`` as one line and exits with code 2."""


class FairallocError(Exception):
    """Base class: a problem with the user's input or a solve that cannot be trusted."""


class CaseError(FairallocError, ValueError):
    """An instance or case file is malformed; the message starts with the offending field."""


class SolverError(FairallocError, RuntimeError):
    """A solver failed or returned an answer that does not pass the feasibility check."""


class UnknownNameError(FairallocError, KeyError):
    """An unknown mechanism, method, user or resource name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
