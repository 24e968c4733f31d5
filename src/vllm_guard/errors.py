"""The exception tree. Catch at the level you need.

    GuardError                 any error a person will read: reference, message, hint
    ├── ConfigError            invalid configuration (exit 78, EX_CONFIG)
    ├── UsageError             bad command-line use (exit 64, EX_USAGE)
    ├── InputError             an input file that cannot be read or parsed (exit 65/66)
    ├── ModelError             a model folder that cannot be read (exit 65)
    └── SystemError_           the OS refused something the guard needs (exit 71/73/77)

Every error carries a kebab-case ``ref`` so people can search for it, the ``message``
(what happened, where) and a ``hint`` (what to do next).
"""

from __future__ import annotations

from vllm_guard.exitcodes import ExitCode


class GuardError(Exception):
    """An error with a reference, a message naming where, and a hint."""

    exit_code: ExitCode = ExitCode.SOFTWARE

    def __init__(self, ref: str, message: str, hint: str = "", *, exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        self.ref = ref
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def render(self) -> str:
        text = f"vllm-guard: error[{self.ref}]: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class ConfigError(GuardError):
    exit_code = ExitCode.CONFIG

    def __init__(self, message: str, hint: str = "", *, ref: str = "invalid-config") -> None:
        super().__init__(ref, message, hint)


class UsageError(GuardError):
    exit_code = ExitCode.USAGE

    def __init__(self, message: str, hint: str = "", *, ref: str = "bad-usage") -> None:
        super().__init__(ref, message, hint)


class InputError(GuardError):
    exit_code = ExitCode.DATAERR


class ModelError(GuardError):
    exit_code = ExitCode.DATAERR


class OSFailure(GuardError):
    exit_code = ExitCode.OSERR
