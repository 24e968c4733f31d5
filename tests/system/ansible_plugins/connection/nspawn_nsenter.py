"""An Ansible connection into a throwaway systemd-nspawn container: each command runs in all of the container's
namespaces with ``nsenter -t PID -a``, PID being the container's systemd as the control node sees it.

Why this and not a standard transport: the test containers are booted with ``--register=no`` (this machine has
no machined and no system bus), so ``machinectl shell`` and ``systemd-run --machine`` cannot reach them, and ssh
would need an sshd, host keys, accounts and addresses in every container. nsenter is what the system tests
already use to run commands inside (``vllm_guard.app.sandbox.Container.run``); Ansible's modules then run with
the container's own ``/usr/bin/python3``, as over ssh on a real host.
"""

from __future__ import annotations

import shlex
import subprocess

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.plugins.connection import ConnectionBase

DOCUMENTATION = """
    name: nspawn_nsenter
    short_description: run in a systemd-nspawn container through nsenter (tests only)
    description:
        - Runs each command in all namespaces of the process whose PID is given (the container's systemd).
    author: vllm-guard developers
    options:
        nsenter_pid:
            description: The PID of the container's systemd, as the control node sees it.
            type: int
            required: true
            vars:
                - name: ansible_nsenter_pid
    extends_documentation_fragment:
        - connection_pipelining
"""

TIMEOUT_S = 900


class Connection(ConnectionBase):
    transport = "nspawn_nsenter"
    has_pipelining = True
    default_user = "root"

    def _argv(self, script: str) -> list[str]:
        pid = self.get_option("nsenter_pid")
        return ["nsenter", "-t", str(pid), "-a", "--", "/bin/sh", "-c", script]

    def _run(self, script: str, in_data: bytes | None) -> tuple[int, bytes, bytes]:
        try:
            proc = subprocess.run(
                self._argv(script),
                input=in_data if in_data is not None else b"",
                capture_output=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            raise AnsibleConnectionFailure(f"nsenter into {self._play_context.remote_addr}: {err}") from err
        return proc.returncode, proc.stdout, proc.stderr

    def _connect(self) -> Connection:
        if not self._connected:
            code, _, err = self._run("true", None)
            if code != 0:
                raise AnsibleConnectionFailure(f"cannot enter the container: {err.decode(errors='replace')}")
            self._connected = True
        return self

    def exec_command(self, cmd: str, in_data: bytes | None = None, sudoable: bool = True) -> tuple[int, bytes, bytes]:
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        return self._run(cmd, in_data)

    def put_file(self, in_path: str, out_path: str) -> None:
        super().put_file(in_path, out_path)
        with open(in_path, "rb") as src:
            data = src.read()
        code, _, err = self._run(f"cat > {shlex.quote(out_path)}", data)
        if code != 0:
            raise AnsibleError(f"put_file {out_path}: {err.decode(errors='replace')}")

    def fetch_file(self, in_path: str, out_path: str) -> None:
        super().fetch_file(in_path, out_path)
        code, out, err = self._run(f"cat {shlex.quote(in_path)}", None)
        if code != 0:
            raise AnsibleError(f"fetch_file {in_path}: {err.decode(errors='replace')}")
        with open(out_path, "wb") as dst:
            dst.write(out)

    def close(self) -> None:
        self._connected = False
