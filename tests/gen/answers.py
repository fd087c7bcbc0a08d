#!/usr/bin/env python3
# The host's answers, for the egress hook: TCP ACK segments from HOST to
# COUNT peers, sent out of IFACE with a packet socket (which goes through
# tc egress like any reply), so that each peer becomes verified without
# a real connection per peer (bench/run.sh "established").
# Usage: answers.py IFACE HOST FIRST_PEER COUNT [STEP_BITS]
#   IPv6 peer i is FIRST_PEER + i * 2^(128 - STEP_BITS) (default 64: one
#   per /64, as trafficgen --sources steps them); IPv4 peer i is FIRST + i.
#        answers.py --peer-frame DST_MAC PEER HOST
#   prints, in hex for trafficgen --hex, the peer's ACK segment on the
#   connection these answers name (PEER:40000 to HOST:80).
import ipaddress, socket, struct, sys

if sys.argv[1] == '--peer-frame':
    mac, peer, host = bytes.fromhex(sys.argv[2].replace(':', '')), sys.argv[3], sys.argv[4]
    p, h = ipaddress.ip_address(peer), ipaddress.ip_address(host)
    tcp = struct.pack('!HHIIBBHHH', 40000, 80, 1, 1, 5 << 4, 0x10, 65535, 0, 0)
    if p.version == 4:
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 0, 0, 64, 6, 0, p.packed, h.packed)
        fr = mac + bytes.fromhex('020000000001') + b'\x08\x00' + ip + tcp + bytes(6)
    else:
        ip = struct.pack('!IHBB16s16s', 6 << 28, 20, 6, 64, p.packed, h.packed)
        fr = mac + bytes.fromhex('020000000001') + b'\x86\xdd' + ip + tcp
    print(fr.hex())
    sys.exit(0)

iface, host, first, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
step_bits = int(sys.argv[5]) if len(sys.argv) > 5 else 64
h, p0 = ipaddress.ip_address(host), ipaddress.ip_address(first)
step = 1 if p0.version == 4 else 1 << (128 - step_bits)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
mac = s.getsockname()[4]
tcp = struct.pack('!HHIIBBHHH', 80, 40000, 1, 1, 5 << 4, 0x10, 65535, 0, 0)
for i in range(count):
    peer = ipaddress.ip_address(int(p0) + i * step)
    if p0.version == 4:
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 0, 0, 64, 6, 0, h.packed, peer.packed)
        eth = b'\xff' * 6 + mac + b'\x08\x00'
    else:
        ip = struct.pack('!IHBB16s16s', 6 << 28, 20, 6, 64, h.packed, peer.packed)
        eth = b'\xff' * 6 + mac + b'\x86\xdd'
    s.send(eth + ip + tcp)
