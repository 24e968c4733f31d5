"""Escaping values for systemd unit files and environment files.

The rules (systemd.service(5) "Command lines", systemd.unit(5) "Specifiers", systemd.exec(5)
"EnvironmentFile="):

=========================  ==========================================================
where                      what must be escaped
=========================  ==========================================================
any unit setting           ``%`` starts a specifier: write ``%%``
ExecStart= words           ``$`` starts a variable: write ``$$``; ``\\`` and ``"`` are C-style
                           escapes inside quotes: write ``\\\\`` and ``\\"``; a word with spaces,
                           quotes, ``;`` or nothing at all is wrapped in double quotes
Environment= assignments   the whole ``KEY=value`` in double quotes, ``%%``, ``\\\\``, ``\\"``; no ``$``
                           expansion happens there
EnvironmentFile= values    double quotes; ``\\``, ``"``, ``$`` and backquote escaped with a backslash;
                           no specifiers are expanded there
=========================  ==========================================================

Control characters (newline, NUL, ...) are refused by the config loader before they get here.
"""

from __future__ import annotations

_NEEDS_QUOTES = frozenset(" \t\"'\\;")


def _refuse_control(value: str) -> None:
    for c in value:
        if ord(c) < 0x20 or ord(c) == 0x7F:
            raise ValueError(f"control character {c!r} cannot be written into a unit file")


def specifiers(value: str) -> str:
    """Any unit setting: ``%`` -> ``%%``."""
    _refuse_control(value)
    return value.replace("%", "%%")


def exec_word(value: str) -> str:
    """One word of an ``ExecStart=`` command line that must reach the program unchanged."""
    _refuse_control(value)
    body = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    if value == "" or value == ";" or any(c in _NEEDS_QUOTES for c in value):
        return f'"{body}"'
    return body


def exec_line(words: list[str]) -> str:
    return " ".join(exec_word(w) for w in words)


def environment_assignment(name: str, value: str) -> str:
    """The value of an ``Environment=`` setting: ``"NAME=value"``."""
    _refuse_control(value)
    body = f"{name}={value}".replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{body}"'


def env_file_value(value: str) -> str:
    """A value in an ``EnvironmentFile=``: double-quoted, shell-style backslash escapes."""
    _refuse_control(value)
    out = []
    for c in value:
        if c in '\\"$`':
            out.append("\\")
        out.append(c)
    return '"' + "".join(out) + '"'


def parse_env_file(text: str) -> dict[str, str]:
    """Read back what ``env_file_value`` wrote (the subset of systemd's syntax the guard writes)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        name, _, rest = line.partition("=")
        rest = rest.strip()
        if rest.startswith('"') and rest.endswith('"') and len(rest) >= 2:
            body, value, i = rest[1:-1], [], 0
            while i < len(body):
                if body[i] == "\\" and i + 1 < len(body):
                    value.append(body[i + 1])
                    i += 2
                else:
                    value.append(body[i])
                    i += 1
            out[name.strip()] = "".join(value)
        else:
            out[name.strip()] = rest
    return out
