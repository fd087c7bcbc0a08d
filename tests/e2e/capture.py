#!/usr/bin/python3
"""Print the kernel receive time (CLOCK_REALTIME, seconds) of every frame
from one IPv4 source that reaches IFACE's stack, i.e. that XDP passed:
packet sockets see a frame only after the XDP program let it through.

Usage: capture.py IFACE SRC_ADDR SECONDS READY_FILE
Creates READY_FILE once it listens, prints one time per line at the end.
"""
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4

iface, src, secs, ready = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
want = socket.inet_aton(src)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind((iface, 0))
open(ready, "w").close()
end = time.monotonic() + secs
times = []
while True:
    left = end - time.monotonic()
    if left <= 0:
        break
    s.settimeout(left)
    try:
        data, anc, _flags, addr = s.recvmsg(256, 64)
    except socket.timeout:
        break
    # untagged IPv4 from SRC only (the kernel strips a single VLAN tag)
    if addr[2] == PACKET_OUTGOING or len(data) < 34 or data[12:14] != b"\x08\x00":
        continue
    if data[26:30] != want:
        continue
    t = None
    for level, kind, val in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", val[:16])
            t = sec + nsec / 1e9
    times.append(t if t is not None else time.time())
for t in times:
    print(f"{t:.6f}")
