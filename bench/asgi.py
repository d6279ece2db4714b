"""The service's ASGI app called in-process with a whole request body, for the in-process benches
(``bench/create_cpu.py``, ``bench/search_callgrind.py``): no uvicorn and no client socket, so their
figures are the app's own work (its partner calls and database are real)."""

from __future__ import annotations

import asyncio
from typing import Any


class Asgi:
    """Calls of the ASGI app with a whole body and the answer collected."""

    def __init__(self, app: Any, key: str, host: bytes = b"bench") -> None:
        self.app = app
        self.headers = [
            (b"host", host),
            (b"authorization", f"Bearer {key}".encode()),
            (b"content-type", b"application/json"),
        ]

    async def get(self, path: str, query: bytes) -> tuple[int, bytes]:
        return await self.post(path, b"", method="GET", query=query)

    async def post(self, path: str, body: bytes, *, method: str = "POST", query: bytes = b"") -> tuple[int, bytes]:
        headers = self.headers if method == "GET" else [*self.headers, (b"content-length", str(len(body)).encode())]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": query,
            "headers": headers,
            "client": ("127.0.0.1", 40000),
            "server": ("127.0.0.1", 8000),
            "state": {},
        }
        sent = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, b"".join(chunks)
