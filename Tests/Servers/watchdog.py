#!/usr/bin/env python3
"""Runs a test server and ends it, with its whole process group, when the test process ends.

usage: watchdog.py -- COMMAND [ARGS...]

stdin is the lifeline: the read end of a pipe whose only write end the test process holds.
It reaches EOF when the test process closes it or ends, however it ends (SIGKILL included).
Then every process of this process group (this watchdog, the server, anything the server
forked) gets SIGTERM, and SIGKILL 2 s later. The test process starts this in a process group
of its own, so the group is exactly the watchdog and the server.

The server runs with stdin from /dev/null and this process's stdout and stderr. The watchdog
exits with the server's status (128 + N when signal N ended it), so the test process sees the
server's end as this process's end. SIGTERM sent to the group reaches the server directly;
the watchdog only waits for it.
"""
import os
import signal
import subprocess
import sys
import threading
import time


def end_group():
    """SIGTERM to the whole group, then SIGKILL (which ends this process too)."""
    os.killpg(0, signal.SIGTERM)
    time.sleep(2)
    os.killpg(0, signal.SIGKILL)


def watch_lifeline():
    while True:
        try:
            if not os.read(0, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    end_group()


def main():
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: watchdog.py -- COMMAND [ARGS...]")
    # A handler rather than SIG_IGN: the server must not inherit an ignored SIGTERM.
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.signal(signal.SIGINT, lambda *_: None)
    server = subprocess.Popen(args, stdin=subprocess.DEVNULL, close_fds=True)
    threading.Thread(target=watch_lifeline, daemon=True).start()
    while True:
        try:
            status = server.wait()
            break
        except InterruptedError:
            continue
    sys.exit(128 - status if status < 0 else status)


if __name__ == "__main__":
    main()
