# Slow clients against the exporter (tests/ops/run.sh): 100 connections
# from one address and 100 from 100 addresses, each sending the start of a
# request and never the rest, then a real scrape with curl while they are
# open, then the wait (bounded) until the server has dropped them all.
# Usage: half_open.py HOST PORT PER_IP BODY_FILE (in the exporter's
# namespace, where 198.18.202.0/24 is local); prints one JSON line.
import json, select, socket, subprocess, sys, time

host, port, per_ip, body = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ONE = "198.18.202.200"
MANY = ["198.18.202.%d" % i for i in range(1, 101)]
BOUND_S = 5	# for the server to refuse what is over its limit

def half_open(src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    s.bind((src, 0))
    try:
        s.connect((host, port))
        s.sendall(b"GET /metr")
    except OSError:
        s.close()
        return None	# not even connected: counted as refused
    s.setblocking(False)
    return s

def closed(s):
    """The server closed (or reset) it: readable, and nothing but EOF."""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

one = [half_open(ONE) for _ in range(100)]
many = [half_open(src) for src in MANY]
sent = time.monotonic()
open_one = lambda: [s for s in one if s is not None and not closed(s)]
# those of ONE over the limit are closed right after accept
deadline = time.monotonic() + BOUND_S
while len(open_one()) > per_ip and time.monotonic() < deadline:
    time.sleep(0.05)
held_one = len(open_one())
held_many = len([s for s in many if s is not None and not closed(s)])

r = subprocess.run(["curl", "-s", "-o", body, "--max-time", "5", "-w", "%{http_code} %{time_total}",
                    "http://%s:%d/metrics" % (host, port)], capture_output=True, text=True)
code, took = (r.stdout.split() + ["0", "0"])[:2]

# then the idle ones are dropped by the server's timeout
held = [s for s in one + many if s is not None and not closed(s)]
deadline = time.monotonic() + 15
while held and time.monotonic() < deadline:
    time.sleep(0.1)
    held = [s for s in held if not closed(s)]
print(json.dumps({"held_one": held_one, "held_many": held_many, "curl": r.returncode,
                  "code": int(code), "seconds": float(took), "left": len(held),
                  "dropped_after": round(time.monotonic() - sent, 1)}))
