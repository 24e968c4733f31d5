"""The guard on a real systemd: remedy latency, and its memory and CPU while following a busy unit.

    sudo .venv/bin/python bench/bench_remedy.py [--failures 40] [--seconds 30]

Boots a throwaway systemd (systemd-nspawn), runs `vllm-guard.service` (the shipped unit) and a vLLM unit
rendered by the guard whose command is a small shell stand-in: after 2 s (real vLLM loads and profiles for
longer) it prints vLLM's real V1 KV-cache error with an estimated maximum model length 16 tokens below the
--max-model-len it was given, and exits 1, until --max-model-len reaches the floor; then it prints log
lines at a set rate and stays up.

Latency: for each failure, from the last journal entry of the failed attempt (the unit's last line or
systemd's "Failed with result", whichever came later) to the guard's `remedy_applied` event, which the
guard sends after the env file is rewritten, fsynced and the state saved (so this is an upper bound).
Both timestamps come from the same journald. systemd's RestartSec is the deadline (seconds).

Memory and CPU: VmRSS and the CPU time of the guard's process (from /proc) while the unit prints
0, 100 and 1,000 lines per second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from vllm_guard.app.sandbox import Bind, Sandbox, booted  # noqa: E402

KV = (
    "ValueError: To serve at least one request with the model's max seq len ($L), (1.00 GiB KV cache is needed, "
    "which is larger than the available KV cache memory (0.50 GiB). Based on the available memory, the estimated "
    "maximum model length is $E. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
    "initializing the engine."
)
SCRIPT = r"""
L=$(printf '%s\n' "$@" | sed -n 's/^--max-model-len=//p')
if [ "$L" -gt "$FLOOR" ]; then
  E=$((L - 16))
  sleep 2  # real vLLM loads and profiles for seconds to minutes before this check
  echo "INFO Starting vLLM API server with max_model_len $L"
  echo 'KVLINE' | sed "s/\$L/$L/; s/\$E/$E/"
  echo "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
  exit 1
fi
RATE=$(cat /run/bench/rate 2>/dev/null || echo 0)
while :; do
  RATE=$(cat /run/bench/rate 2>/dev/null || echo 0)
  if [ "$RATE" -gt 0 ]; then
    i=0; while [ $i -lt $RATE ]; do echo "INFO 11-30 12:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, Running: 1 reqs"; i=$((i+1)); done
  fi
  sleep 1
done
"""


def script() -> str:
    return SCRIPT.replace("KVLINE", KV.replace("'", "'\\''")).strip() + "\n"


def config(floor: int, start_len: int) -> str:
    cmd = json.dumps(["/bin/sh", "/run/bench/fake-vllm.sh"])
    return f"""
