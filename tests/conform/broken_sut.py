"""A SUT that misbehaves on purpose, for the robustness tests: ``python broken_sut.py MODE [N]``.

It answers like ``brokerspec.conform.serve --layer impl`` until the N-th ``op`` request after each reset
(default 2), then:

``crash``      exits with code 7, writing a last line to stderr
``hang``       stops answering (sleeps)
``garbage``    writes a line that is not JSON
``not-object`` writes a JSON list
``version``    answers with protocol version 99
``error``      answers with an error reply (and goes on answering correctly afterwards)
``seq``        answers with the wrong sequence number
``outcome``    answers with an outcome that does not decode
``wrong``      answers a well-formed but wrong outcome (a conformance failure, not a SUT failure)
``hello-hang`` never answers the handshake
``close``      closes its output and keeps running
"""

from __future__ import annotations

import json
import os
import sys
import time

from brokerspec.conform.serve import Server

MODE = sys.argv[1]
AT = int(sys.argv[2]) if len(sys.argv) > 2 else 2


def main() -> None:
    server = Server("impl")
    ops = 0
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("type") == "hello" and MODE == "hello-hang":
            time.sleep(3600)
        if request.get("type") == "reset":
            ops = 0
        if request.get("type") == "op":
            ops += 1
            if ops == AT:
                if misbehave(request):
                    continue
        reply = server.answer(request)
        if reply is None:
            return
        print(json.dumps(reply), flush=True)


def misbehave(request: dict[str, object]) -> bool:
    """Do the broken thing; True when the request is answered (or never will be)."""
    seq = request["seq"]
    if MODE == "crash":
        print("broken_sut: giving up on purpose", file=sys.stderr, flush=True)
        sys.exit(7)
    if MODE == "hang":
        time.sleep(3600)
    if MODE == "close":
        sys.stdout.close()
        os.close(1)
        time.sleep(3600)
    replies = {
        "garbage": "this is not json",
        "not-object": "[1, 2, 3]",
        "version": json.dumps({"v": 99, "type": "outcome", "seq": seq, "outcome": {}}),
        "error": json.dumps({"v": 1, "type": "error", "seq": seq, "message": "operation not supported here"}),
        "seq": json.dumps({"v": 1, "type": "outcome", "seq": 999, "outcome": {"type": "not_found", "name": "x"}}),
        "outcome": json.dumps({"v": 1, "type": "outcome", "seq": seq, "outcome": {"type": "no_such_outcome"}}),
        "wrong": json.dumps({"v": 1, "type": "outcome", "seq": seq,
                             "outcome": {"type": "not_found", "name": "surely-not-this"}}),
    }
    if MODE in replies:
        print(replies[MODE], flush=True)
        return True
    return False


if __name__ == "__main__":
    main()
