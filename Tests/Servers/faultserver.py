#!/usr/bin/env python3
"""A static file server for syncr's integration tests that misbehaves on demand.

Serves files under --root with HTTP/1.1 keep-alive and correct HEAD/GET/Range/If-Range
semantics (RFC 9110 sections 13.1.5 and 14), and, per URL path, injects the faults
that real servers produce but cannot be asked to produce: dropped connections,
ignored ranges, error statuses with Retry-After, missing lengths or validators,
stalls, throttling, wrong Content-Range, redirects.

Accepts uploads to any path (stored under --uploads, never under --root):
  PUT  /p    the body is stored as <uploads>/p; 201 (new) or 200 (replaced).
  POST /p    the raw body is stored as <uploads>/p.<n>.body (n = 1, 2, ... per path);
             a multipart/form-data body (RFC 7578) is also parsed: each file part is
             saved as <uploads>/p.<n>.parts/<filename> and a summary (fields, files,
             sizes) as <uploads>/p.<n>.json, which is also the 201 response body.
  A body must have Content-Length: chunked or unframed bodies get 411 (and the
  connection is closed). A body is written to a temporary name and renamed when
  complete, so a cut-off upload never looks like a stored file. Expect: 100-continue
  is honoured; when `status` applies, that status is sent instead of 100 Continue and
  the body is never read (the connection is closed).

Usage:  python3 faultserver.py --root DIR [--uploads DIR] [--port 0] [--log FILE]
Prints "PORT <n>" on stdout once listening. Exits cleanly on SIGTERM or SIGINT.
Python 3 standard library only.

Every request's headers are recorded per path (stats "headers": one {lowercased name:
value} object per request, in order), so tests can see which headers reached the server;
so is the moment each request arrived (stats "arrivals": seconds on a monotonic clock, in
order), so tests can see how long a client waited between two requests.

Control API (paths under /_control/ are never counted in stats):
  POST /_control/behave  {"path": "/big.bin", <options>}   replaces that path's behaviour
                         ({"path": ...} alone clears it); unknown options -> 400
  POST /_control/reset                                      clears behaviours and stats
  GET  /_control/stats                                      JSON, see Stats.snapshot
  GET  /_control/uploads                                    JSON {"dir": ..., "files":
                         {relative path: size}} of the stored uploads
  POST /_control/release {"path": "/big.bin"}               ends the stalls in progress on
                         that path (they go on sending), so tests need no timing
  POST /_control/put     {"path": "/f.bin", "file": "/abs/src"}  atomically replaces a file
                         under the root with a copy of src (new inode, so a new ETag)

Options (combinable; evaluated in this order per request):
  status: int, retry_after: str, status_times: int,
  status_on: "all"|"get"|"head"|"put"|"post"
      Answer `status` with a small text body (and Retry-After when given) to the first
      `status_times` requests whose method matches `status_on` (default "all": every
      method counts); then behave normally. Without status_times: every time. An
      upload's body is read (and counted) first, unless it waits for 100 Continue.
  status_body: str            the injected status's body instead of a line of text; one
                              that starts with "<" goes as application/xml (an object
                              store's error document, e.g. S3's <Error><Code>SlowDown...).
  require_basic: str          "user:password": a request without that pair as Basic
                              credentials is answered 401 with WWW-Authenticate: Basic (after
                              an injected status, which comes first).
  echo_headers: "as_is"|"lower"|"upper"
                              the injected status's (and require_basic's 401's) body is the
                              request's headers, one "name: value" line each, in that case: a
                              server that quotes the request back in an error page.
  head_status: int            HEAD answered with this status (e.g. 405), GET unaffected.
  redirect_to: str, redirect_status: int (default 302; 307 for PUT and POST, after the
      body was read)          Location: http://<host><redirect_to>, or redirect_to itself
                              when it is an absolute http(s) URL (another port or host).
  no_length: bool             no Content-Length; GET bodies use chunked transfer coding.
  no_validators: bool         omit ETag and Last-Modified (If-Range then never matches).
  weak_etag: bool             ETag sent as W/"..." (never matches If-Range: strong comparison).
  no_accept_ranges: bool      omit Accept-Ranges and ignore Range.
  ignore_range: bool          ranged GET answered 200 with the full body; HEAD still says
                              Accept-Ranges: bytes.
  wrong_content_range: bool   a satisfiable ranged GET gets a self-consistent 206 for a range
                              whose start is off by one (start+1, or start-1 at the last byte).
  drop_after: int, drop_times: int, drop_rst: bool
      Close the connection after `drop_after` body bytes of a GET (0 = right after the
      headers), for the first `drop_times` GETs (default: every GET). drop_rst sends a TCP
      RST instead of a FIN.
  stall_after: int, stall_seconds: float, stall_times: int
      Send nothing for `stall_seconds` after `stall_after` body bytes, then go on; first
      `stall_times` GETs only (default: every GET). /_control/release ends the stalls in
      progress on the path; server shutdown ends them by closing the connection.
  rate: int                   throttle GET bodies to this many bytes per second.
  drop_body_after: int, drop_times: int
      Close the connection after reading `drop_body_after` bytes of a PUT or POST body
      (0 = right after the headers), for the first `drop_times` uploads (default: every
      upload); nothing is stored.
  answer_before_body: int
      Answer a PUT or POST with this status (e.g. 200) as soon as its headers are read,
      without reading the body, and close the connection: a server that replies early,
      which has not taken the upload whatever its status says. Nothing is stored.
  stall_body_after: int, stall_seconds: float, stall_times: int
      Stop reading a PUT or POST body after `stall_body_after` bytes for `stall_seconds`
      (default: until /_control/release for the path), then read on.
  stall_answer: bool, stall_seconds: float, stall_times: int
      Read a PUT or POST body whole and store it, then send nothing for `stall_seconds`
      (default: until /_control/release for the path) before the answer; first
      `stall_times` uploads only (default: every upload).
"""

