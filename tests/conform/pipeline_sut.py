"""A SUT for the pipelining tests: ``python pipeline_sut.py MODE [K]``.

It answers like ``brokerspec.conform.serve --layer impl``, reading its input itself so that it can see
how many requests brokerspec has written ahead of their replies. Modes:

``one-at-a-time``  announces no pipelining, and exits with code 9 (saying why on stderr) if a request
                   arrives before the reply to the one before it was written
``window``         announces ``"pipelining": K`` and exits with code 9 if more than K requests are ever
                   unanswered; with K above 1, it also exits with code 8 at the end of its input if no
                   two requests were ever in flight at once (nothing was pipelined)
``reorder``        announces pipelining of K; the replies to the ops K and K+1 after each reset are swapped
``unknown``        announces pipelining of 8; the reply to op K carries seq 999
``die``            announces pipelining of 8; exits with code 5 when op K arrives (after the replies before it)
``error``          announces pipelining of 8; answers op K of each reset with an error reply, then goes on
``hang``           announces pipelining of 8; never answers op K
``close-input``    announces no pipelining; closes its input before it writes the reply to op K, then waits
                   with its output open
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

from brokerspec.conform.serve import Server

MODE = sys.argv[1]
K = int(sys.argv[2]) if len(sys.argv) > 2 else 3
WINDOW = {"one-at-a-time": 1, "close-input": 1, "window": K, "reorder": max(K, 2)}.get(MODE, 8)


def lines() -> Any:
    """Each request line, and how many more complete lines were already read behind it."""
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = os.read(0, 65536)
            if not chunk:
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        yield line, buffer.count(b"\n")


def refuse(why: str) -> None:
    sys.stderr.write(f"pipeline_sut: {why}\n")
    sys.stderr.flush()
    os._exit(9)


def main() -> None:
    server = Server("impl", WINDOW, protocol=1)  # its own error replies say version 1
    ops = 0
    held: list[bytes] = []
    most = 1
    for line, behind in lines():
        request = json.loads(line)
        kind = request.get("type")
        if kind == "bye":
            break
        unanswered = 1 + behind + len(held)
        most = max(most, unanswered)
        if unanswered > WINDOW:
            refuse(f"{unanswered} requests in flight, more than the {WINDOW} announced")
        if MODE == "one-at-a-time" and select.select([0], [], [], 0.05)[0]:
            refuse(f"a request arrived before the reply to {kind} {request.get('seq', '')} was written")
        ops = 0 if kind == "reset" else ops + (kind == "op")
        reply = server.answer(request)
        assert reply is not None
        if kind == "op" and ops == K:
            if MODE == "unknown":
                reply["seq"] = 999
            elif MODE == "die":
                os._exit(5)
            elif MODE == "error":
                reply = {"v": 1, "type": "error", "seq": request["seq"], "message": "op refused on purpose"}
            elif MODE == "hang":
                time.sleep(3600)
            elif MODE == "close-input":
                os.close(0)
                os.write(1, (json.dumps(reply) + "\n").encode())
                time.sleep(3600)
            elif MODE == "reorder":
                held.append((json.dumps(reply) + "\n").encode())
                continue
        os.write(1, (json.dumps(reply) + "\n").encode())
        while held:
            os.write(1, held.pop())
    if MODE == "window" and WINDOW > 1 and most < 2:
        sys.stderr.write("pipeline_sut: nothing was pipelined\n")
        os._exit(8)


if __name__ == "__main__":
    main()