[guard]
[[target]]
unit = "vllm-bench"
model = "{REPO}/tests/data/models/tiny-qwen2"
user = "root"
group = "root"
command = {cmd}
environment = {{ FLOOR = "{floor}" }}
startup_timeout_s = 30
[target.flags]
max_model_len = {start_len}
[target.floors]
max_model_len = {floor}
[target.budget]
max_remedies = 1000
window_s = 3600
[target.restart]
restart_sec = 1
start_limit_interval_sec = 0
start_limit_burst = 100
"""


def percentile(values: list[float], p: float) -> float:
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))
    return s[k]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--failures", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=30.0, help="sampling time per log rate")
    ap.add_argument("--show-journal", action="store_true", help="print the guard's journal at the end")
    args = ap.parse_args()
    floor = 1024
    start_len = floor + 16 * args.failures
    spec = Sandbox(name=f"vg-bench-{uuid.uuid4().hex[:6]}", binds=[Bind(str(REPO), str(REPO), read_only=True)])
    with booted(spec) as c:
        c.write("/run/bench/fake-vllm.sh", script(), mode=0o755)
        c.write("/etc/vllm-guard/config.toml", config(floor, start_len))
        c.write("/run/systemd/system/vllm-guard.service", (REPO / "units/vllm-guard.service").read_text())
        c.write(
            "/run/systemd/system/vllm-guard.service.d/bench.conf",
            f"[Service]\nExecStart=\nExecStart={REPO}/.venv/bin/vllm-guard run\n",
        )
        # the container's only link is lo: don't let network-online.target hold every start for 2 minutes
        c.path("/run/systemd/system/systemd-networkd-wait-online.service").symlink_to("/dev/null")
        c.run(f"{REPO}/.venv/bin/vllm-guard", "install")
        c.systemctl("start", "vllm-guard")
        c.systemctl("start", "--no-block", "vllm-bench")
        t0 = time.monotonic()

        def remedies() -> list[dict[str, object]]:
            return c.journal("VLLM_GUARD_EVENT=remedy_applied")

        try:
            c.wait_until(
                f"{args.failures} remedies",
                lambda: len(remedies()) >= args.failures or None,
                timeout=60 + args.failures * 6,
                interval=2,
            )
        except Exception:
            print(c.journal_text(120))
            raise
        elapsed = time.monotonic() - t0
        # the attempt's own lines, and PID 1's "Main process exited" / "Failed with result" about it (not
        # the "Scheduled restart" that comes RestartSec later)
        unit_entries = c.journal("_SYSTEMD_UNIT=vllm-bench.service") + [
            e
            for e in c.journal("UNIT=vllm-bench.service")
            if e.get("MESSAGE_ID") in ("98e322203f7a4ed290d09fe03c09fe15", "d9b373ed55a64feb8242e02dbe79a49c")
        ]
        by_inv: dict[str, int] = {}
        for e in unit_entries:
            inv = str(e.get("_SYSTEMD_INVOCATION_ID") or e.get("INVOCATION_ID") or "")
            if inv:
                by_inv[inv] = max(by_inv.get(inv, 0), int(str(e["__REALTIME_TIMESTAMP"])))
        lat = []
        for r in remedies():
            inv = str(r.get("VLLM_GUARD_INVOCATION_ID", ""))
            if inv in by_inv:
                lat.append((int(str(r["__REALTIME_TIMESTAMP"])) - by_inv[inv]) / 1000.0)
        detect = []
        for r in c.journal("VLLM_GUARD_EVENT=failure_detected"):
            inv = str(r.get("VLLM_GUARD_INVOCATION_ID", ""))
            if inv in by_inv:
                detect.append((int(str(r["__REALTIME_TIMESTAMP"])) - by_inv[inv]) / 1000.0)
        # the stand-in serves no HTTP: wait until the guard's start probe gives up (startup_timeout_s), so the
        # CPU below is the guard following a running unit, not the guard watching a start
        c.wait_until(
            "the start probe's verdict",
            lambda: c.journal("VLLM_GUARD_EVENT=probe_failed") or None,
            timeout=90,
            interval=2,
        )
        pid = c.show("vllm-guard", "MainPID")["MainPID"]
        rows = []
        for rate in (0, 100, 1000):
            c.write("/run/bench/rate", f"{rate}\n")
            time.sleep(3)
            stat0 = c.read(f"/proc/{pid}/stat").split()
            w0 = time.monotonic()
            time.sleep(args.seconds)
            stat1 = c.read(f"/proc/{pid}/stat").split()
            wall = time.monotonic() - w0
            ticks = os.sysconf("SC_CLK_TCK")
            cpu = (int(stat1[13]) + int(stat1[14]) - int(stat0[13]) - int(stat0[14])) / ticks
            rss = next(
                int(line.split()[1]) for line in c.read(f"/proc/{pid}/status").splitlines() if line.startswith("VmRSS")
            )
            rows.append((rate, 100 * cpu / wall, rss / 1024))
        nrestarts = c.show("vllm-bench", "NRestarts")["NRestarts"]
        if args.show_journal:
            print(c.run("journalctl", "--no-pager", "-u", "vllm-guard", "-n", "60", check=False).stdout)
            print(c.run("top", "-b", "-n", "1", "-H", "-p", pid, check=False).stdout[-2000:])
    print(f"failures remedied: {len(lat)} (systemd NRestarts {nrestarts}) in {elapsed:.0f} s, RestartSec=1")
    print("latency, last journal entry of the failed attempt -> remedy_applied (env file written, state saved):")
    print(
        f"  p50 {percentile(lat, 50):.1f} ms  p90 {percentile(lat, 90):.1f} ms  p99 {percentile(lat, 99):.1f} ms  "
        f"max {max(lat):.1f} ms  mean {statistics.mean(lat):.1f} ms"
    )
    print("  of which detection (-> failure_detected, before the decision and the writes):")
    print(
        f"  p50 {percentile(detect, 50):.1f} ms  p90 {percentile(detect, 90):.1f} ms  p99 {percentile(detect, 99):.1f} ms"
    )
    print("guard process while following the unit:")
    print("  unit lines/s   guard CPU %   VmRSS MiB")
    for rate, cpu, rss in rows:
        print(f"  {rate:>12}   {cpu:>10.2f}   {rss:>9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
