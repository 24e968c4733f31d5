"""The escaping rules for each special character, for ExecStart= words, Environment= and env files."""

from __future__ import annotations

import pytest

from vllm_guard.core import systemd_escape as esc

pytestmark = pytest.mark.unit

# (value, ExecStart= word, env file value)
RULES = [
    ("plain", "plain", '"plain"'),
    ("with space", '"with space"', '"with space"'),
    ("100%", "100%%", '"100%"'),  # specifier in units; literal in env files
    ("$HOME", "$$HOME", '"\\$HOME"'),  # variable in ExecStart; escaped in env files
    ('say "x"', '"say \\"x\\""', '"say \\"x\\""'),
    ("back\\slash", '"back\\\\slash"', '"back\\\\slash"'),
    ("it's", '"it\'s"', '"it\'s"'),
    ("`cmd`", "`cmd`", '"\\`cmd\\`"'),
    (";", '";"', '";"'),
    ("", '""', '""'),
]


@pytest.mark.parametrize(("value", "word", "env"), RULES)
def test_escape_rules(value: str, word: str, env: str) -> None:
    assert esc.exec_word(value) == word
    assert esc.env_file_value(value) == env
    assert esc.parse_env_file(f"X={env}\n") == {"X": value}


def test_environment_assignment_quotes_whole_pair_and_doubles_percent() -> None:
    assert esc.environment_assignment("A", 'x "y" 50% $Z\\') == '"A=x \\"y\\" 50%% $Z\\\\"'


@pytest.mark.parametrize("bad", ["a\nb", "a\x00b", "a\rb", "\x7f"])
def test_control_characters_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="control character"):
        esc.exec_word(bad)
    with pytest.raises(ValueError, match="control character"):
        esc.env_file_value(bad)


def test_the_hard_model_path_survives_the_env_file() -> None:
    path = '/models/Qwen2.5 7B/100%$HOME "x"\\y'
    assert esc.parse_env_file("VLLM_GUARD_MODEL=" + esc.env_file_value(path)) == {"VLLM_GUARD_MODEL": path}
