"""The config loader: layering, and one test per kind of bad config (message and exit 78)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, write_config
from vllm_guard.app.config_load import load_config
from vllm_guard.consts import Paths

pytestmark = pytest.mark.unit

GOOD = """
[[target]]
model = "/models/tiny"
port = 8000
[target.flags]
max_model_len = 2048
"""


def test_good_config_loads_with_defaults(fake_root: Path) -> None:
    write_config(fake_root, GOOD)
    cfg = load_config(Paths(fake_root)).config
    t = cfg.target[0]
    assert t.unit == "vllm-qwen"
    assert t.host == "127.0.0.1"
    assert t.name == "tiny"
    assert t.flags.gpu_memory_utilization == 0.9
    assert t.flags.max_model_len == 2048
    assert t.restart.restart_sec == 10


def test_config_d_layers_sorted_later_wins(fake_root: Path) -> None:
    write_config(fake_root, GOOD)
    write_config(fake_root, "[[target]]\n[target.flags]\ngpu_memory_utilization = 0.8\n", "config.d/20-util.toml")
    write_config(fake_root, "[[target]]\n[target.flags]\ngpu_memory_utilization = 0.7\n", "config.d/10-util.toml")
    write_config(
        fake_root, '[[target]]\nunit = "second"\nmodel = "/models/tiny"\nport = 8001\n', "config.d/30-more.toml"
    )
    cfg = load_config(Paths(fake_root)).config
    assert cfg.target[0].flags.gpu_memory_utilization == 0.8
    assert cfg.target[0].flags.max_model_len == 2048  # kept from the main file
    assert [t.unit for t in cfg.target] == ["vllm-qwen", "second"]


# (case, config text, extra files to create, words the message must contain)
BAD: list[tuple[str, str, dict[str, str], list[str]]] = [
    ("unknown key", GOOD + "colour = 'blue'\n", {}, ["target[0].flags.colour", "unknown key"]),
    ("unknown top key", "[gaurd]\n" + GOOD, {}, ["gaurd", "unknown key", "did you mean 'guard'"]),
    (
        "mistyped flag",
        GOOD.replace("max_model_len", "max_modle_len"),
        {},
        ["target[0].flags.max_modle_len", "did you mean 'max_model_len'", "man vllm-guard"],
    ),
    ("port as a string", GOOD.replace("port = 8000", 'port = "8000"'), {}, ["target[0].port", "integer"]),
    (
        "wrong type",
        GOOD.replace("port = 8000", 'port = "eight thousand"'),
        {},
        ["target[0].port", "integer"],
    ),
    (
        "util above 1",
        GOOD + "gpu_memory_utilization = 1.5\n",
        {},
        ["target[0].flags.gpu_memory_utilization", "less than or equal to 1"],
    ),
    (
        "util zero",
        GOOD + "gpu_memory_utilization = 0.0\n",
        {},
        ["target[0].flags.gpu_memory_utilization", "greater than 0"],
    ),
    (
        "floor above base",
        GOOD + "[target.floors]\nmax_model_len = 4096\n",
        {},
        ["floors.max_model_len (4096) is above the base flags.max_model_len (2048)"],
    ),
    (
        "util floor above base",
        GOOD + "gpu_memory_utilization = 0.6\n[target.floors]\ngpu_memory_utilization = 0.7\n",
        {},
        ["floors.gpu_memory_utilization (0.7) is above the base"],
    ),
    (
        "two targets one port",
        GOOD + '[[target]]\nunit = "b"\nmodel = "/models/tiny"\nport = 8000\n',
        {},
        ["target[1] and target[0] both listen on port 8000"],
    ),
    (
        "two targets one unit",
        GOOD + '[[target]]\nunit = "x"\nmodel = "/models/tiny"\nport = 8001\n'
        '[[target]]\nunit = "x.service"\nmodel = "/models/tiny"\nport = 8002\n',
        {},
        ["target[2] and target[1] both use unit 'x'"],
    ),
    ("model path missing", GOOD.replace("/models/tiny", "/models/nope"), {}, ["target[0].model", "does not exist"]),
    (
        "model without config.json",
        GOOD.replace("/models/tiny", "/models/empty"),
        {"models/empty/README": "x"},
        ["target[0].model", "has no config.json"],
    ),
    (
        "max_model_len above max_position_embeddings",
        GOOD.replace("max_model_len = 2048", "max_model_len = 8192"),
        {},
        ["target[0].flags.max_model_len", "8192 is above the model's max_position_embeddings (4096)"],
    ),
    ("newline in value", GOOD + 'quantization = "awq\\nExecStart=/bin/sh"\n', {}, ["control character '\\n'"]),
    ("NUL in value", GOOD.replace('"/models/tiny"', '"/models/tiny\\u0000"'), {}, ["control character '\\x00'"]),
    (
        "newline in list value",
        GOOD.replace("port = 8000", 'port = 8000\nextra_args = ["--a\\n"]'),
        {},
        ["target[0].extra_args[0]", "control character"],
    ),
    (
        "unreadable api key file",
        GOOD.replace("port = 8000", 'port = 8000\napi_key_file = "/etc/vllm-guard/nokey"'),
        {},
        ["target[0].api_key_file", "cannot read /etc/vllm-guard/nokey"],
    ),
    (
        "toml syntax error",
        '[[target]]\nmodel = "/models/tiny"\nport = = 8000\n',
        {},
        ["TOML syntax error", "line 3, column 8"],
    ),
    ("no target", "[guard]\n", {}, ["target", "required key is missing"]),
    ("relative model path", GOOD.replace("/models/tiny", "models/tiny"), {}, ["must be an absolute path"]),
    ("bad unit name", GOOD.replace("port = 8000", 'port = 8000\nunit = "my unit"'), {}, ["systemd unit name"]),
]


@pytest.mark.parametrize(("case", "text", "files", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_config_exits_78_with_clear_message(
    case: str, text: str, files: dict[str, str], words: list[str], fake_root: Path, cli: Callable[..., CliResult]
) -> None:
    cfg = write_config(fake_root, text)
    for rel, content in files.items():
        p = fake_root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    res = cli("render", "--root", fake_root)
    assert res.code == 78, (res.out, res.err)
    assert "Traceback" not in res.err
    assert str(cfg) in res.err
    for w in words:
        assert w in res.err, res.err
    assert "hint:" in res.err


def test_the_same_unit_in_a_later_file_changes_that_target(fake_root: Path) -> None:
    write_config(fake_root, GOOD)
    write_config(fake_root, '[[target]]\nunit = "vllm-qwen"\nport = 8100\n', "config.d/10-port.toml")
    cfg = load_config(Paths(fake_root)).config
    assert len(cfg.target) == 1 and cfg.target[0].port == 8100


def test_same_unit_twice_in_the_model_is_refused() -> None:
    from pydantic import ValidationError

    from vllm_guard.core.config import Config

    with pytest.raises(ValidationError, match="both use unit 'x'"):
        Config.model_validate(
            {"target": [{"unit": "x", "model": "/m", "port": 1}, {"unit": "x", "model": "/m", "port": 2}]}
        )


def test_bad_key_names_the_dropin_file_that_set_it(fake_root: Path, cli: Callable[..., CliResult]) -> None:
    write_config(fake_root, GOOD)
    drop = write_config(fake_root, "[[target]]\n[target.flags]\nmax_num_seqs = -3\n", "config.d/50-bad.toml")
    res = cli("render", "--root", fake_root)
    assert res.code == 78
    assert f"{drop}: target[0].flags.max_num_seqs" in res.err


def test_missing_config_says_how_to_make_one(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    res = cli("render", "--root", tmp_path)
    assert res.code == 78
    assert "vllm-guard init" in res.err
