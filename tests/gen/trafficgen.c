// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * trafficgen: UDP frames out of a (veth) device, as fast as one core can
 * or paced, for the e2e tests and benchmarks.
 *
 * No pktgen: BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES runs
 * trafficgen.bpf.c, whose XDP_TX sends each frame out of the device named
 * as ingress in the context (to a veth's peer, which receives it only with
 * an XDP program attached). `repeat` is the number of frames per call.
 *
 * Safety: every address the tool can put in a frame lies in the benchmark
 * ranges 198.18.0.0/15 or 2001:db8::/32, or it refuses to start.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "frames.h"
#include "lib/maps.h"
#include "xdp_hold.h"
#include "trafficgen.skel.h"

#define EXIT_USAGE		2
#define NSEC_PER_SEC		1000000000ULL

/* Frames per test run when not paced: ~4 ms at 15 Mpps, short enough that
 * --duration ends on time. */
#define TG_CHUNK		65536
/* Pages the kernel fills and flushes at a time (TEST_XDP_MAX_BATCH). */
#define TG_PAGE_BATCH		16
/* A live frame must fit one page after XDP_PACKET_HEADROOM, the kernel's
 * page head and skb_shared_info; the kernel refuses longer ones. */
#define TG_MAX_FRAME		3408
#define TG_MAX_VLAN_ID		4095
#define TG_DEFAULT_SEED		1
#define TG_DEFAULT_STEP_BITS	64	/* IPv6: one source per /64 */
#define TG_PACED_HZ		1000	/* default bursts per second */

#define TG_V4_NET		0xc6120000U	/* 198.18.0.0/15 */
#define TG_V4_PREFIX		15
#define TG_V6_NET		0x20010db8U	/* 2001:db8::/32 */

#define TG_DEFAULT_SRC4		"198.18.0.1"

struct tg_opts {
	const char *dev;
	const char *src;
	const char *dst;
	const char *hex;
	__u8 dst_mac[6];
	__u8 src_mac[6];
	bool have_dst_mac;
	bool have_src_mac;
	unsigned int nvlans;
	__u16 vlan[TG_MAX_VLANS];
	__u64 sources;
	bool random;
	bool shuffle;			/* --shuffle */
	bool tcp_syn;			/* --tcp-syn: TCP SYNs, not UDP */
	__u64 seed;
	unsigned int size;		/* 0: smallest that fits */
	__u64 count;			/* 0: no limit */
	double duration;		/* 0: no limit */
	__u64 rate;			/* 0: as fast as possible */
	__u64 burst;			/* 0: default */
	int cpu;			/* -1: not pinned */
	unsigned int step_bits;
	bool json;
	bool verbose;
	bool frame_opts;		/* any option --hex excludes */
};

struct tg_result {
	__u64 sent;
	double seconds;
};

static volatile sig_atomic_t stop;

static const char short_usage[] =
	"Usage: trafficgen --dev IFACE [--src ADDR] [--sources N] [--random | --shuffle]\n"
	"                  [--seed S]\n"
	"                  [--dst ADDR] [--dst-mac MAC] [--src-mac MAC] [--vlan ID]...\n"
	"                  [--size BYTES] [--ipv6-step-bits N] [--tcp-syn] [--hex FRAME]\n"
	"                  [--count N] [--duration SECONDS] [--rate PPS] [--burst N]\n"
	"                  [--cpu CPU] [--json] [--verbose]\n";

