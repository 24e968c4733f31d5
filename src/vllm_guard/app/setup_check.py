"""The set-up mistakes that fail a first start before vLLM ever runs, found before the first start.

``vllm-guard run --check`` and ``vllm-guard doctor`` report them: the command of the unit does not exist,
vLLM is not installed in the unit's python, the unit's user does not exist or cannot read a file the unit
reads (the config when the unit probes itself, the API key file, the model folder), the metrics folder
is missing or not writable. Each is a doctor ``Finding`` with a kebab-case ref and what to do.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

from vllm_guard.adapters.host import installed_vllm_version
from vllm_guard.app.config_load import Loaded, absent_paths
from vllm_guard.app.place import python_of
from vllm_guard.consts import Paths
from vllm_guard.core.config import Target
from vllm_guard.core.doctor import Finding


def _readable_by(path: Path, user: pwd.struct_passwd | None, *, folder: bool = False) -> bool | None:
    """Whether ``user`` may read ``path`` by its mode bits (and enter it, for a folder); None: cannot tell."""
    if user is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    if user.pw_uid == 0:
        return True
    need_r, need_x = stat.S_IROTH, stat.S_IXOTH
    if st.st_uid == user.pw_uid:
        need_r, need_x = stat.S_IRUSR, stat.S_IXUSR
    elif st.st_gid == user.pw_gid or st.st_gid in os.getgrouplist(user.pw_name, user.pw_gid):
        need_r, need_x = stat.S_IRGRP, stat.S_IXGRP
    mode = st.st_mode
    return bool(mode & need_r) and (not folder or bool(mode & need_x))


def _user(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _group(name: str) -> grp.struct_group | None:
    try:
        return grp.getgrnam(name)
    except KeyError:
        return None


def target_findings(target: Target, loaded: Loaded, paths: Paths, *, vllm: bool = True) -> list[Finding]:
    """What would fail the unit's start for a reason no flag and no restart can fix."""
    out: list[Finding] = []
    unit = target.unit_file
    absent = absent_paths(target, paths)
    if absent:
        out.append(
            Finding(
                "fail",
                "files-absent",
                f"{unit}: {'; '.join(absent)}",
                "; ".join(absent),
                "mount or copy them there (the running guard waits for them and guards the other units "
                "meanwhile), or fix the path in the config",
            )
        )
    command = target.command[0]
    program = paths.under(command.lstrip("/")) if "/" in command else None  # a bare name is looked up in PATH
    if program is not None and not (program.is_file() and os.access(program, os.X_OK)):
        out.append(
            Finding(
                "fail",
                "command-missing",
                f"{unit}: the command {command} does not exist or is not executable",
                command,
                "point `command =` at the python (or `vllm`) of the venv vLLM is installed in, then "
                "`vllm-guard install`",
            )
        )
    elif vllm and paths.root == Path("/"):
        python = python_of(target)
        if python is not None and installed_vllm_version(python) is None:
            out.append(
                Finding(
                    "fail",
                    "vllm-not-installed",
                    f"{unit}: vLLM is not installed in the python the unit runs",
                    python,
                    f"install it there ({python} -m pip install vllm) or point `command =` at the venv that has it",
                )
            )
    if _group(target.group) is None:
        out.append(
            Finding(
                "fail",
                "group-missing",
                f"{unit}: the unit's group {target.group!r} does not exist",
                target.group,
                f"create it (groupadd --system {target.group}) or set `group =` in the config to one that exists, "
                "then `vllm-guard install`",
            )
        )
    user = _user(target.user)
    if user is None:
        out.append(
            Finding(
                "fail",
                "user-missing",
                f"{unit}: the unit's user {target.user!r} does not exist",
                target.user,
                f"create it (useradd --system --home-dir /var/lib/vllm {target.user}) or set `user =` in the "
                "config to one that exists, then `vllm-guard install`",
            )
        )
        return out
    files: list[tuple[Path, str, bool]] = []
    if target.probe.exec_start_post:  # the unit's own ExecStartPost= reads the guard's config as this user
        files += [(f, "the config its ExecStartPost= probe reads", False) for f in loaded.files]
    if target.api_key_file:
        files.append((paths.under(target.api_key_file.lstrip("/")), "the API key file", False))
    files.append((paths.under(target.model.lstrip("/")), "the model folder", True))
    for path, what, folder in files:
        if _readable_by(path, user, folder=folder) is False:
            out.append(
                Finding(
                    "fail",
                    "unreadable-by-unit-user",
                    f"{unit}: its user {target.user!r} cannot read {what}",
                    str(path),
                    f"make it readable (chmod o+r{'x' if folder else ''} {path}, or chgrp it to a group of "
                    f"{target.user!r})",
                )
            )
    return out


def metrics_findings(loaded: Loaded, paths: Paths) -> list[Finding]:
    guard = loaded.config.guard
    if not guard.metrics:
        return []
    folder = paths.under(guard.metrics_path.lstrip("/")).parent
    if not folder.is_dir():
        return [
            Finding(
                "fail",
                "metrics-folder-missing",
                f"metrics = true, but {folder} does not exist",
                str(folder),
                "install prometheus-node-exporter (its textfile folder) or set `metrics_path =` to an existing "
                "folder listed in the guard unit's ReadWritePaths=",
            )
        ]
    if not os.access(folder, os.W_OK):
        return [
            Finding(
                "fail",
                "metrics-folder-unwritable",
                f"metrics = true, but {folder} is not writable",
                str(folder),
                "make it writable by root, and list it in ReadWritePaths= of vllm-guard.service",
            )
        ]
    return []


def findings(loaded: Loaded, paths: Paths, *, vllm: bool = True) -> list[Finding]:
    out: list[Finding] = []
    for target in loaded.config.target:
        out += target_findings(target, loaded, paths, vllm=vllm)
    return out + metrics_findings(loaded, paths)
