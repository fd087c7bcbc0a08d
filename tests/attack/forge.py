#!/usr/bin/env python3
# A blind forger: raw TCP segments with any source address, sent out of
# IFACE to DST_MAC with a packet socket. It never reads a socket, so it
# never learns a SYN-ACK's sequence number: every number it sends is a
# guess. Usage: forge.py IFACE DST_MAC MODE ARGS (addresses IPv4 or IPv6)
#   trick DST DPORT SRC...     per source: a SYN, then a segment outside
#                              the half-open connection's window, a second
#                              SYN with another sequence number, and an ACK
#                              of a guessed number (what makes Linux answer
#                              from the request socket)
#   acks SRC SPORT DST DPORT N N ACKs on that 4-tuple, numbers guessed
#   rst DST SRC...             per source: an ACK to DST:8080 with no
#                              connection, a SYN to closed port 9 (RSTs)
#   syn SRC SPORT DST DPORT    one SYN on that 4-tuple (a challenge ACK when
#                              it names an established connection)
#   udp DST N SRC...           N UDP datagrams of each source to DST:9999
#   flood DST DPORT ROUNDS SRC...  ROUNDS times over the sources: a SYN
#                              with a fresh sequence number and an ACK of a
#                              guessed one, as flood tools repeat addresses
import ipaddress, random, socket, struct, sys

FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def segment(src, dst, sport, dport, flags, seq, ack, proto=6):
    s, d = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    tcp = struct.pack('!HHIIBBHHH', sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                      5 << 4, flags, 65535, 0, 0)
    if proto == 17:
        tcp = struct.pack('!HHHH', sport, dport, 8 + 32, 0) + bytes(32)
    ck = 16 if proto == 6 else 6
    if s.version == 4:
        pseudo = s.packed + d.packed + struct.pack('!BBH', 0, proto, len(tcp))
        tcp = tcp[:ck] + struct.pack('!H', csum(pseudo + tcp)) + tcp[ck + 2:]
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 0, 0, 64, proto, 0,
                         s.packed, d.packed)
        ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
        return b'\x08\x00' + ip + tcp
    pseudo = s.packed + d.packed + struct.pack('!IxxxB', len(tcp), proto)
    tcp = tcp[:ck] + struct.pack('!H', csum(pseudo + tcp)) + tcp[ck + 2:]
    ip = struct.pack('!IHBB16s16s', 6 << 28, len(tcp), proto, 64, s.packed, d.packed)
    return b'\x86\xdd' + ip + tcp


iface, mac, mode, args = sys.argv[1], bytes.fromhex(sys.argv[2].replace(':', '')), \
    sys.argv[3], sys.argv[4:]
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
sock.bind((iface, 0))
eth = mac + sock.getsockname()[4]
send = lambda *a: sock.send(eth + segment(*a))
rnd = lambda: random.getrandbits(32)

if mode == 'trick':
    dst, dport = args[0], int(args[1])
    for src in args[2:]:
        sport, isn = random.randint(1024, 65535), rnd()
        send(src, dst, sport, dport, SYN, isn, 0)
        send(src, dst, sport, dport, ACK, isn + 1 + (1 << 30), rnd())
        send(src, dst, sport, dport, SYN, isn + 777777, 0)
        send(src, dst, sport, dport, ACK, isn + 1, rnd())
elif mode == 'acks':
    src, sport, dst, dport, n = args[0], int(args[1]), args[2], int(args[3]), int(args[4])
    for _ in range(n):
        send(src, dst, sport, dport, ACK, rnd(), rnd())
elif mode == 'rst':
    dst = args[0]
    for src in args[1:]:
        send(src, dst, random.randint(1024, 65535), 8080, ACK, rnd(), rnd())
        send(src, dst, random.randint(1024, 65535), 9, SYN, rnd(), 0)
elif mode == 'syn':
    send(args[0], args[2], int(args[1]), int(args[3]), SYN, rnd(), 0)
elif mode == 'udp':
    dst, n = args[0], int(args[1])
    for _ in range(n):
        for src in args[2:]:
            send(src, dst, 5353, 9999, 0, 0, 0, 17)
elif mode == 'flood':
    dst, dport, rounds = args[0], int(args[1]), int(args[2])
    for _ in range(rounds):
        for src in args[3:]:
            sport, isn = random.randint(1024, 65535), rnd()
            send(src, dst, sport, dport, SYN, isn, 0)
            send(src, dst, sport, dport, ACK, isn + 1, rnd())
else:
    sys.exit('forge.py: unknown mode ' + mode)
