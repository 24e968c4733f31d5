"""Reading the configuration: TOML layers, provenance of each key, and the checks that need files.

Layers: ``ROOT/etc/vllm-guard/config.toml`` (or ``--config FILE``), then every ``config.d/*.toml``
beside it, sorted by name; later files win. Targets merge by ``unit`` (a later ``[[target]]`` with the
same unit, or with no unit for the default one, changes that target; a new unit adds one).

Every problem becomes one ``ConfigError`` that names the file, the key and the reason (exit 78).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vllm_guard.consts import Paths
from vllm_guard.core.config import Config, Target
from vllm_guard.errors import ConfigError

Key = tuple[str | int, ...]
DEFAULT_UNIT = "vllm-qwen"


@dataclass
class Loaded:
    """A validated config and where each key came from."""

    config: Config
    files: list[Path]
    origin: dict[Key, Path] = field(default_factory=dict)

    def file_of(self, key: Key) -> Path:
        return _origin_of(self.origin, key, self.files)


def config_files(paths: Paths, explicit: Path | None = None) -> list[Path]:
    main = explicit if explicit is not None else paths.config_file
    dropins = main.parent / "config.d"
    files: list[Path] = []
    if main.exists() or explicit is not None:
        files.append(main)
    if dropins.is_dir():
        files.extend(sorted(p for p in dropins.glob("*.toml") if p.is_file()))
    return files


def load_config(
    paths: Paths, explicit: Path | None = None, *, check_files: bool = True, absent_ok: bool = False
) -> Loaded:
    """Read, layer and validate the configuration; raise ConfigError on any problem.

    ``absent_ok``: a target whose model folder, fallback folder or key file is not there (yet) is not an
    error; its files are checked once they are (``absent_paths``, ``check_target_files``).
    """
    files = config_files(paths, explicit)
    if not files:
        raise ConfigError(
            f"no configuration: {paths.config_file} does not exist",
            "write one with `vllm-guard init --model /path/to/model`, or pass --config FILE",
            ref="config-missing",
        )
    merged: dict[str, Any] = {}
    origin: dict[Key, Path] = {}
    for f in files:
        raw = _read_toml(f)
        _check_strings(raw, f, ())
        _merge_layer(merged, raw, f, origin)
    try:
        config = Config.model_validate(merged)
    except ValidationError as err:
        raise _config_error(err, origin, files) from None
    loaded = Loaded(config=config, files=files, origin=origin)
    if check_files:
        for i, target in enumerate(config.target):
            if not (absent_ok and absent_paths(target, paths)):
                check_target_files(target, i, paths, loaded)
    return loaded


def absent_paths(target: Target, paths: Paths) -> list[str]:
    """What of the target's model folders and key file is not there yet, in words (a mount not made yet: the
    folder missing, or an empty mount point without its config.json); empty when all is there."""
    out = []
    for model in [target.model, *(fb.model for fb in target.fallback)]:
        folder = paths.under(model.lstrip("/"))
        if not folder.is_dir():
            out.append(f"{model} does not exist")
        elif not (folder / "config.json").exists():
            out.append(f"{model} holds no config.json (not mounted yet?)")
    if target.api_key_file is not None and not paths.under(target.api_key_file.lstrip("/")).exists():
        out.append(f"{target.api_key_file} does not exist")
    return out


def _read_toml(f: Path) -> dict[str, Any]:
    try:
        data = f.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{f}: no such file", "check the path given to --config", ref="config-missing") from None
    except OSError as err:
        raise ConfigError(
            f"{f}: cannot read: {err.strerror}", "check its permissions", ref="config-unreadable"
        ) from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{f}: not UTF-8 text (byte {err.start})", "save the file as UTF-8", ref="config-syntax"
        ) from None
    except tomllib.TOMLDecodeError as err:
        # tomllib's message ends with "(at line L, column C)"
        raise ConfigError(
            f"{f}: TOML syntax error: {err}", "fix the TOML syntax at that line and column", ref="config-syntax"
        ) from None


def _fmt_key(key: Key) -> str:
    out = ""
    for part in key:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out or "(top level)"


def _check_strings(value: Any, f: Path, key: Key) -> None:
    """No control characters (newline, NUL, ...) in any value: they would break the unit files."""
    if isinstance(value, str):
        bad = next((c for c in value if ord(c) < 0x20 or ord(c) == 0x7F), None)
        if bad is not None:
            raise ConfigError(
                f"{f}: {_fmt_key(key)}: contains the control character {bad!r}; "
                "values cannot hold newlines, NUL or other control characters",
                "remove it from the value",
                ref="config-control-character",
            )
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _check_strings(k, f, (*key, "(key)"))
            _check_strings(v, f, (*key, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_strings(v, f, (*key, i))


def _record(value: Any, key: Key, f: Path, origin: dict[Key, Path]) -> None:
    origin[key] = f
    if isinstance(value, Mapping):
        for k, v in value.items():
            _record(v, (*key, k), f, origin)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _record(v, (*key, i), f, origin)


def _deep_merge(dst: dict[str, Any], src: Mapping[str, Any], key: Key, f: Path, origin: dict[Key, Path]) -> None:
    for k, v in src.items():
        if isinstance(v, Mapping) and isinstance(dst.get(k), dict):
            origin[(*key, k)] = f
            _deep_merge(dst[k], v, (*key, k), f, origin)
        else:
            dst[k] = _plain(v)
            _record(v, (*key, k), f, origin)


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _merge_layer(merged: dict[str, Any], layer: Mapping[str, Any], f: Path, origin: dict[Key, Path]) -> None:
    for k, v in layer.items():
        if k == "target" and isinstance(v, list) and all(isinstance(t, Mapping) for t in v):
            targets: list[dict[str, Any]] = merged.setdefault("target", [])
            in_this_file: dict[str, int] = {}
            for n, t in enumerate(v):
                unit = str(t.get("unit", DEFAULT_UNIT)).removesuffix(".service")
                if unit in in_this_file:
                    raise ConfigError(
                        f"{f}: target[{n}].unit: target[{n}] and target[{in_this_file[unit]}] both use unit {unit!r}",
                        "give each [[target]] its own unit name (a later file in config.d/ may change a target "
                        "by naming its unit)",
                        ref="config-duplicate-unit",
                    )
                in_this_file[unit] = n
                idx = next(
                    (
                        i
                        for i, old in enumerate(targets)
                        if str(old.get("unit", DEFAULT_UNIT)).removesuffix(".service") == unit
                    ),
                    None,
                )
                if idx is None:
                    targets.append(_plain(t))
                    _record(t, ("target", len(targets) - 1), f, origin)
                else:
                    origin[("target", idx)] = f
                    _deep_merge(targets[idx], t, ("target", idx), f, origin)
        elif isinstance(v, Mapping) and isinstance(merged.get(k), dict):
            _deep_merge(merged[k], v, (k,), f, origin)
        else:
            merged[k] = _plain(v)
            _record(v, (k,), f, origin)


def _origin_of(origin: Mapping[Key, Path], key: Key, files: list[Path]) -> Path:
    for n in range(len(key), 0, -1):
        if key[:n] in origin:
            return origin[key[:n]]
    return files[-1]


# Where a person on a host finds every key: the man page and the commented example the package installs.
_REFERENCE = "`man vllm-guard` and /etc/vllm-guard/config.toml.example"


def _close_keys(loc: Key) -> list[str]:
    """The keys of the table that ``loc`` names that look like its last (mistyped) key."""
    import difflib
    import typing

    from pydantic import BaseModel

    from vllm_guard.core.config import Config

    model: Any = Config
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return []
        inner: Any = field.annotation
        for arg in (inner, *typing.get_args(inner)):  # list[Target], Flags | None ...
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                inner = arg
                break
        model = inner
    if not (isinstance(model, type) and issubclass(model, BaseModel)) or not isinstance(loc[-1], str):
        return []
    names = [f.alias or name for name, f in model.model_fields.items()]
    return difflib.get_close_matches(loc[-1], names, n=2, cutoff=0.6)


def _config_error(err: ValidationError, origin: Mapping[Key, Path], files: list[Path]) -> ConfigError:
    first = err.errors()[0]
    loc: Key = tuple(first["loc"])
    # pydantic puts model-level validators at the model's own location
    where = _origin_of(origin, loc, files)
    msg = first["msg"].removeprefix("Value error, ")
    etype = first["type"]
    if etype == "extra_forbidden":
        reason = "unknown key"
        near = _close_keys(loc)
        hint = (
            f"did you mean {' or '.join(repr(k) for k in near)}? " if near else ""
        ) + f"the keys are listed in {_REFERENCE}"
    elif etype == "missing":
        reason = "required key is missing"
        hint = "add it"
    else:
        got = first.get("input")
        shown = "" if isinstance(got, (dict, list)) or got is None else f" (got {got!r})"
        reason = f"{msg}{shown}"
        hint = f"see {_REFERENCE}"
    more = f" (and {len(err.errors()) - 1} more problem(s))" if len(err.errors()) > 1 else ""
    return ConfigError(f"{where}: {_fmt_key(loc)}: {reason}{more}", hint)


def read_model_config(model_dir: Path) -> dict[str, Any] | None:
    """The model's config.json as a dict, or None if there is none (callers say why)."""
    try:
        data = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def max_context(model_cfg: Mapping[str, Any]) -> int | None:
    """The longest context the model supports (max_position_embeddings, stretched by rope scaling), as the
    planner reads it; None when config.json does not say."""
    from vllm_guard.core.modelinfo import model_info_from_config
    from vllm_guard.errors import ModelError

    try:
        return model_info_from_config(model_cfg).max_context
    except ModelError:
        return None


