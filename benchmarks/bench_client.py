"""Client throughput (issue 17): metajudge's OpenAI-compatible client vs the bare ``openai``
AsyncClient against an instant loopback server, at concurrency 256.

The server (a separate process, asyncio, HTTP/1.1 keep-alive) answers every
``/v1/chat/completions`` at once with a fixed one-token completion. Both clients send
``--requests`` distinct requests; metajudge's goes through the response cache (a fresh SQLite
file, every answer stored). Prints req/s of each, the ratio and metajudge's RSS growth.

Run: ``python benchmarks/bench_client.py [--requests 20000] [--concurrency 256]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import resource
import socket
import tempfile
import time
from pathlib import Path

BODY = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
).encode()
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            n = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":", 1)[1])
            if n:
                await reader.readexactly(n)
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


def _serve(sock: socket.socket) -> None:
    async def main() -> None:
        server = await asyncio.start_server(_handle, sock=sock, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bare_openai(url: str, n: int, conc: int) -> float:
    import openai

    async def run() -> None:
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
        sem = asyncio.Semaphore(conc)

        async def one(i: int) -> None:
            async with sem:
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"q{i}"}], max_tokens=1
                )

        await asyncio.gather(*(one(i) for i in range(n)))
        await client.close()

    t0 = time.perf_counter()
    asyncio.run(run())
    return n / (time.perf_counter() - t0)


def metajudge_client(url: str, n: int, conc: int) -> tuple[float, float, int]:
    from metajudge.backends.base import Request
    from metajudge.backends.cache import ResponseCache
    from metajudge.backends.cached import CachedBackend
    from metajudge.backends.config import BackendConfig
    from metajudge.backends.openai_backend import OpenAIBackend

    cfg = BackendConfig(
        name="loop", kind="openai", model="m", base_url=url, concurrency=conc, max_retries=0
    )
    reqs = [
        Request(messages=({"role": "user", "content": f"q{i}"},), max_tokens=1) for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as d:
        rss0 = _rss_mb()
        be = CachedBackend(OpenAIBackend(cfg), ResponseCache(Path(d) / "c.sqlite"))
        t0 = time.perf_counter()
        res = be.complete(reqs)
        rate = n / (time.perf_counter() - t0)
        grow = _rss_mb() - rss0
        ok = sum(1 for r in res if not isinstance(r, Exception))
        be.close()
    return rate, grow, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--concurrency", type=int, default=256)
    a = ap.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    proc = mp.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    proc.start()
    try:
        bare = bare_openai(url, a.requests, a.concurrency)
        mine, grow, ok = metajudge_client(url, a.requests, a.concurrency)
    finally:
        proc.terminate()
    print(
        f"{a.requests} requests, concurrency {a.concurrency}: bare openai AsyncClient "
        f"{bare:.0f} req/s; metajudge (cache on) {mine:.0f} req/s ({ok} ok), "
        f"ratio x{mine / bare:.2f}; metajudge RSS growth {grow:.0f} MB"
    )


if __name__ == "__main__":
    main()
