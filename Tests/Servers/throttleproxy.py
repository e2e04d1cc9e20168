#!/usr/bin/env python3
"""A TCP proxy for syncr's integration tests that makes loopback look like the internet.

Forwards every connection accepted on 127.0.0.1 to --target-port, byte for byte (TLS and
HTTP/2 pass through untouched), and per connection:
  --rate BYTES      caps each direction of each connection at BYTES per second, as CDNs and
                    proxies throttle per connection (0: no cap). Reading stops while a
                    direction has more than a bounded amount queued, so the server is held
                    back by TCP flow control and memory stays bounded.
  --latency MS      delays every byte by MS milliseconds in each direction (the round trip
                    grows by 2*MS), without lowering the throughput.

Counts connections and writes the counts, as JSON, to --stats FILE (replaced atomically
whenever they change):
  {"accepted": total connections accepted, "open": open now, "max_open": most open at once}
A connection counts as closed as soon as either side closes or resets it. One thread
handles every socket, and in each round closes are handled before new connections are
accepted, so a client that closes one connection and then opens another is never seen
with both open.

Usage:  python3 throttleproxy.py --target-port N [--port 0] [--rate B] [--latency MS]
                                 [--stats FILE] [--exit-with-parent]
Prints "PORT <n>" on stdout once listening. Exits on SIGTERM or SIGINT, and with
--exit-with-parent also when the process that started it ends.
Python 3 standard library only.
"""

import argparse
import collections
import json
import os
import select
import signal
import socket
import time

CHUNK = 64 * 1024


