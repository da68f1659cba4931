"""Kiln's exceptions. Every error Kiln raises is a KilnError; str(e) is what the CLI prints:
the message ("<subject>: <reason>"), then "hint: <fix>" on its own line when there is one.

  KilnError                  base; attributes kind, subject, reason, hint (None when unknown)
    InvalidArgumentError     a bad option or argument value (also a ValueError)
    NotFoundError            a missing file, input name, operator (also a LookupError)
    ModelParseError          a malformed model file (also a ValueError)
    UnsupportedError         valid input Kiln does not handle yet (also a NotImplementedError)
    IncompatibleError        a version, ABI or CPU-feature mismatch
    KilnIOError              reading or writing failed
    RunError                 libkiln_runtime refused a call (loading or running an artifact)
    InternalError            a broken invariant: a bug in Kiln (message has file:line)
"""


class KilnError(Exception):
    def __init__(self, message, *, kind=None, subject=None, reason=None, hint=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.subject = subject
        self.reason = reason
        self.hint = hint or None

    def __str__(self):
        return self.message + (f"\nhint: {self.hint}" if self.hint else "")


class InvalidArgumentError(KilnError, ValueError):
    pass


class NotFoundError(KilnError, LookupError):
    pass


class ModelParseError(KilnError, ValueError):
    pass


class UnsupportedError(KilnError, NotImplementedError):
    pass


class IncompatibleError(KilnError):
    pass


class KilnIOError(KilnError):
    pass


class RunError(KilnError):
    pass


class InternalError(KilnError):
    pass


def user_error(cls, subject, reason, hint=None, kind="invalid argument"):
    """An error raised by the Python layer itself, formatted like the C++ ones."""
    return cls(f"{subject}: {reason}", kind=kind, subject=subject, reason=reason, hint=hint)