import argparse
import base64
import email.utils
import hashlib
import http.server
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.parse

CHUNK = 256 * 1024

KNOWN_OPTIONS = {
    "status": int, "retry_after": str, "status_times": int, "status_on": str, "status_body": str,
    "head_status": int, "require_basic": str, "echo_headers": str,
    "redirect_to": str, "redirect_status": int,
    "no_length": bool, "no_validators": bool, "weak_etag": bool,
    "no_accept_ranges": bool, "ignore_range": bool, "wrong_content_range": bool,
    "drop_after": int, "drop_times": int, "drop_rst": bool,
    "stall_after": int, "stall_seconds": (int, float), "stall_times": int,
    "rate": int,
    "drop_body_after": int, "stall_body_after": int,
    "answer_before_body": int, "stall_answer": bool,
}

STATUS_ON = ("all", "get", "head", "put", "post")

STOPPING = threading.Event()


class Dropped(Exception):
    """Raised inside a handler to abandon the connection on purpose."""


class PathStats:
    def __init__(self):
        self.requests = 0
        self.gets = 0
        self.heads = 0
        self.puts = 0
        self.posts = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        self.content_lengths = []
        self.chunked = 0
        self.ranges = []
        self.if_ranges = []
        self.statuses = []
        self.in_flight = 0
        self.max_concurrent = 0
        self.connection_ids = set()
        self.headers = []
        self.arrivals = []

    def snapshot(self):
        return {
            "requests": self.requests, "gets": self.gets, "heads": self.heads,
            "puts": self.puts, "posts": self.posts,
            "bytes_received": self.bytes_received,
            "content_lengths": list(self.content_lengths), "chunked": self.chunked,
            "bytes_sent": self.bytes_sent, "ranges": list(self.ranges),
            "if_ranges": list(self.if_ranges), "statuses": list(self.statuses),
            "max_concurrent": self.max_concurrent,
            "connections": len(self.connection_ids),
            "headers": [dict(h) for h in self.headers],
            "arrivals": list(self.arrivals),
        }


