"""A SUT that misbehaves on purpose, for the robustness tests: ``python broken_sut.py MODE [N]``.

It answers like ``brokerspec.conform.serve --layer impl --protocol 1`` (a version 1 SUT, as its own replies
below say) until the N-th ``op`` request after each reset (default 2), then:

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
``fork``       starts a grandchild that keeps the SUT's output open, then hangs (the grandchild too)
``partial``    writes half a reply line with no newline, then hangs
``nest``       answers with an outcome nested 100,000 levels deep
``bigint``     answers with a sequence number of 5,000 digits
``float-seq``  answers with ``"seq": 2.0`` instead of 2
``dup-key``    answers with the key ``seq`` twice, the last one right
``bad-utf8``   answers with bytes that are not UTF-8 inside a string
``control``    answers with an error reply whose message holds NUL, ESC, other control characters and
               Rich markup (``[/]``, ``[bold red]x[/]``), and writes the same to stderr
``flood``      writes 20 MB of non-JSON on one line
``refuse:OP``  answers every ``OP`` request (any position) with an error reply saying it is not supported, as a
               partial SUT does; ``refuse:OP1,OP2`` refuses several
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
    server = Server("impl", protocol=1)
    ops = 0
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("type") == "hello" and MODE == "hello-hang":
            time.sleep(3600)
        if request.get("type") == "reset":
            ops = 0
        if request.get("type") == "op" and MODE.startswith("refuse:") and request["op"] in MODE[7:].split(","):
            print(json.dumps({"v": 1, "type": "error", "seq": request["seq"],
                              "message": f"{request['op']} is not supported"}), flush=True)
            continue
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
    if MODE == "fork":
        import subprocess

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3601)"])  # inherits stdout
        time.sleep(3602)
    if MODE == "partial":
        sys.stdout.write('{"v": 1, "type": "outc')
        sys.stdout.flush()
        time.sleep(3600)
    if MODE == "bad-utf8":
        sys.stdout.flush()
        sys.stdout.buffer.write(b'{"v": 1, "type": "outcome", "seq": %d, "outcome": {"type": "not_found", '
                                b'"name": "q\xff\xfe"}}\n' % int(str(seq)))
        sys.stdout.buffer.flush()
        return True
    if MODE == "control":
        text = "bad\x00 \x1b[31mred\x1b[0m \x07\x0b\x0c [/] [bold red]x[/] ]]> <&>"
        print(text, file=sys.stderr, flush=True)
        print(json.dumps({"v": 1, "type": "error", "seq": seq, "message": text}), flush=True)
        return True
    if MODE == "flood":
        sys.stdout.write("x" * 20_000_000 + "\n")
        sys.stdout.flush()
        return True
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
        "nest": '{"v": 1, "type": "outcome", "seq": %s, "outcome": ' % seq + "[" * 100_000 + "]" * 100_000 + "}",
        "bigint": '{"v": 1, "type": "outcome", "seq": 1%s, "outcome": {"type": "not_found", "name": "x"}}' % ("0" * 5000),
        "float-seq": json.dumps({"v": 1, "type": "outcome", "seq": float(str(seq)),
                                 "outcome": {"type": "not_found", "name": "q1"}}),
        "dup-key": '{"v": 1, "type": "outcome", "seq": 999, "seq": %s, "outcome": {"type": "not_found", "name": "x"}}' % seq,
        "wrong": json.dumps({"v": 1, "type": "outcome", "seq": seq,
                             "outcome": {"type": "not_found", "name": "surely-not-this"}}),
    }
    if MODE in replies:
        print(replies[MODE], flush=True)
        return True
    return False


if __name__ == "__main__":
    main()