static void usage(void)
{
	printf("%s", short_usage);
	printf(
"\n"
"Send UDP frames (or TCP SYNs) out of IFACE with BPF_PROG_TEST_RUN live frames (XDP_TX).\n"
"The peer of a veth IFACE receives them only if it has an XDP program.\n"
"\n"
"Frame:\n"
"  --src ADDR          first source address (default " TG_DEFAULT_SRC4 "); its family\n"
"                      picks IPv4 or IPv6\n"
"  --sources N         cycle through N consecutive sources (default 1)\n"
"  --ipv6-step-bits N  IPv6: source i is ADDR + i * 2^(128-N): 64 (default) gives\n"
"                      one source per /64, 128 varies the lowest bits\n"
"  --random            pick each frame's source uniformly among the N\n"
"  --shuffle           visit each of the N sources once a pass, as --sources\n"
"                      does, but in a fixed pseudo-random order (from --seed)\n"
"                      rather than the addresses' order\n"
"  --seed S            seed of --random and --shuffle (default %d: runs repeat)\n"
"  --dst ADDR          destination (default " TG_DEFAULT_DST4 " or " TG_DEFAULT_DST6 ")\n"
"  --dst-mac MAC       default ff:ff:ff:ff:ff:ff\n"
"  --src-mac MAC       default IFACE's address\n"
"  --vlan ID           add a VLAN tag (0-4095), up to twice; with two, the first\n"
"                      is the outer 802.1ad tag, the second 802.1Q\n"
"  --size BYTES        frame length with Ethernet header, no FCS (default %d or\n"
"                      the headers, at most %d; a veth receiver drops frames\n"
"                      longer than its MTU + 18)\n"
"  --tcp-syn           TCP SYNs to port 80 instead of UDP (over IPv4 their TCP\n"
"                      checksum holds for the first source only)\n"
"  --hex FRAME         send this raw frame (hex digits, ':' or spaces allowed)\n"
"                      instead of building one; no frame options with it\n"
"\n"
"Sending (stops at the first limit reached, or at SIGINT/SIGTERM):\n"
"  --count N           frames to send\n"
"  --duration SECONDS  how long to send (decimal)\n"
"  --rate PPS          pace to PPS frames per second (default: full speed)\n"
"  --burst N           frames per test run; paced, each burst is due at\n"
"                      start + frames_sent / PPS (default PPS/%d, at least 1);\n"
"                      full speed, default %d\n"
"  --cpu CPU           pin to CPU (the receiver's XDP runs on the same CPU)\n"
"\n"
"Output:\n"
"  --json              {\"sent\": N, \"seconds\": T, \"pps\": X} instead of\n"
"                      \"sent N frames in T s (X Mpps)\"\n"
"  -v, --verbose       libbpf debug messages\n"
"\n"
"Addresses must lie in 198.18.0.0/15 or 2001:db8::/32 (all N sources, and\n"
"the IP addresses of a --hex frame); anything else is refused.\n"
"\n"
"Examples:\n"
"  trafficgen --dev veth0 --count 1000 --sources 10\n"
"  trafficgen --dev veth0 --src 2001:db8::1 --sources 4 --random --duration 2\n"
"  trafficgen --dev veth0 --vlan 100 --vlan 200 --rate 1000 --burst 10 --duration 2\n",
	       TG_DEFAULT_SEED, TG_MIN_FRAME, TG_MAX_FRAME, TG_PACED_HZ,
	       TG_CHUNK);
}