class State:
    """Behaviours and statistics shared by all handler threads, behind one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.behaviours = {}       # path -> dict of options
        self.counters = {}         # path -> {"status": n, "drop": n, "stall": n}
        self.releases = {}         # path -> threading.Event that ends stalls in progress
        self.paths = {}            # path -> PathStats
        self.open_connections = 0
        self.max_concurrent_connections = 0
        self.total_connections = 0
        self.next_connection_id = 0
        self.sockets = {}          # connection id -> socket, to unblock them on shutdown
        self.post_numbers = {}     # path -> POSTs stored so far (never reset: files stay)

    def reset(self):
        with self.lock:
            self.behaviours.clear()
            self.counters.clear()
            for event in self.releases.values():
                event.set()
            self.releases.clear()
            self.paths.clear()
            # Connections still open stay counted as open; the maximum restarts from them.
            self.max_concurrent_connections = self.open_connections
            self.total_connections = self.open_connections

    def stats(self, path):
        stats = self.paths.get(path)
        if stats is None:
            stats = self.paths[path] = PathStats()
        return stats

    def take(self, path, kind, limit):
        """True if fault `kind` should fire now; counts it. limit None = always."""
        with self.lock:
            counters = self.counters.setdefault(path, {})
            used = counters.get(kind, 0)
            if limit is not None and used >= limit:
                return False
            counters[kind] = used + 1
            return True

    def release_event(self, path):
        with self.lock:
            return self.releases.setdefault(path, threading.Event())

    def release(self, path):
        with self.lock:
            event = self.releases.pop(path, None)
        if event is not None:
            event.set()

    def snapshot(self):
        with self.lock:
            return {
                "paths": {p: s.snapshot() for p, s in self.paths.items()},
                "max_concurrent_connections": self.max_concurrent_connections,
                "open_connections": self.open_connections,
                "connections": self.total_connections,
            }


STATE = State()
LOG_LOCK = threading.Lock()
LOG_FILE = sys.stderr


def log(line):
    with LOG_LOCK:
        LOG_FILE.write(line + "\n")
        LOG_FILE.flush()


def etag_for(path, st):
    """A strong validator that is cheap for 1 GiB files.

    size + mtime_ns + inode catch replaced and appended files; the first and last
    64 KiB catch an in-place rewrite of equal size within one mtime tick.
    """
    digest = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode())
    with open(path, "rb") as f:
        digest.update(f.read(65536))
        if st.st_size > 65536:
            f.seek(max(65536, st.st_size - 65536))
            digest.update(f.read(65536))
    return '"' + digest.hexdigest()[:24] + '"'


def parse_range(header, size):
    """Parses a single byte range (RFC 9110 14.1.2).

    Returns (start, end) inclusive, "unsatisfiable", or None when the header is to be
    ignored (absent, malformed, another unit, or several ranges, which we may ignore).
    """
    if not header:
        return None
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    if not dash:
        return None
    first, last = first.strip(), last.strip()
    try:
        if first == "":
            if not last.isdigit():
                return None
            n = int(last)
            if n == 0 or size == 0:
                return "unsatisfiable"
            return (max(0, size - n), size - 1)
        if not first.isdigit() or (last and not last.isdigit()):
            return None
        start = int(first)
        end = int(last) if last else size - 1
        if last and end < start:
            return None
        if start >= size:
            return "unsatisfiable"
        return (start, min(end, size - 1))
    except ValueError:
        return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultserver/1"
    # Idle keep-alive connections and stuck clients give their thread back eventually.
    timeout = 120

    # -- connection bookkeeping ------------------------------------------------

    def setup(self):
        super().setup()
        with STATE.lock:
            STATE.next_connection_id += 1
            self.connection_id = STATE.next_connection_id
            STATE.sockets[self.connection_id] = self.connection
        self.counted = False

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass
        with STATE.lock:
            if self.counted:
                STATE.open_connections -= 1
            STATE.sockets.pop(self.connection_id, None)

    def log_message(self, format, *args):
        # Per-request lines are written by log_request_line; this keeps errors only.
        log(f"conn={getattr(self, 'connection_id', '?')} {format % args}")

    def log_request(self, code="-", size="-"):
        pass

    # -- dispatch --------------------------------------------------------------

    def do_GET(self):
        self.serve("GET")

    def do_HEAD(self):
        self.serve("HEAD")

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_control/"):
            self.control(path)
        else:
            self.serve("POST")

    def do_PUT(self):
        self.serve("PUT")

    def do_DELETE(self):
        self.discard_body()
        self.send_simple(405, "method not allowed\n", {"Allow": "GET, HEAD, PUT, POST"})

    def parse_request(self):
        self.expect_status = None
        return super().parse_request()

    def handle_expect_100(self):
        """Answers an injected status instead of 100 Continue, as a server that checks the
        request head first would (the client then never sends the body)."""
        path = urllib.parse.urlsplit(self.path).path
        if self.command in ("PUT", "POST") and not path.startswith("/_control/"):
            with STATE.lock:
                b = dict(STATE.behaviours.get(path, {}))
            refusal = self.refusal(b, self.command, path)
            if refusal is not None:
                self.expect_status = refusal
                return True
        return super().handle_expect_100()

    def refusal(self, b, method, path):
        """The behaviour to answer this request with instead of serving it, or None: the
        injected status (counted against status_times), else 401 when require_basic is set
        and the request lacks those credentials."""
        if "status" in b and b.get("status_on", "all") in ("all", method.lower()) \
                and STATE.take(path, "status", b.get("status_times")):
            return b
        if "require_basic" in b:
            wanted = "Basic " + base64.b64encode(b["require_basic"].encode()).decode()
            if self.headers.get("Authorization") != wanted:
                return dict(b, status=401, www_authenticate='Basic realm="syncr-tests"',
                            status_body=b.get("status_body", "authorization required\n"))
        return None

    def discard_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        while length > 0:
            data = self.rfile.read(min(length, CHUNK))
            if not data:
                break
            length -= len(data)

    def send_simple(self, status, text, headers=None, head=False, content_type="text/plain; charset=utf-8"):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            if getattr(self, "stats", None) is not None:
                self.count(len(body))
            self.wfile.write(body)

    # -- control API -----------------------------------------------------------

    def control(self, path):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError as error:
            self.send_simple(400, f"invalid JSON: {error}\n")
            return
        if path == "/_control/stats":
            self.send_json(STATE.snapshot())
        elif path == "/_control/reset":
            STATE.reset()
            self.send_json({"ok": True})
        elif path == "/_control/behave":
            self.control_behave(body)
        elif path == "/_control/release":
            if not isinstance(body, dict) or not isinstance(body.get("path"), str):
                self.send_simple(400, 'expected {"path": "/..."}\n')
                return
            STATE.release(body["path"])
            self.send_json({"ok": True})
        elif path == "/_control/put":
            self.control_put(body)
        elif path == "/_control/uploads":
            uploads = self.server.uploads
            files = {}
            for folder, _, names in os.walk(uploads):
                for name in names:
                    if name.startswith(".part-"):
                        continue
                    full = os.path.join(folder, name)
                    files[os.path.relpath(full, uploads)] = os.path.getsize(full)
            self.send_json({"dir": uploads, "files": files})
        else:
            self.send_simple(404, f"unknown control endpoint {path}\n")

    def control_behave(self, body):
        if not isinstance(body, dict) or not isinstance(body.get("path"), str):
            self.send_simple(400, 'expected {"path": "/...", options...}\n')
            return
        options = {k: v for k, v in body.items() if k != "path" and v is not None}
        for key, value in options.items():
            kind = KNOWN_OPTIONS.get(key)
            if kind is None:
                self.send_simple(400, f"unknown option {key!r}; known: {sorted(KNOWN_OPTIONS)}\n")
                return
            if kind is int and isinstance(value, bool) or not isinstance(value, kind):
                self.send_simple(400, f"option {key!r}: wrong type {type(value).__name__}\n")
                return
        if options.get("status_on", "all") not in STATUS_ON:
            self.send_simple(400, f"status_on must be one of {', '.join(STATUS_ON)}\n")
            return
        with STATE.lock:
            STATE.behaviours[body["path"]] = options
            STATE.counters.pop(body["path"], None)
        log(f"behave {body['path']} {json.dumps(options, sort_keys=True)}")
        self.send_json({"ok": True})

    def control_put(self, body):
        try:
            target = self.resolve(body["path"])
            source = body["file"]
        except (KeyError, TypeError):
            self.send_simple(400, 'expected {"path": "/...", "file": "/abs/source"}\n')
            return
        if target is None:
            self.send_simple(400, "path escapes the root\n")
            return
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".put-")
        os.close(fd)
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
        self.send_json({"ok": True})

    def send_json(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    # -- file serving ----------------------------------------------------------

    def resolve(self, url_path, root=None):
        """Maps a URL path to a file under the root, or None if it would escape it."""
        root = root or self.server.root
        relative = urllib.parse.unquote(url_path).lstrip("/")
        candidate = os.path.realpath(os.path.join(root, relative))
        if candidate != root and not candidate.startswith(root + os.sep):
            return None
        return candidate

    def serve(self, method):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_control/"):
            self.control(path)
            return
        range_header = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        with STATE.lock:
            behaviour = dict(STATE.behaviours.get(path, {}))
            stats = STATE.stats(path)
            stats.requests += 1
            stats.arrivals.append(time.monotonic())
            if method == "GET":
                stats.gets += 1
            elif method == "HEAD":
                stats.heads += 1
            elif method == "PUT":
                stats.puts += 1
            else:
                stats.posts += 1
            if range_header is not None:
                stats.ranges.append(range_header)
            if if_range is not None:
                stats.if_ranges.append(if_range)
            stats.headers.append({k.lower(): v for k, v in self.headers.items()})
            stats.connection_ids.add(self.connection_id)
            if not self.counted:
                # Control calls never reach here: only file traffic counts as a connection.
                self.counted = True
                STATE.open_connections += 1
                STATE.total_connections += 1
                STATE.max_concurrent_connections = max(
                    STATE.max_concurrent_connections, STATE.open_connections)
            stats.in_flight += 1
            stats.max_concurrent = max(stats.max_concurrent, stats.in_flight)
        self.response_status = None
        self.body_sent = 0
        self.stats = stats
        try:
            if method in ("PUT", "POST"):
                self.receive(method, path, behaviour)
            else:
                self.respond(method, path, behaviour, range_header, if_range)
        except Dropped:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            self.close_connection = True
        finally:
            self.stats = None
            with STATE.lock:
                stats.in_flight -= 1
            log(f"conn={self.connection_id} {method} {path} range={range_header or '-'} "
                f"if-range={if_range or '-'} status={self.response_status} "
                f"bytes={self.body_sent} received={getattr(self, 'body_received', 0)}")

    def send_response(self, code, message=None):
        # Recorded before any byte leaves, so a client that has its answer can read stats
        # that already include it.
        self.response_status = code
        if getattr(self, "stats", None) is not None:
            with STATE.lock:
                self.stats.statuses.append(code)
        super().send_response(code, message)

    def respond(self, method, path, b, range_header, if_range):
        head = method == "HEAD"

        refusal = self.refusal(b, method, path)
        if refusal is not None:
            self.send_injected_status(refusal, head=head)
            return

        if head and "head_status" in b:
            self.send_simple(b["head_status"], "", {"Allow": "GET"}, head=True)
            return

        if "redirect_to" in b:
            location = self.redirect_location(b["redirect_to"])
            self.send_simple(
                b.get("redirect_status", 302), f"see {location}\n", {"Location": location}, head)
            return

        file_path = self.resolve(path)
        if file_path is None or not os.path.isfile(file_path):
            self.send_simple(404, "not found\n", head=head)
            return

        with open(file_path, "rb") as f:
            st = os.fstat(f.fileno())
            size = st.st_size
            etag = None if b.get("no_validators") else etag_for(file_path, st)
            if etag and b.get("weak_etag"):
                etag = "W/" + etag
            last_modified = None if b.get("no_validators") else email.utils.formatdate(
                st.st_mtime, usegmt=True)

            honour_range = (not head and not b.get("ignore_range")
                            and not b.get("no_accept_ranges"))
            byte_range = parse_range(range_header, size) if honour_range else None
            if byte_range is not None and if_range is not None \
                    and not self.if_range_matches(if_range, etag, last_modified):
                byte_range = None  # RFC 9110 13.1.5: stale validator -> full 200

            headers = {"Content-Type": "application/octet-stream"}
            if not b.get("no_accept_ranges"):
                headers["Accept-Ranges"] = "bytes"
            if etag:
                headers["ETag"] = etag
            if last_modified:
                headers["Last-Modified"] = last_modified

            if byte_range == "unsatisfiable":
                headers["Content-Range"] = f"bytes */{size}"
                self.send_simple(416, "range not satisfiable\n", headers)
                return

            if byte_range is None:
                status, start, end = 200, 0, size - 1
            else:
                status, (start, end) = 206, byte_range
                if b.get("wrong_content_range"):
                    if start + 1 <= size - 1:
                        start, end = start + 1, min(end + 1, size - 1)
                    else:
                        start, end = start - 1, end - 1
                headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            length = end - start + 1

            chunked = b.get("no_length") and not head
            if not b.get("no_length"):
                headers["Content-Length"] = str(length)
            elif chunked:
                headers["Transfer-Encoding"] = "chunked"
            else:
                # HEAD without a length: nothing frames a body, so close after it.
                self.close_connection = True

            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if head:
                return
            f.seek(start)
            self.stream(f, path, length, chunked, b)

    # -- uploads ---------------------------------------------------------------

    def receive(self, method, path, b):
        self.body_received = 0
        stats = self.stats
        if self.headers.get("Transfer-Encoding") is not None or \
                not (self.headers.get("Content-Length") or "").strip().isdigit():
            if self.headers.get("Transfer-Encoding") is not None:
                with STATE.lock:
                    stats.chunked += 1
                # Read the chunked body to its end before answering: closing a connection with
                # unread bytes makes the kernel reset it, and the client may then lose the 411
                # (curl reports "000" instead, now and then).
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    self.skip_chunked_body()
            # An unframed body cannot be skipped: the connection ends with the answer.
            self.close_connection = True
            self.send_simple(411, "a Content-Length is required (chunked bodies are refused)\n",
                             {"Connection": "close"})
            return
        length = int(self.headers["Content-Length"])
        with STATE.lock:
            stats.content_lengths.append(length)

        if "answer_before_body" in b:
            self.close_connection = True
            self.send_simple(b["answer_before_body"], "ok\n", {"Connection": "close"})
            return
        injected = self.expect_status
        if injected is not None:
            # Answered instead of 100 Continue: the body was never asked for.
            self.close_connection = True
            self.send_injected_status(injected, {"Connection": "close"})
            return
        refusal = self.refusal(b, method, path)
        if refusal is not None:
            self.read_body(path, length, b, None)
            self.send_injected_status(refusal)
            return

        if "redirect_to" in b:
            # Read first, so the client sees the answer rather than a reset, and has to
            # rewind its body to send it again (307/308 keep the method and body).
            self.read_body(path, length, b, None)
            location = self.redirect_location(b["redirect_to"])
            self.send_simple(b.get("redirect_status", 307), f"see {location}\n", {"Location": location})
            return

        target = self.resolve(path, self.server.uploads)
        if target is None or target == self.server.uploads:
            self.read_body(path, length, b, None)
            self.send_simple(400, "cannot store an upload at this path\n")
            return
        if method == "POST":
            with STATE.lock:
                n = STATE.post_numbers[path] = STATE.post_numbers.get(path, 0) + 1
            target = f"{target}.{n}.body"
        existed = os.path.exists(target)
        self.read_body(path, length, b, target)
        if b.get("stall_answer") and STATE.take(path, "stall_answer", b.get("stall_times")):
            self.stall(path, b.get("stall_seconds", 3600))
        if method == "PUT":
            self.send_simple(200 if existed else 201, f"stored {length} bytes\n")
            return
        summary = {"body": os.path.relpath(target, self.server.uploads), "length": length,
                   "fields": [], "files": []}
        content_type = self.headers.get("Content-Type") or ""
        if content_type.lower().startswith("multipart/form-data"):
            try:
                summary.update(save_multipart(target, content_type, target[:-len(".body")],
                                              self.server.uploads))
            except ValueError as error:
                self.send_simple(400, f"malformed multipart body: {error}\n")
                return
        with open(target[:-len(".body")] + ".json", "w") as f:
            json.dump(summary, f, indent=1)
        data = json.dumps(summary).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def redirect_location(self, target):
        if target.startswith(("http://", "https://")):
            return target
        host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_port}"
        return f"http://{host}{target}"

    def send_injected_status(self, b, extra=None, head=False):
        headers = dict(extra or {})
        if "retry_after" in b:
            headers["Retry-After"] = b["retry_after"]
        if "www_authenticate" in b:
            headers["WWW-Authenticate"] = b["www_authenticate"]
        text = b.get("status_body", f"{b['status']} injected by faultserver\n")
        if "echo_headers" in b:
            text = "you sent:\n" + "".join(f"{name}: {value}\n" for name, value in self.headers.items())
            text = {"lower": text.lower(), "upper": text.upper()}.get(b["echo_headers"], text)
        content_type = "application/xml" if text.startswith("<") else "text/plain; charset=utf-8"
        self.send_simple(b["status"], text, headers, head, content_type)

    def skip_chunked_body(self):
        """Reads and discards a chunked body, trailers included (RFC 9112, 7.1)."""
        while True:
            line = self.rfile.readline(1024)
            if not line:
                return
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                return
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return
            while size > 0:
                data = self.rfile.read(min(size, CHUNK))
                if not data:
                    return
                size -= len(data)
            self.rfile.readline(1024)  # the CRLF after the chunk

    def read_body(self, path, length, b, target):
        """Reads `length` body bytes into `target` (None: discard), honouring drop_body_after."""
        drop_at = None
        if "drop_body_after" in b and STATE.take(path, "drop_body", b.get("drop_times")):
            drop_at = b["drop_body_after"]
        stall_at = None
        if "stall_body_after" in b and STATE.take(path, "stall", b.get("stall_times")):
            stall_at = b["stall_body_after"]
        out = None
        if target is not None:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".part-")
            out = os.fdopen(fd, "wb")
        try:
            received = 0
            while True:
                if drop_at is not None and received >= drop_at:
                    self.drop(False)
                if stall_at is not None and received >= stall_at:
                    stall_at = None
                    self.stall(path, b.get("stall_seconds", 3600))
                if received >= length:
                    break
                n = min(CHUNK, length - received)
                for limit in (drop_at, stall_at):
                    if limit is not None and limit > received:
                        n = min(n, limit - received)
                data = self.rfile.read(n)
                if not data:
                    raise Dropped()  # the client went away mid-body
                received += len(data)
                self.body_received = received
                with STATE.lock:
                    self.stats.bytes_received += len(data)
                if out is not None:
                    out.write(data)
            if out is not None:
                out.close()
                out = None
                os.replace(temporary, target)
        finally:
            if out is not None:
                out.close()
                os.unlink(temporary)

    def if_range_matches(self, if_range, etag, last_modified):
        value = if_range.strip()
        if value.startswith('"') or value.startswith("W/"):
            # Strong comparison: weak tags never match (RFC 9110 8.8.3.2).
            return etag is not None and not etag.startswith("W/") and value == etag
        return last_modified is not None and value == last_modified

    def count(self, n):
        with STATE.lock:
            self.stats.bytes_sent += n
        self.body_sent += n

    def write_body(self, data, chunked):
        # Counted before the write so that a client that has read the bytes sees them in
        # stats; a write that fails is taken back (bytes_sent = bytes handed to the kernel).
        self.count(len(data))
        try:
            if chunked:
                self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
            else:
                self.wfile.write(data)
        except OSError:
            self.count(-len(data))
            raise

    def stream(self, f, path, length, chunked, b):
        drop_at = None
        if "drop_after" in b and STATE.take(path, "drop", b.get("drop_times")):
            drop_at = b["drop_after"]
        stall_at = None
        if "stall_after" in b and STATE.take(path, "stall", b.get("stall_times")):
            stall_at = b["stall_after"]
        rate = b.get("rate")
        began = time.monotonic()
        sent = 0
        while True:
            if drop_at is not None and sent >= drop_at:
                self.drop(b.get("drop_rst", False))
            if stall_at is not None and sent >= stall_at:
                stall_at = None
                self.stall(path, b.get("stall_seconds", 3600))
            if sent >= length:
                break
            n = min(CHUNK, length - sent)
            for limit in (drop_at, stall_at):
                if limit is not None and limit > sent:
                    n = min(n, limit - sent)
            if rate:
                n = min(n, max(1, rate // 20))
            data = f.read(n)
            if not data:
                break  # file shrank under us; the client sees a short body
            self.write_body(data, chunked)
            sent += len(data)
            if rate:
                ahead = began + sent / rate - time.monotonic()
                if ahead > 0 and STOPPING.wait(ahead):
                    raise Dropped()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def stall(self, path, seconds):
        released = STATE.release_event(path)
        deadline = time.monotonic() + seconds
        while not released.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if STOPPING.wait(min(remaining, 0.05)):
                raise Dropped()

    def drop(self, rst):
        try:
            if rst:
                # SO_LINGER with a zero timeout makes close() send RST instead of FIN. The
                # fd is closed here because socketserver would shut it down (FIN) first.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                os.close(self.connection.detach())
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise Dropped()


def parse_parameters(header):
    """Splits `value; a="x"; b=y` into (value, {a: x, b: y}).

    Quoted strings end at the next `"`: as in the HTML spec's multipart encoding, `"` is
    sent as %22 and a backslash is an ordinary character.
    """
    value, _, rest = header.partition(";")
    params = {}
    rest = rest.strip()
    while rest:
        name, eq, rest = rest.partition("=")
        name = name.strip().lower()
        rest = rest.lstrip()
        if rest.startswith('"'):
            end = rest.find('"', 1)
            if end < 0:
                raise ValueError(f"unterminated quoted parameter {name}")
            params[name] = rest[1:end]
            rest = rest[end + 1:]
        else:
            raw, _, rest = rest.partition(";")
            params[name] = raw.strip()
            rest = ";" + rest if rest else ""
        rest = rest.strip()
        if rest.startswith(";"):
            rest = rest[1:].strip()
        elif rest:
            raise ValueError(f"junk after parameter {name}: {rest[:40]!r}")
    return value.strip().lower(), params


def save_multipart(body_path, content_type, stem, uploads):
    """Parses a stored multipart/form-data body strictly (RFC 7578, RFC 2046 5.1.1).

    Saves each file part as <stem>.parts/<filename> and returns {"fields": [[name, value]],
    "files": [{name, filename, content_type, size, saved}]}. Works on an mmap of the stored
    body, so files of any size are copied without being held in memory. Raises ValueError
    for a body that is not well-formed.
    """
    import mmap
    _, params = parse_parameters(content_type)
    boundary = params.get("boundary")
    if not boundary:
        raise ValueError("no boundary parameter")
    delimiter = b"--" + boundary.encode()
    fields, files = [], []
    with open(body_path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            raise ValueError("empty body")
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            if m[:len(delimiter)] != delimiter:
                raise ValueError("the body does not start with the boundary")
            pos = len(delimiter)
            while True:
                if m[pos:pos + 2] == b"--":
                    if m[pos + 2:pos + 4] != b"\r\n" or pos + 4 != len(m):
                        raise ValueError("the closing boundary is not followed by CRLF and the end")
                    break
                if m[pos:pos + 2] != b"\r\n":
                    raise ValueError(f"no CRLF after a boundary at byte {pos}")
                pos += 2
                header_end = m.find(b"\r\n\r\n", pos)
                if header_end < 0:
                    raise ValueError(f"part headers at byte {pos} never end")
                headers = {}
                for line in m[pos:header_end].split(b"\r\n"):
                    name, colon, value = line.decode("utf-8").partition(":")
                    if not colon:
                        raise ValueError(f"bad part header line {line[:60]!r}")
                    headers[name.strip().lower()] = value.strip()
                start = header_end + 4
                end = m.find(b"\r\n" + delimiter, start)
                if end < 0:
                    raise ValueError(f"the part at byte {pos} has no closing boundary")
                disposition, dparams = parse_parameters(headers.get("content-disposition", ""))
                if disposition != "form-data" or "name" not in dparams:
                    raise ValueError("a part without Content-Disposition: form-data; name=...")
                if "filename" in dparams:
                    folder = stem + ".parts"
                    os.makedirs(folder, exist_ok=True)
                    safe = os.path.basename(dparams["filename"]) or "unnamed"
                    saved = os.path.join(folder, safe)
                    with open(saved, "wb") as out:
                        for at in range(start, end, CHUNK):
                            out.write(m[at:min(at + CHUNK, end)])
                    files.append({"name": dparams["name"], "filename": dparams["filename"],
                                  "content_type": headers.get("content-type"),
                                  "size": end - start,
                                  "saved": os.path.relpath(saved, uploads)})
                else:
                    fields.append([dparams["name"], m[start:end].decode("utf-8")])
                pos = end + 2 + len(delimiter)
        finally:
            m.close()
    return {"fields": fields, "files": files}


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    global LOG_FILE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--log", help="request log file (default: stderr)")
    parser.add_argument("--uploads", help="where PUT and POST bodies are stored "
                        "(default: a new temporary folder)")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="exit when the parent process dies (a crashed test run)")
    args = parser.parse_args()
    if args.log:
        LOG_FILE = open(args.log, "a", buffering=1)

    if ":" in args.host:
        Server.address_family = socket.AF_INET6
    server = Server((args.host, args.port), Handler)
    server.root = os.path.realpath(args.root)
    if args.uploads:
        os.makedirs(args.uploads, exist_ok=True)
    server.uploads = os.path.realpath(args.uploads or tempfile.mkdtemp(prefix="faultserver-uploads-"))

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    if args.exit_with_parent:
        parent = os.getppid()

        def watch_parent():
            while not stop.wait(0.5):
                if os.getppid() != parent:
                    stop.set()
        threading.Thread(target=watch_parent, daemon=True).start()

    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    print(f"PORT {server.server_port}", flush=True)

    # The main thread only waits, so signal handlers run promptly.
    while not stop.wait(1.0):
        pass
    STOPPING.set()
    server.shutdown()
    server.server_close()
    with STATE.lock:
        sockets = list(STATE.sockets.values())
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    log("faultserver: stopped")
    sys.stdout.flush()
    # Handler threads are daemons; leave without waiting for stragglers.
    os._exit(0)


if __name__ == "__main__":
    main()