class Direction:
    """One direction of one connection: bytes read from `src`, queued, written to `dst`."""

    def __init__(self, src, dst, rate, latency, bound):
        self.src = src
        self.dst = dst
        self.rate = rate
        self.latency = latency
        self.bound = bound
        self.queue = collections.deque()  # (due time, bytes)
        self.queued = 0
        self.eof = False
        self.shut = False
        self.next_send = 0.0  # the throttle: no byte leaves before this time
        self.blocked = False  # the last send would have blocked: wait for writability

    def wants_read(self):
        return not self.eof and self.queued < self.bound

    def read(self, now):
        """Reads all there is, up to the bound. Returns False when the connection is to be
        closed (reset or error).

        Reading on to the end matters for counting: a client that closes sends its last bytes
        (a TLS close_notify, an HTTP/2 GOAWAY) just before the close, and that close has to be
        seen in the same round, before a connection that the client opened after it is accepted.
        """
        while self.queued < self.bound:
            try:
                data = self.src.recv(CHUNK)
            except (BlockingIOError, InterruptedError):
                return True
            except OSError:
                return False
            if not data:
                self.eof = True
                return True
            self.queue.append((now + self.latency, data))
            self.queued += len(data)
        return True

    def due(self):
        """When the next byte may be sent (None: nothing queued)."""
        if not self.queue:
            return None
        return max(self.queue[0][0], self.next_send)

    def send(self, now):
        """Sends what is due and allowed. Returns False when the connection is to be closed."""
        while self.queue:
            due, data = self.queue[0]
            if due > now or self.next_send > now:
                break
            size = len(data)
            if self.rate:
                # At most 20 ms worth at a time, so the rate is smooth at every scale.
                size = min(size, max(1024, self.rate // 50))
            try:
                sent = self.dst.send(data[:size])
            except (BlockingIOError, InterruptedError):
                self.blocked = True
                return True
            except OSError:
                return False
            self.blocked = False
            if sent < len(data):
                self.queue[0] = (due, data[sent:])
            else:
                self.queue.popleft()
            self.queued -= sent
            if self.rate:
                self.next_send = max(self.next_send, now - 0.05) + sent / self.rate
        if self.eof and not self.queue and not self.shut:
            self.shut = True
            try:
                self.dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        return True


class Connection:
    def __init__(self, client, upstream, rate, latency):
        bound = max(256 * 1024, int(2 * rate * latency))
        self.client = client
        self.upstream = upstream
        self.up = Direction(client, upstream, rate, latency, bound)
        self.down = Direction(upstream, client, rate, latency, bound)
        self.counted = True  # still counted as open

    @property
    def directions(self):
        return (self.up, self.down)

    def finished(self):
        return all(d.shut for d in self.directions)

    def close(self):
        for s in (self.client, self.upstream):
            try:
                s.close()
            except OSError:
                pass


class Proxy:
    def __init__(self, args):
        self.target = (args.target_host, args.target_port)
        self.rate = args.rate
        self.latency = args.latency / 1000.0
        self.stats_file = args.stats
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((args.host, args.port))
        self.listener.listen(128)
        self.listener.setblocking(False)
        self.connections = []
        self.accepted = 0
        self.open = 0
        self.max_open = 0
        self.write_stats()

    def write_stats(self):
        if not self.stats_file:
            return
        temporary = self.stats_file + ".tmp"
        with open(temporary, "w") as f:
            json.dump({"accepted": self.accepted, "open": self.open, "max_open": self.max_open}, f)
        os.replace(temporary, self.stats_file)

    def uncount(self, conn):
        if conn.counted:
            conn.counted = False
            self.open -= 1
            self.write_stats()

    def drop(self, conn):
        self.uncount(conn)
        conn.close()
        self.connections.remove(conn)

    def settle_closes(self):
        """Stops counting the connections whose client has closed, whether or not the proxy
        has read what it sent before: a direction held back (rate cap, a full queue) does not
        read, so its end of file would wait behind the data. poll's POLLRDHUP sees the FIN at
        once."""
        poller = select.poll()
        by_fd = {}
        for conn in self.connections:
            if conn.counted:
                poller.register(conn.client, select.POLLRDHUP)
                by_fd[conn.client.fileno()] = conn
        for fd, events in poller.poll(0):
            if events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                self.uncount(by_fd[fd])

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            # A client that replaced a connection closed the old one first.
            self.settle_closes()
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setblocking(False)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.connections.append(Connection(client, upstream, self.rate, self.latency))
            self.accepted += 1
            self.open += 1
            self.max_open = max(self.max_open, self.open)
            self.write_stats()

    def step(self, limit):
        now = time.monotonic()
        readers, writers = [self.listener], []
        wake = now + limit
        for conn in self.connections:
            for d in conn.directions:
                if d.wants_read():
                    readers.append(d.src)
                if d.blocked:
                    writers.append(d.dst)
                elif d.due() is not None:
                    wake = min(wake, d.due())
        readable, writable, _ = select.select(readers, writers, [], max(0.0, wake - now))
        readable, writable = set(readable), set(writable)
        now = time.monotonic()
        # Closes first, then sends, then new connections (see the module docstring).
        for conn in list(self.connections):
            alive = True
            for d in conn.directions:
                if d.src in readable and d.wants_read():
                    alive = alive and d.read(now)
                if d.dst in writable:
                    d.blocked = False
            if not alive:
                self.drop(conn)
                continue
            if any(d.eof for d in conn.directions):
                self.uncount(conn)
            for d in conn.directions:
                if not d.blocked and not d.send(now):
                    alive = False
            if not alive or conn.finished():
                self.drop(conn)
        if self.listener in readable:
            self.accept()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--target-host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--rate", type=int, default=0, help="bytes/s per connection and direction")
    parser.add_argument("--latency", type=float, default=0, help="milliseconds added each way")
    parser.add_argument("--stats", help="file the connection counts are written to (JSON)")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="exit when the parent process dies (a crashed test run)")
    args = parser.parse_args()

    proxy = Proxy(args)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    parent = os.getppid()
    print(f"PORT {proxy.listener.getsockname()[1]}", flush=True)
    while not stopping:
        if args.exit_with_parent and os.getppid() != parent:
            break
        try:
            proxy.step(limit=0.5)
        except InterruptedError:
            pass
    for conn in proxy.connections:
        conn.close()
    proxy.listener.close()


if __name__ == "__main__":
    main()
