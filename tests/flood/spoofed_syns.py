import struct, sys, random
# spoofed TCP SYN frames for tests/flood/run.sh: N4 IPv4 sources of
# 198.18.0.0/16 and N6 random IPv6 /64s of 2001:db8::/33, one frame each,
# the families interleaved, to DMAC, with correct checksums.
out, dmac, n4, n6 = sys.argv[1], bytes.fromhex(sys.argv[2].replace(':', '')), int(sys.argv[3]), int(sys.argv[4])
def fold(s):
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
def words(b):
    return sum(struct.unpack('!%dH' % (len(b) // 2), b))
head = dmac + bytes.fromhex('020000000001')
dst4, dst6 = bytes([198, 19, 1, 1]), bytes.fromhex('20010db8ffff00000000000000000001')
tcp0 = struct.pack('!HIIBBHHH', 8080, 0, 0, 5 << 4, 0x02, 64240, 0, 0)	# after sport
base4, base6 = words(tcp0) + words(dst4) + 6 + 20, words(tcp0) + words(dst6) + 6 + 20
ip4 = 0x4500 + 40 + 0x4006 + words(dst4)
rnd = random.Random(11)
def frame4(i):
    src = bytes([198, 18, i >> 8 & 255, i & 255])
    sport = 1024 + i % 60000
    sw = words(src)
    tcp = struct.pack('!H', sport) + tcp0[:14] + struct.pack('!H', fold(base4 + sw + sport)) + tcp0[16:]
    ip = struct.pack('!HHHHBBH4s4s', 0x4500, 40, 0, 0, 64, 6, fold(ip4 + sw), src, dst4)
    return head + b'\x08\x00' + ip + tcp + bytes(6)
def frame6(i):
    src = b'\x20\x01\x0d\xb8' + struct.pack('!IQ', rnd.getrandbits(31), 1)
    sport = 1024 + i % 60000
    tcp = struct.pack('!H', sport) + tcp0[:14] + struct.pack('!H', fold(base6 + words(src) + sport)) + tcp0[16:]
    return head + b'\x86\xdd' + struct.pack('!IHBB16s16s', 6 << 28, 20, 6, 64, src, dst6) + tcp
with open(out, 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    i4 = i6 = 0
    while i4 < n4 or i6 < n6:
        # keep the families in proportion all along
        fr = frame4(i4) if i6 >= n6 or (i4 < n4 and i4 * n6 <= i6 * n4) else frame6(i6)
        if fr[12:14] == b'\x08\x00':
            i4 += 1
        else:
            i6 += 1
        f.write(struct.pack('<IIII', 0, 0, len(fr), len(fr)) + fr)
