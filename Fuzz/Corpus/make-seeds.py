#!/usr/bin/env python3
"""Writes the seed corpora for the fuzz targets (small, deterministic files).

Run from anywhere: python3 Fuzz/Corpus/make-seeds.py. The files are committed; this script only
says how they were made. The manifest seeds are written by hand in manifest/.
"""
import gzip, io, os, tarfile, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
T = (2024, 1, 2, 3, 4, 6)


def put(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


def zip_bytes(build, **kw):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", **kw) as z:
        build(z)
    return buf.getvalue()


def info(name, mode=None, method=zipfile.ZIP_STORED):
    i = zipfile.ZipInfo(name, T)
    i.compress_type = method
    if mode is not None:
        i.create_system = 3
        i.external_attr = mode << 16
    return i


# zip
put("zip", "empty.zip", zip_bytes(lambda z: None))
put("zip", "stored.zip", zip_bytes(lambda z: z.writestr(info("a.txt", 0o100644), b"hello\n")))
put("zip", "deflated.zip", zip_bytes(lambda z: z.writestr(info("d/b.txt", 0o100644, zipfile.ZIP_DEFLATED), b"abc" * 200)))
def tree(z):
    z.writestr(info("top/", 0o40755), b"")
    z.writestr(info("top/sub/", 0o40700), b"")
    z.writestr(info("top/sub/f", 0o100600, zipfile.ZIP_DEFLATED), b"data " * 50)
    z.writestr(info("top/link", 0o120777), b"sub/f")
    z.writestr(info("top/x.bin", 0o100755), bytes(range(64)))
put("zip", "tree.zip", zip_bytes(tree))
put("zip", "zip64.zip", zip_bytes(lambda z: z.writestr(info("big"), b"z" * 100, force_zip64=False) if False else
                                  z.open(info("big", 0o100644), "w", force_zip64=True).write(b"z" * 100)))
put("zip", "comment.zip", zip_bytes(lambda z: (setattr(z, "comment", b"a comment"), z.writestr(info("c"), b"c"))))
# A data descriptor (bit 3), as a streaming writer makes.
def streamed(z):
    with z.open(info("s.txt", 0o100644, zipfile.ZIP_DEFLATED), "w") as f:
        f.write(b"streamed " * 20)
raw = io.BytesIO()
class NoSeek(io.RawIOBase):
    def writable(self): return True
    def write(self, b): raw.write(b); return len(b)
with zipfile.ZipFile(NoSeek(), "w") as z:
    streamed(z)
put("zip", "descriptor.zip", raw.getvalue())


# tar
def tar_bytes(fmt, members, compress=False):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for m, data in members:
            t.addfile(m, io.BytesIO(data) if data is not None else None)
    data = buf.getvalue()
    # Drop tarfile's padding to a 10 KiB record: keep the two zero blocks that end the archive.
    body = data.rstrip(b"\0")
    data = body + b"\0" * ((-len(body)) % 512) + b"\0" * 1024
    return gzip.compress(data, mtime=0) if compress else data


def member(name, kind=tarfile.REGTYPE, data=b"", mode=0o644, link=""):
    m = tarfile.TarInfo(name)
    m.type, m.mode, m.mtime, m.linkname = kind, mode, 1700000000, link
    m.size = len(data) if kind == tarfile.REGTYPE else 0
    m.uname, m.gname = "u", "g"
    return (m, data if kind == tarfile.REGTYPE else None)


basic = [member("dir/", tarfile.DIRTYPE, mode=0o755), member("dir/a.txt", data=b"hello\n"),
         member("dir/l", tarfile.SYMTYPE, link="a.txt"), member("dir/h", tarfile.LNKTYPE, link="dir/a.txt")]
put("tar", "ustar.tar", tar_bytes(tarfile.USTAR_FORMAT, basic))
put("tar", "gnu-longname.tar", tar_bytes(tarfile.GNU_FORMAT, [member("d/" + "n" * 150, data=b"long")]))
put("tar", "pax.tar", tar_bytes(tarfile.PAX_FORMAT, [member("p/" + "\u00e9" * 120, data=b"pax data" * 10)]))
put("tar", "basic.tar.gz", tar_bytes(tarfile.USTAR_FORMAT, basic, compress=True))
put("tar", "fifo.tar", tar_bytes(tarfile.USTAR_FORMAT, [member("f", tarfile.FIFOTYPE), member("g", data=b"x")]))
# Two gzip members, as `cat a.gz b.gz` makes.
half = tar_bytes(tarfile.USTAR_FORMAT, [member("m", data=b"member" * 30)])
put("tar", "two-members.tar.gz", gzip.compress(half[:1024], mtime=0) + gzip.compress(half[1024:], mtime=0))


# HTTP: first byte picks the status (0 -> 200, 1 -> 206, 2 -> 416, 3 -> 429, 4 -> 503).
def head(status_index, text):
    return bytes([status_index]) + text.encode()

put("http", "ok", head(0, "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nAccept-Ranges: bytes\r\nETag: \"abc-123\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"))
put("http", "partial", head(1, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 100-199/1234\r\nContent-Length: 100\r\nETag: W/\"weak\"\r\n\r\n"))
put("http", "unsatisfied", head(2, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */1234\r\n\r\n"))
put("http", "retry-seconds", head(3, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 120\r\n\r\nslow down"))
put("http", "retry-date", head(4, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: Fri, 31 Dec 1999 23:59:59 GMT\r\n\r\n"))
put("http", "retry-rfc850", head(4, "Retry-After: Sunday, 06-Nov-94 08:49:37 GMT\n"))
put("http", "retry-asctime", head(4, "Retry-After: Sun Nov  6 08:49:37 1994\n"))
put("http", "redirect", head(5, "HTTP/1.1 301 Moved\r\nLocation: /x\r\nHTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n"))
put("http", "open-range", head(1, "Content-Range: bytes 0-0/*\nContent-Type: application/x-tar\n"))
