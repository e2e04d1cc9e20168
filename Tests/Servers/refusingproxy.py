#!/usr/bin/env python3
"""An HTTP (or SOCKS5) proxy for syncr's integration tests that refuses every request it is sent.

Answers every request, a CONNECT (https through the proxy) as well as a plain-http request
in absolute form (GET http://host/path), with --status: 407 (with a Proxy-Authenticate
challenge, as a proxy that wants credentials answers) or 403 (as a proxy whose rules refuse
the destination). Nothing is forwarded. Every request line is appended to --log FILE, one a
line, so that a test counts how often syncr asked.

With --socks5 it is a SOCKS5 proxy (RFC 1928) instead, which fails every handshake one way:
"auth" asks for a user name and password (RFC 1929) and takes none, "not-allowed" refuses
every server by its rules (reply 2), "refused" says the server refused the connection
(reply 5). It logs one line a handshake: "SOCKS5 CONNECT host:port", or "SOCKS5 AUTH" for
one that stopped at the credentials.

Usage:  python3 refusingproxy.py (--status 407|403 | --socks5 auth|not-allowed|refused)
                                 --log FILE [--port 0] [--exit-with-parent]
Prints "PORT <n>" on stdout once listening. Exits on SIGTERM or SIGINT, and with
--exit-with-parent also when the process that started it ends.
Python 3 standard library only.
"""

import argparse
import http.server
import os
import signal
import socket
import socketserver
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


def make_socks5_handler(mode, log_path, lock):
    class Handler(socketserver.BaseRequestHandler):
        def log(self, line):
            with lock, open(log_path, "a") as log:
                log.write(line + "\n")

        def read(self, count):
            data = b""
            while len(data) < count:
                chunk = self.request.recv(count - len(data))
                if not chunk:
                    raise ConnectionError("closed")
                data += chunk
            return data

        def handle(self):
            try:
                self.negotiate()
            except (ConnectionError, OSError):
                pass

        def negotiate(self):
            _, count = self.read(2)
            methods = self.read(count)
            if mode == "auth":
                self.log("SOCKS5 AUTH")
                if 2 not in methods:
                    self.request.sendall(b"\x05\xff")  # no acceptable method: credentials wanted
                    return
                self.request.sendall(b"\x05\x02")
                _, user_length = self.read(2)
                self.read(user_length)
                (password_length,) = self.read(1)
                self.read(password_length)
                self.request.sendall(b"\x01\x01")  # RFC 1929: failure
                return
            self.request.sendall(b"\x05\x00")
            _, command, _, address_type = self.read(4)
            if address_type == 1:
                host = socket.inet_ntop(socket.AF_INET, self.read(4))
            elif address_type == 4:
                host = "[" + socket.inet_ntop(socket.AF_INET6, self.read(16)) + "]"
            else:
                (length,) = self.read(1)
                host = self.read(length).decode("ascii", "replace")
            port = int.from_bytes(self.read(2), "big")
            self.log(f"SOCKS5 CONNECT {host}:{port}")
            reply = 2 if mode == "not-allowed" else 5
            self.request.sendall(bytes([5, reply, 0, 1, 0, 0, 0, 0, 0, 0]))

    return Handler


class SocksServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--status", type=int)
    kind.add_argument("--socks5", choices=["auth", "not-allowed", "refused"])
    parser.add_argument("--log", required=True, help="file every request line is appended to")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="exit when the parent process dies (a crashed test run)")
    args = parser.parse_args()
    open(args.log, "a").close()
    if args.socks5:
        server = SocksServer(("127.0.0.1", args.port), make_socks5_handler(args.socks5, args.log, threading.Lock()))
    else:
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