def check_target_files(target: Target, index: int, paths: Paths, loaded: Loaded) -> None:
    """The checks that need files: the model folders and the API key file."""
    models: list[tuple[Key, str, int | None]] = [(("target", index, "model"), target.model, target.flags.max_model_len)]
    for j, fb in enumerate(target.fallback):
        models.append(
            (("target", index, "fallback", j, "model"), fb.model, fb.max_model_len or target.flags.max_model_len)
        )
    for key, model, max_len in models:
        where = loaded.file_of(key)
        folder = paths.under(model.lstrip("/"))
        if not folder.is_dir():
            raise ConfigError(
                f"{where}: {_fmt_key(key)}: model folder {model!r} does not exist",
                "download the model there or fix the path",
                ref="model-missing",
            )
        if not (folder / "config.json").is_file():
            raise ConfigError(
                f"{where}: {_fmt_key(key)}: {model!r} has no config.json, so it is not a Hugging Face model folder",
                "point it at the folder that holds config.json and the *.safetensors files",
                ref="model-no-config",
            )
        cfg = read_model_config(folder)
        if cfg is None:
            raise ConfigError(
                f"{where}: {_fmt_key(key)}: {model}/config.json is not a readable JSON object",
                "re-download the model's config.json",
                ref="model-bad-config",
            )
        limit = max_context(cfg)
        if max_len is not None and limit is not None and max_len > limit:
            mkey = ("target", index, "flags", "max_model_len")
            raise ConfigError(
                f"{loaded.file_of(mkey)}: {_fmt_key(mkey)}: {max_len} is above the model's "
                f"max_position_embeddings ({limit}) in {model}/config.json",
                f"set max_model_len to {limit} or less (or enable rope scaling in the model's config.json)",
                ref="max-model-len-too-long",
            )
    if target.api_key_file is not None:
        key = ("target", index, "api_key_file")
        kf = paths.under(target.api_key_file.lstrip("/"))
        try:
            secret = kf.read_text(encoding="utf-8").strip()
        except OSError as err:
            raise ConfigError(
                f"{loaded.file_of(key)}: {_fmt_key(key)}: cannot read {target.api_key_file}: {err.strerror or err}",
                "create the file (mode 0600, owned by root) or fix the path",
                ref="api-key-unreadable",
            ) from None
        except UnicodeDecodeError:
            raise ConfigError(
                f"{loaded.file_of(key)}: {_fmt_key(key)}: {target.api_key_file} is not UTF-8 text",
                "put the key in the file as one line of text",
                ref="api-key-unreadable",
            ) from None
        if not secret or "\n" in secret:
            raise ConfigError(
                f"{loaded.file_of(key)}: {_fmt_key(key)}: {target.api_key_file} must hold exactly one line (the key)",
                "write just the key into the file",
                ref="api-key-unreadable",
            )


def read_api_key(target: Target, paths: Paths) -> str | None:
    if target.api_key_file is None:
        return None
    return paths.under(target.api_key_file.lstrip("/")).read_text(encoding="utf-8").strip()
