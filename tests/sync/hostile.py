#!/usr/bin/env python3
"""A hostile Redis for tests/sync/run.sh: what anyone who can write the
fleet's keys, but holds no fleet key, can do.

  hostile.py writer SOCK FLEET WRONGTYPE_KEY
      Until killed: every key of FLEET gets every field rewritten (counts
      of 2^32 - 1, negative text, the format before MACs, a MAC of another
      value, a value replayed from another field and from another key),
      fields of made-up hosts added, and WRONGTYPE_KEY planted as a list
      (a source's key of another type).
  hostile.py fake LISTEN TARGET
      A Redis that is not a cluster, on the Unix socket LISTEN, whose
      every answer to a key's command is "MOVED 1234 TARGET".
  hostile.py listen HOST PORT LOG
      A TCP listener that writes to LOG whatever reaches it (a redirected
      agent's AUTH would).
  hostile.py proxy LISTEN UPSTREAM DELAY FLAG
      A Unix-socket proxy to UPSTREAM that passes requests on at once and,
      while the file FLAG exists, trickles every reply back, one byte each
      DELAY seconds.

Only Unix sockets of the run: nothing goes on any network.
"""
import os
import socket
import sys
import threading
import time


def command(sock, *args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)
    return read_reply(sock.makefile("rb"))


def read_reply(f):
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b"-"):
        return rest
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        return data[:-2]
    if kind == b"*":
        n = int(rest)
        return [read_reply(f) for _ in range(max(n, 0))]
    raise ValueError("not RESP: %r" % line)


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def forged(field, value, other):
    """Values a keyless writer can make of a real one."""
    parts = value.split(b" ")
    start = parts[3] if len(parts) == 5 else b"%d" % (time.time_ns())
    mac = parts[4] if len(parts) == 5 else b"0" * 64
    yield b"x1 4294967295 4294967295 " + start + b" " + mac  # a count, MAC kept
    yield b"x1 -1 -1 " + start + b" " + mac                    # negative text
    yield b"4294967295 4294967295 " + start                    # no MAC
    yield b"x1 4294967295 4294967295 " + start + b" " + b"0" * 64
    if other:
        yield other                                             # replayed


def writer(path, fleet, wrongtype):
    s = connect(path)
    n = 0
    replay = None  # a real value of another key, replayed here
    while True:
        command(s, "DEL", wrongtype)
        command(s, "RPUSH", wrongtype, "not a hash")
        keys = command(s, "KEYS", "xrl:{%s|*" % fleet) or []
        for key in keys:
            if key == wrongtype.encode():
                continue
            h = command(s, "HGETALL", key)
            if not isinstance(h, list):
                continue
            pairs = list(zip(h[0::2], h[1::2]))
            for field, value in pairs:
                if b"/" not in field or field.startswith(b"hostile"):
                    continue
                for v in forged(field, value, replay):
                    command(s, "HSET", key, field, v)
                    # another host's field, and the next bucket's, with
                    # the value as is: a replay onto another host, bucket
                    host, _, bucket = field.rpartition(b":")
                    command(s, "HSET", key, b"hostile" + host + b":" + bucket, v)
                    command(s, "HSET", key, host + b":%d" % (int(bucket) + 1), value)
                replay = value
            # made-up hosts, far ahead and long ago
            now = time.time_ns()
            command(s, "HSET", key, "evil/x:%d" % n, "x1 1000000 1000000 %d %s" % (now, "a" * 64),
                    "evil/y:1", "x1 5 5 100000000 %s" % ("b" * 64),
                    "evil/z:%d" % (now // 1000), "x1 5 5 %d %s" % (now * 1000, "c" * 64))
        n += 1
        time.sleep(0.01)


def pipe(src, dst, delay, flag):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if delay and os.path.exists(flag):
                for i in range(len(data)):
                    dst.sendall(data[i:i + 1])
                    time.sleep(delay)
            else:
                dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def unix_server(path):
    """A Unix socket listening at path (a stale one replaced)."""
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    return srv


def proxy(listen, upstream, delay, flag):
    srv = unix_server(listen)
    while True:
        c, _ = srv.accept()
        u = connect(upstream)
        threading.Thread(target=pipe, args=(c, u, 0, flag), daemon=True).start()
        threading.Thread(target=pipe, args=(u, c, delay, flag), daemon=True).start()


def serve_fake(c, target):
    f = c.makefile("rb")
    try:
        while True:
            args = read_reply(f)
            name = args[0].upper() if args else b""
            if name == b"CLUSTER":
                c.sendall(b"-ERR This instance has cluster support disabled\r\n")
            elif name == b"PING":
                c.sendall(b"+PONG\r\n")
            elif name in (b"AUTH", b"SELECT"):
                c.sendall(b"+OK\r\n")
            else:
                c.sendall(b"-MOVED 1234 " + target.encode() + b"\r\n")
    except (OSError, ValueError, IndexError):
        pass
    c.close()


def fake(listen, target):
    srv = unix_server(listen)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve_fake, args=(c, target), daemon=True).start()


def listen(host, port, log):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(16)
    while True:
        c, _ = srv.accept()
        c.settimeout(1)
        with open(log, "ab") as out:
            out.write(b"connection\n")
            try:
                out.write(c.recv(65536))
            except OSError:
                pass
        c.close()


if __name__ == "__main__":
    if sys.argv[1] == "writer":
        writer(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "fake":
        fake(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "listen":
        listen(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "proxy":
        proxy(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    else:
        sys.exit("usage: hostile.py writer SOCK FLEET KEY | fake LISTEN TARGET |"
                 " listen HOST PORT LOG | proxy LISTEN UPSTREAM DELAY FLAG")
