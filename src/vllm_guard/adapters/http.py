"""HTTP clients for talking to vLLM servers (httpx).

Tests pass a ``transport`` (``httpx.MockTransport``) instead of a real network.
"""

from __future__ import annotations

import functools
import ssl

import httpx

from vllm_guard import __version__

# Connecting to a local server takes milliseconds; 5 s means the listen queue is stuck, not slow.
CONNECT_TIMEOUT_S = 5.0


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: building one loads the CA store (about 35 ms here), which a
    client made for every liveness probe would otherwise pay each time."""
    return ssl.create_default_context()


def make_client(
    base_url: str,
    *,
    api_key: str | None = None,
    timeout_s: float = 60.0,
    transport: httpx.BaseTransport | None = None,
) -> httpx.Client:
    """A client for one vLLM server: bearer key when set, no proxies from the environment, no redirects.

    ``timeout_s`` bounds each read and write (a hung server answers nothing); connecting is bounded by
    the smaller of it and ``CONNECT_TIMEOUT_S``.
    """
    headers = {"User-Agent": f"vllm-guard/{__version__}", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S))
    return httpx.Client(
        base_url=base_url,
        headers=headers,
        timeout=timeout,
        transport=transport,
        verify=_tls_context(),
        # The server is on this host: an HTTP(S)_PROXY meant for the internet must not be used for it.
        trust_env=False,
        follow_redirects=False,
    )
