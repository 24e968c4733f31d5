"""`vllm-guard classify`: JSON and text output, stdin, exit codes, an unreadable file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from vllm_guard.cli import main
from vllm_guard.core.logline import unpack_records
from vllm_guard.exitcodes import ExitCode

pytestmark = pytest.mark.unit

# The message of the contract example (vLLM V1 kv_cache_utils wording).
KV_V1 = (
    "(EngineCore_DP0 pid=18799) ERROR 10-08 20:33:48 [core.py:708] ValueError: To serve at least one request "
    "with the model's max seq len (131072), (4.0 GiB KV cache is needed, which is larger than the available "
    "KV cache memory (1.0 GiB). Based on the available memory, the estimated maximum model length is 32640."
)
BENIGN = (
    "INFO 05-01 10:00:00 [kv_cache_utils.py:1] GPU KV cache size: 1,234,560 tokens\n"
    "INFO:     Application startup complete.\n"
)


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    bad = tmp_path / "bad.log"
    bad.write_text(
        KV_V1 + "\n(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above.\n"
    )
    good = tmp_path / "good.log"
    good.write_text(BENIGN)
    return bad, good


def test_json_one_object_per_file(logs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bad, good = logs
    assert main(["classify", "--json", str(bad), str(good)]) == ExitCode.WARN
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["file"] for o in out] == [str(bad), str(good)]
    first = out[0]
    assert first["schema"] == 1
    assert first["kind"] == "kv_cache_insufficient"
    assert first["phase"] == "profile"
    assert first["numbers"]["max_model_len"] == 131072
    assert first["numbers"]["estimated_max_model_len"] == 32640
    assert first["evidence"] and first["hint"]
    assert set(first) == {"schema", "file", "kind", "phase", "numbers", "evidence", "hint", "confidence", "basis"}
    assert out[1]["kind"] == "none"


def test_all_benign_exits_zero(logs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, good = logs
    assert main(["classify", str(good)]) == ExitCode.OK
    assert "none" in capsys.readouterr().out


def test_a_log_that_ends_while_loading_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # no failure in the lines, but no start either: a paste cut short, or a process that died without a word
    cut = tmp_path / "cut.log"
    cut.write_text(
        "INFO 05-01 10:00:00 [gpu_model_runner.py:1] Starting to load model Qwen/Qwen2.5-7B-Instruct...\n"
        "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:03<00:03,  1.50s/it]\n"
    )
    assert main(["classify", str(cut)]) == ExitCode.OK
    assert "ends while vLLM was still starting, in its load phase" in capsys.readouterr().out
    # a start that served, or a stop someone asked for during loading, is just "none"
    stopped = tmp_path / "stopped.log"
    stopped.write_text(cut.read_text() + "Stopping vllm-qwen.service - vLLM...\n")
    for path in (stopped, tmp_path / "good.log"):
        path.write_text(path.read_text() if path.exists() else BENIGN)
        main(["classify", str(path)])
        assert capsys.readouterr().out.endswith(": none (no failure found)\n")


def test_text_verdict_with_evidence(logs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bad, _ = logs
    assert main(["classify", str(bad)]) == ExitCode.WARN
    out = capsys.readouterr().out
    assert "kv_cache_insufficient (phase: profile, confidence: high: a message that names the cause)" in out
    assert "estimated_max_model_len=32640" in out
    assert "> ValueError: To serve at least one request" in out
    assert "hint: lower --max-model-len to 32640" in out


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(KV_V1 + "\n"))
    assert main(["classify", "--json", "-"]) == ExitCode.WARN
    out = json.loads(capsys.readouterr().out)
    assert out["file"] == "-"
    assert out["kind"] == "kv_cache_insufficient"


def test_unreadable_file_exits_66_without_traceback(
    logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, _ = logs
    missing = tmp_path / "missing.log"
    assert main(["classify", str(missing), str(bad)]) == ExitCode.NOINPUT
    captured = capsys.readouterr()
    assert "kv_cache_insufficient" in captured.out  # the readable file still gets its verdict
    assert "error[unreadable-log]" in captured.err
    assert str(missing) in captured.err
    assert "Traceback" not in captured.err


def test_binary_garbage_does_not_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"\xff\xfe\x00garbage\nINFO ok\n")
    assert main(["classify", "--json", str(junk)]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["kind"] == "none"


def test_structured_exports_are_read_by_their_message_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docker's json-file driver ({"log": "...\n", "stream": "stderr", "time": ...}) and journalctl -o json, whose
    # MESSAGE is a list of bytes where the text is not valid UTF-8
    docker = tmp_path / "container-json.log"
    docker.write_text(
        json.dumps(
            {"log": "INFO 05-01 10:00:00 [core.py:1] starting\n", "stream": "stdout", "time": "2026-11-30T05:00:00Z"}
        )
        + "\n"
        + json.dumps({"log": KV_V1 + "\n", "stream": "stderr", "time": "2026-11-30T05:00:01Z"})
        + "\n"
    )
    journal = tmp_path / "journal.json"
    journal.write_text(
        json.dumps({"MESSAGE": list((KV_V1 + " \xff").encode("latin-1")), "_PID": "4242", "PRIORITY": "6"}) + "\n"
    )
    # and a record whose MESSAGE journalctl printed as null (over 4096 bytes, without --all): an empty line
    journal.write_text(
        journal.read_text() + json.dumps({"MESSAGE": None, "_PID": "4242", "UNIT_RESULT": "Failed with result"}) + "\n"
    )
    assert unpack_records(['{"MESSAGE": null, "_PID": "4242"}', '{"log": "a\\nb\\n"}']) == ["", "a", "b"]
    for path in (docker, journal):
        assert main(["classify", "--json", str(path)]) == ExitCode.WARN
        out = json.loads(capsys.readouterr().out)
        assert out["kind"] == "kv_cache_insufficient", path
        assert out["numbers"]["estimated_max_model_len"] == 32640


def test_a_line_that_only_looks_like_a_record_is_read_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a dict vLLM prints, a record with no message field: text like any other line
    log = tmp_path / "x.log"
    log.write_text("{'model': 'Qwen/Qwen3-8B', 'max_model_len': 32768}\n" + '{"level": "info"}\n' + KV_V1 + "\n")
    assert main(["classify", "--json", str(log)]) == ExitCode.WARN
    assert json.loads(capsys.readouterr().out)["kind"] == "kv_cache_insufficient"
