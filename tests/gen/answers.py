#!/usr/bin/env python3
# The handshakes that verify peers, without a TCP stack: the host's
# SYN-ACK (sequence number ISN) from HOST to COUNT peers, sent out of IFACE
# with a packet socket (a local socket's segment: it goes through tc
# egress, where the hook records it, like the host's own), and each peer's
# ACK of ISN + 1 on that connection, which the XDP program takes as proof
# (bench/run.sh "established", tests/lib.sh send_answered_to).
# Usage: answers.py IFACE HOST FIRST_PEER COUNT [STEP_BITS]
#   the SYN-ACKs. IPv6 peer i is FIRST_PEER + i * 2^(128 - STEP_BITS)
#   (default 64: one per /64, as trafficgen --sources steps them); IPv4
#   peer i is FIRST + i.
#        answers.py --peer-acks IFACE DST_MAC HOST FIRST_PEER COUNT [STEP_BITS]
#   the peers' ACKs, sent out of IFACE (the peers' side) to DST_MAC.
#        answers.py --old-proof IFACE HOST FIRST_PEER COUNT [STEP_BITS]
#   ACKs instead of SYN-ACKs: what layout-8 programs took as proof (the
#   reload test's fixture of that layout).
#        answers.py --peer-frame DST_MAC PEER HOST
#   prints, in hex for trafficgen --hex, the peer's ACK on the connection
#   these handshakes name (PEER:40000 to HOST:80): the first one proves,
#   the next ones lie within the host's window.
import ipaddress, socket, struct, sys

ISN = 1000


def frame(dst_mac, src_mac, src, dst, sport, dport, seq, ack, flags):
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    tcp = struct.pack('!HHIIBBHHH', sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    if s.version == 4:
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 0, 0, 64, 6, 0, s.packed, d.packed)
        return dst_mac + src_mac + b'\x08\x00' + ip + tcp + bytes(6)
    ip = struct.pack('!IHBB16s16s', 6 << 28, 20, 6, 64, s.packed, d.packed)
    return dst_mac + src_mac + b'\x86\xdd' + ip + tcp


def peers(first, count, step_bits):
    p0 = ipaddress.ip_address(first)
    step = 1 if p0.version == 4 else 1 << (128 - step_bits)
    return [ipaddress.ip_address(int(p0) + i * step) for i in range(count)]


def packet_socket(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    return s, s.getsockname()[4]


if sys.argv[1] == '--peer-frame':
    mac = bytes.fromhex(sys.argv[2].replace(':', ''))
    print(frame(mac, bytes.fromhex('020000000001'), sys.argv[3], sys.argv[4],
                40000, 80, 1, ISN + 1, 0x10).hex())
elif sys.argv[1] == '--peer-acks':
    iface, mac, host, first, count = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], \
        int(sys.argv[6])
    s, own = packet_socket(iface)
    for p in peers(first, count, int(sys.argv[7]) if len(sys.argv) > 7 else 64):
        s.send(frame(bytes.fromhex(mac.replace(':', '')), own, str(p), host,
                     40000, 80, 1, ISN + 1, 0x10))
else:
    old = sys.argv[1] == '--old-proof'
    args = sys.argv[2:] if old else sys.argv[1:]
    iface, host, first, count = args[0], args[1], args[2], int(args[3])
    s, own = packet_socket(iface)
    for p in peers(first, count, int(args[4]) if len(args) > 4 else 64):
        s.send(frame(b'\xff' * 6, own, host, str(p), 80, 40000, ISN, 1,
                     0x10 if old else 0x12))