__attribute__((format(printf, 1, 2)))
static void err(const char *fmt, ...)
{
	va_list ap;

	fputs("trafficgen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int bad_usage(void)
{
	fprintf(stderr, "%sTry 'trafficgen --help'.\n", short_usage);
	return EXIT_USAGE;
}

static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- option parsing ---------------------------------------------------- */

static int parse_u64(const char *opt, const char *s, __u64 min, __u64 max,
		     __u64 *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || strchr(s, '-') || v < min || v > max) {
		err("%s: '%s' is not a number in [%llu, %llu]", opt, s,
		    (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* Upper bound keeps the nanosecond deadline inside 64 bits. */
	if (errno || end == s || *end || !(v > 0) || v > 1e9) {
		err("%s: '%s' is not a number of seconds in (0, 1e9]", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_mac(const char *opt, const char *s, __u8 mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2],
		   &b[3], &b[4], &b[5], &tail) != 6) {
		err("%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", opt, s);
		return -1;
	}
	for (i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

static int parse_args(int argc, char **argv, struct tg_opts *o)
{
	enum {
		OPT_SRC = 256, OPT_SOURCES, OPT_RANDOM, OPT_SEED, OPT_DST,
		OPT_DST_MAC, OPT_SRC_MAC, OPT_VLAN, OPT_SIZE, OPT_COUNT,
		OPT_DURATION, OPT_RATE, OPT_BURST, OPT_CPU, OPT_HEX,
		OPT_STEP_BITS, OPT_JSON, OPT_DEV, OPT_TCP_SYN, OPT_SHUFFLE,
	};
	static const struct option longopts[] = {
		{ "dev",		required_argument, NULL, OPT_DEV },
		{ "src",		required_argument, NULL, OPT_SRC },
		{ "sources",		required_argument, NULL, OPT_SOURCES },
		{ "random",		no_argument,	   NULL, OPT_RANDOM },
		{ "shuffle",		no_argument,	   NULL, OPT_SHUFFLE },
		{ "tcp-syn",		no_argument,	   NULL, OPT_TCP_SYN },
		{ "seed",		required_argument, NULL, OPT_SEED },
		{ "dst",		required_argument, NULL, OPT_DST },
		{ "dst-mac",		required_argument, NULL, OPT_DST_MAC },
		{ "src-mac",		required_argument, NULL, OPT_SRC_MAC },
		{ "vlan",		required_argument, NULL, OPT_VLAN },
		{ "size",		required_argument, NULL, OPT_SIZE },
		{ "count",		required_argument, NULL, OPT_COUNT },
		{ "duration",		required_argument, NULL, OPT_DURATION },
		{ "rate",		required_argument, NULL, OPT_RATE },
		{ "burst",		required_argument, NULL, OPT_BURST },
		{ "cpu",		required_argument, NULL, OPT_CPU },
		{ "hex",		required_argument, NULL, OPT_HEX },
		{ "ipv6-step-bits",	required_argument, NULL, OPT_STEP_BITS },
		{ "json",		no_argument,	   NULL, OPT_JSON },
		{ "verbose",		no_argument,	   NULL, 'v' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	__u64 v;
	int c;

	while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage();
			exit(0);
		case 'v':
			o->verbose = true;
			break;
		case OPT_DEV:
			o->dev = optarg;
			break;
		case OPT_SRC:
			o->src = optarg;
			o->frame_opts = true;
			break;
		case OPT_SOURCES:
			if (parse_u64("--sources", optarg, 1, UINT32_MAX, &o->sources))
				return -1;
			o->frame_opts = true;
			break;
		case OPT_RANDOM:
			o->random = true;
			o->frame_opts = true;
			break;
		case OPT_SHUFFLE:
			o->shuffle = true;
			o->frame_opts = true;
			break;
		case OPT_TCP_SYN:
			o->tcp_syn = true;
			o->frame_opts = true;
			break;
		case OPT_SEED:
			if (parse_u64("--seed", optarg, 0, UINT64_MAX, &o->seed))
				return -1;
			break;
		case OPT_DST:
			o->dst = optarg;
			o->frame_opts = true;
			break;
		case OPT_DST_MAC:
			if (parse_mac("--dst-mac", optarg, o->dst_mac))
				return -1;
			o->have_dst_mac = true;
			o->frame_opts = true;
			break;
		case OPT_SRC_MAC:
			if (parse_mac("--src-mac", optarg, o->src_mac))
				return -1;
			o->have_src_mac = true;
			o->frame_opts = true;
			break;
		case OPT_VLAN:
			if (o->nvlans == TG_MAX_VLANS) {
				err("--vlan: at most %d tags", TG_MAX_VLANS);
				return -1;
			}
			if (parse_u64("--vlan", optarg, 0, TG_MAX_VLAN_ID, &v))
				return -1;
			o->vlan[o->nvlans++] = v;
			o->frame_opts = true;
			break;
		case OPT_SIZE:
			if (parse_u64("--size", optarg, 1, TG_MAX_FRAME, &v))
				return -1;
			o->size = v;
			o->frame_opts = true;
			break;
		case OPT_COUNT:
			if (parse_u64("--count", optarg, 1, UINT64_MAX, &o->count))
				return -1;
			break;
		case OPT_DURATION:
			if (parse_seconds("--duration", optarg, &o->duration))
				return -1;
			break;
		case OPT_RATE:
			/* 1e9: one frame per nanosecond is past any rate here. */
			if (parse_u64("--rate", optarg, 1, NSEC_PER_SEC, &o->rate))
				return -1;
			break;
		case OPT_BURST:
			if (parse_u64("--burst", optarg, 1, INT_MAX, &o->burst))
				return -1;
			break;
		case OPT_CPU:
			if (parse_u64("--cpu", optarg, 0, CPU_SETSIZE - 1, &v))
				return -1;
			o->cpu = v;
			break;
		case OPT_HEX:
			o->hex = optarg;
			break;
		case OPT_STEP_BITS:
			if (parse_u64("--ipv6-step-bits", optarg, 1, 128, &v))
				return -1;
			o->step_bits = v;
			o->frame_opts = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		err("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!o->dev) {
		err("--dev is required");
		return -1;
	}
	if (o->hex && o->frame_opts) {
		err("--hex sends the frame as given: no --src, --dst, --sources, "
		    "--random, --shuffle, --tcp-syn, --ipv6-step-bits, --vlan, --size or MAC options");
		return -1;
	}
	if (o->random && o->shuffle) {
		err("--random and --shuffle are two orders: give one");
		return -1;
	}
	return 0;
}

/* ---- addresses and the safety rule ------------------------------------- */

static bool v4_allowed(__u32 a)
{
	return a >> (32 - TG_V4_PREFIX) == TG_V4_NET >> (32 - TG_V4_PREFIX);
}

static bool v6_allowed(const __u8 a[16])
{
	__u32 top = (__u32)a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];

	return top == TG_V6_NET;
}

static __u64 get_be64(const __u8 *p)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* Parse --src/--dst into spec and check the whole source range. */
static int setup_addresses(const struct tg_opts *o, struct tg_frame_spec *spec,
			   struct tg_settings *set)
{
	const char *src = o->src ? o->src : TG_DEFAULT_SRC4;
	const char *dst;
	__u64 last = o->sources - 1;

	if (inet_pton(AF_INET, src, spec->src) == 1) {
		__u32 base = ntohl(*(__u32 *)spec->src);

		spec->ipv6 = 0;
		if (!v4_allowed(base) || last > UINT32_MAX - base ||
		    !v4_allowed(base + last)) {
			err("--src %s with %llu sources leaves 198.18.0.0/15: refused",
			    src, (unsigned long long)o->sources);
			return -1;
		}
		set->v4_base = base;
	} else if (inet_pton(AF_INET6, src, spec->src) == 1) {
		unsigned int shift = 128 - o->step_bits;
		unsigned __int128 base, span, end;

		spec->ipv6 = 1;
		base = (unsigned __int128)get_be64(spec->src) << 64 |
		       get_be64(spec->src + 8);
		/* span = last << shift, refusing any bit shifted out. */
		span = (unsigned __int128)last << shift;
		end = base + span;
		if (!v6_allowed(spec->src) || span >> shift != last ||
		    end < base || (__u32)(end >> 96) != TG_V6_NET) {
			err("--src %s with %llu sources (step bit %u) leaves "
			    "2001:db8::/32: refused", src,
			    (unsigned long long)o->sources, o->step_bits);
			return -1;
		}
		set->shift = shift;
		set->v6_base_hi = base >> 64;
		set->v6_base_lo = (__u64)base;
	} else {
		err("--src: '%s' is not an IPv4 or IPv6 address", src);
		return -1;
	}

	dst = o->dst ? o->dst : spec->ipv6 ? TG_DEFAULT_DST6 : TG_DEFAULT_DST4;
	if (inet_pton(spec->ipv6 ? AF_INET6 : AF_INET, dst, spec->dst) != 1) {
		err("--dst: '%s' is not an %s address (the family of --src)",
		    dst, spec->ipv6 ? "IPv6" : "IPv4");
		return -1;
	}
	if (spec->ipv6 ? !v6_allowed(spec->dst) :
			 !v4_allowed(ntohl(*(__u32 *)spec->dst))) {
		err("--dst %s is outside %s: refused", dst,
		    spec->ipv6 ? "2001:db8::/32" : "198.18.0.0/15");
		return -1;
	}
	return 0;
}

/* ---- the frame ----------------------------------------------------------- */

static int get_dev_mac(const char *dev, __u8 mac[6])
{
	struct ifreq ifr = { 0 };
	int fd, ret = 0;

	/* ioctl, not /sys/class/net: sysfs may show another namespace. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		ret = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return ret;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex digits two per byte; ':', '-' and white space between bytes. */
static int parse_hex(const char *s, __u8 *buf, unsigned int *len)
{
	unsigned int n = 0;
	int hi, lo;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (*s) {
		if (*s == ':' || *s == '-' || *s == ' ' || *s == '\t' ||
		    *s == '\n') {
			s++;
			continue;
		}
		hi = hex_digit(s[0]);
		lo = hi < 0 ? -1 : hex_digit(s[1]);
		if (lo < 0) {
			err("--hex: bad hex digits at '%.8s'", s);
			return -1;
		}
		if (n == TG_MAX_FRAME) {
			err("--hex: frame longer than %d bytes", TG_MAX_FRAME);
			return -1;
		}
		buf[n++] = hi << 4 | lo;
		s += 2;
	}
	if (n < TG_ETH_HLEN) {
		err("--hex: %u bytes is shorter than an Ethernet header", n);
		return -1;
	}
	*len = n;
	return 0;
}

static __u16 get16(const __u8 *p)
{
	return p[0] << 8 | p[1];
}

/*
 * The safety rule for raw frames: every IP address the frame carries in
 * an IPv4, IPv6 or ARP header must be allowed. Non-IP frames and headers
 * too short to hold the addresses carry none and pass (tests need them).
 */
static int check_hex_frame(const __u8 *f, unsigned int len)
{
	unsigned int off = 12, i;
	__u16 proto = get16(f + off);

	/* Look through as many VLAN tags as the frame has. */
	while ((proto == TG_ETH_P_8021Q || proto == TG_ETH_P_8021AD) &&
	       off + TG_VLAN_HLEN + 2 <= len) {
		off += TG_VLAN_HLEN;
		proto = get16(f + off);
	}
	off += 2;
	if (proto == TG_ETH_P_IP && off + TG_IPV4_HLEN <= len) {
		for (i = 12; i <= 16; i += 4)
			if (!v4_allowed((__u32)f[off + i] << 24 |
					f[off + i + 1] << 16 |
					f[off + i + 2] << 8 | f[off + i + 3]))
				goto refuse;
	} else if (proto == TG_ETH_P_IPV6 && off + TG_IPV6_HLEN <= len) {
		if (!v6_allowed(f + off + 8) || !v6_allowed(f + off + 24))
			goto refuse;
	} else if (proto == TG_ETH_P_ARP && off + 28 <= len &&
		   get16(f + off + 2) == TG_ETH_P_IP && f[off + 5] == 4) {
		/* Sender and target protocol addresses, 4 bytes each. */
		for (i = 14; i <= 24; i += 10)
			if (!v4_allowed((__u32)f[off + i] << 24 |
					f[off + i + 1] << 16 |
					f[off + i + 2] << 8 | f[off + i + 3]))
				goto refuse;
	}
	return 0;
refuse:
	err("--hex: the frame has an address outside 198.18.0.0/15 and "
	    "2001:db8::/32: refused");
	return -1;
}

/* Fill frame/len and the program's settings; -1 is a usage error. */
static int setup_frame(const struct tg_opts *o, __u8 *frame, unsigned int *len,
		       struct tg_settings *set)
{
	struct tg_frame_spec spec = { 0 };

	if (o->hex) {
		set->mode = TG_MODE_FIXED;
		if (parse_hex(o->hex, frame, len) || check_hex_frame(frame, *len))
			return -1;
		return 0;
	}
	if (setup_addresses(o, &spec, set))
		return -1;
	spec.tcp_syn = o->tcp_syn;
	spec.size = tg_frame_size(o->size, o->nvlans, spec.ipv6);
	if (spec.size && o->tcp_syn && spec.size < tg_headers_len_tcp(o->nvlans, spec.ipv6))
		spec.size = o->size ? 0 : tg_headers_len_tcp(o->nvlans, spec.ipv6);
	if (!spec.size) {
		err("--size %u is shorter than the headers (%u bytes)", o->size,
		    o->tcp_syn ? tg_headers_len_tcp(o->nvlans, spec.ipv6) :
				 tg_headers_len(o->nvlans, spec.ipv6));
		return -1;
	}
	spec.nvlans = o->nvlans;
	memcpy(spec.vlan, o->vlan, sizeof(o->vlan));
	if (o->have_dst_mac)
		memcpy(spec.dst_mac, o->dst_mac, 6);
	else
		memset(spec.dst_mac, 0xff, 6);
	/* Without --src-mac, main fills in the device's once it is known. */
	memcpy(spec.src_mac, o->src_mac, 6);
	tg_build_frame(&spec, frame, set);
	set->ipv6 = spec.ipv6;
	set->nsources = o->sources;
	set->mode = o->random ? TG_MODE_RANDOM :
		    o->sources <= 1 ? TG_MODE_FIXED :
		    o->shuffle ? TG_MODE_SHUFFLE : TG_MODE_CYCLE;
	set->shuffle_bits = tg_shuffle_bits(o->sources);
	set->shuffle_key = (__u32)(o->seed * 0x9e3779b97f4a7c15ULL >> 32);
	*len = spec.size;
	return 0;
}

/* ---- sending ------------------------------------------------------------- */

/* Sleep until the absolute time t; false when a signal asked to stop. */
static bool sleep_until(__u64 t)
{
	struct timespec ts = {
		.tv_sec = t / NSEC_PER_SEC,
		.tv_nsec = t % NSEC_PER_SEC,
	};

	while (!stop) {
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == 0)
			return true;
	}
	return false;
}

struct tg_runner {
	int prog_fd;
	const __u8 *frame;
	unsigned int len;
	int ifindex;
};

/* Transmit n frames in one test run: 0, or a negative errno. */
static int run_batch(const struct tg_runner *r, __u64 n)
{
	struct xdp_md ctx = {
		.data_end = r->len,
		.ingress_ifindex = r->ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = r->frame,
		.data_size_in = r->len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = n,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.batch_size = TG_PAGE_BATCH,
	);
	int ret;

	/* Live frames leave retval unset: success is all there is. */
	ret = bpf_prog_test_run_opts(r->prog_fd, &opts);
	return ret ? -errno : 0;
}

/*
 * Send until --count, --duration or a signal. Paced, burst k is due at
 * start + frames_before_it / rate (absolute, so sleeping late never
 * drifts), and the run ends when the slot of its last burst does.
 */
static int send_frames(const struct tg_runner *r, const struct tg_opts *o,
		       struct tg_result *res)
{
	__u64 burst, start, end = UINT64_MAX, due, n, sent = 0;
	int ret = 0;

	if (o->burst)
		burst = o->burst;
	else if (o->rate)
		burst = o->rate / TG_PACED_HZ ?: 1;
	else
		burst = TG_CHUNK;

	start = rl_now_ns();
	if (o->duration)
		end = start + (__u64)(o->duration * NSEC_PER_SEC);
	while (!stop) {
		n = burst;
		if (o->count && o->count - sent < n)
			n = o->count - sent;
		if (!n)
			break;
		if (o->rate) {
			due = start + (unsigned __int128)sent * NSEC_PER_SEC /
				      o->rate;
			if (due >= end || !sleep_until(due))
				break;
		} else if (rl_now_ns() >= end) {
			break;
		}
		ret = run_batch(r, n);
		if (ret == -EINTR && stop) {
			/* Cut short by the signal: the kernel sent some of
			 * the batch, but the call failed, so none count. */
			ret = 0;
			break;
		}
		if (ret) {
			err("test run on %s: %s", o->dev, strerror(-ret));
			break;
		}
		sent += n;
	}
	if (!ret && o->rate) {
		due = start + (unsigned __int128)sent * NSEC_PER_SEC / o->rate;
		sleep_until(due < end ? due : end);
	}
	res->sent = sent;
	res->seconds = (rl_now_ns() - start) / (double)NSEC_PER_SEC;
	return ret;
}

/* splitmix64 of the seed, so that nearby seeds give unrelated sequences
 * and 0 is a seed like any other (it is xorshift's fixed point). */
static __u64 seed_state(__u64 seed)
{
	__u64 z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z ? z : 1;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int print_result(const struct tg_result *res, bool json)
{
	double pps = res->seconds > 0 ? res->sent / res->seconds : 0;
	json_t *obj;
	int ret;

	if (!json) {
		printf("sent %llu frames in %.3f s (%.3f Mpps)\n",
		       (unsigned long long)res->sent, res->seconds, pps / 1e6);
		return fflush(stdout) ? -1 : 0;
	}
	obj = json_pack("{s:I, s:f, s:f}", "sent", (json_int_t)res->sent,
			"seconds", res->seconds, "pps", pps);
	if (!obj)
		return -1;
	ret = json_dumpf(obj, stdout, JSON_REAL_PRECISION(9));
	json_decref(obj);
	if (ret || putchar('\n') == EOF || fflush(stdout))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct tg_opts o = {
		.sources = 1,
		.seed = TG_DEFAULT_SEED,
		.cpu = -1,
		.step_bits = TG_DEFAULT_STEP_BITS,
	};
	static __u8 frame[TG_MAX_FRAME];
	struct tg_settings set = { 0 };
	struct tg_result res = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct trafficgen *skel = NULL;
	struct tg_runner r = { .frame = frame };
	struct xdp_hold hold = { .link_fd = -1 };
	int ret = 1, e;

	if (parse_args(argc, argv, &o))
		return bad_usage();
	if (setup_frame(&o, frame, &r.len, &set))
		return EXIT_USAGE;
	verbose = o.verbose;
	libbpf_set_print(libbpf_print);

	r.ifindex = if_nametoindex(o.dev);
	if (!r.ifindex) {
		err("device %s: %s", o.dev, strerror(errno));
		goto out;
	}
	if (!o.hex && !o.have_src_mac) {
		e = get_dev_mac(o.dev, frame + TG_SRC_MAC_OFF);
		if (e) {
			err("device %s: reading its MAC address: %s", o.dev,
			    strerror(-e));
			goto out;
		}
	}
	if (o.cpu >= 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(o.cpu, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
			err("--cpu %d: %s", o.cpu, strerror(errno));
			goto out;
		}
	}

	skel = trafficgen__open_and_load();
	if (!skel) {
		err("loading the XDP program: %s", strerror(errno));
		goto out;
	}
	skel->bss->settings = set;
	skel->bss->state.rng = seed_state(o.seed);
	r.prog_fd = bpf_program__fd(skel->progs.trafficgen_xdp);
	/* paced runs are many short test runs: keep each one cheap */
	e = xdp_hold(&hold, r.prog_fd);
	if (e && verbose)
		fprintf(stderr, "trafficgen: not held in the XDP dispatcher (%s): runs cost more\n",
			strerror(-e));

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	e = send_frames(&r, &o, &res);
	if (print_result(&res, o.json)) {
		err("writing the result: %s", strerror(errno));
		goto out;
	}
	if (!e)
		ret = 0;
out:
	xdp_hold_release(&hold);
	trafficgen__destroy(skel);
	return ret;
}
