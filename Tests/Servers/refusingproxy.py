#!/usr/bin/env python3
"""An HTTP proxy for syncr's integration tests that refuses every request it is sent.

Answers every request, a CONNECT (https through the proxy) as well as a plain-http request
in absolute form (GET http://host/path), with --status: 407 (with a Proxy-Authenticate
challenge, as a proxy that wants credentials answers) or 403 (as a proxy whose rules refuse
the destination). Nothing is forwarded. Every request line is appended to --log FILE, one a
line, so that a test counts how often syncr asked.

Usage:  python3 refusingproxy.py --status 407|403 --log FILE [--port 0] [--exit-with-parent]
Prints "PORT <n>" on stdout once listening. Exits on SIGTERM or SIGINT, and with
--exit-with-parent also when the process that started it ends.
Python 3 standard library only.
"""

import argparse
import http.server
import os
import signal
import sys
import threading
import time


def make_handler(status, log_path, lock):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            pass

        def refuse(self):
            with lock, open(log_path, "a") as log:
                log.write(self.requestline + "\n")
            length = int(self.headers.get("Content-Length") or 0)
            if length and self.command != "CONNECT":
                self.rfile.read(length)
            body = b"<html><head><title>Proxy refused</title></head><body>refused by the test proxy</body></html>"
            self.send_response(status)
            if status == 407:
                self.send_header("Proxy-Authenticate", 'Basic realm="test proxy"')
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_CONNECT = do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = refuse

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--status", type=int, required=True)
    parser.add_argument("--log", required=True, help="file every request line is appended to")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="exit when the parent process dies (a crashed test run)")
    args = parser.parse_args()
    open(args.log, "a").close()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port),
                                             make_handler(args.status, args.log, threading.Lock()))
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    parent = os.getppid()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    while not (args.exit_with_parent and os.getppid() != parent):
        time.sleep(0.5)


if __name__ == "__main__":
    main()
