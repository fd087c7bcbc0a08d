// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit exporter --listen ADDR:PORT [--top N]: serve what
 * `stats --prometheus` prints at http://ADDR:PORT/metrics, with
 * libmicrohttpd. The socket is bound here, before anything is served, so
 * a bad or busy address fails at once with a message; only that address
 * is bound. Slow clients must not starve a scrape: each thread of a small
 * pool waits on its connections with epoll (a client that never finishes
 * its request holds a connection slot, never a thread), one address holds
 * at most PER_IP_CONNECTIONS of the MAX_CONNECTIONS slots, and a
 * connection idle for CONNECTION_TIMEOUT_S is dropped. One reading of the
 * maps serves every scrape of the next READ_INTERVAL_NS, so a burst of
 * scrapes costs one read. Runs until SIGINT or SIGTERM. Reads only, through
 * read-only map fds.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "cli/cli.h"
#include "cli/stats.h"
#include "lib/values.h"

#define DEFAULT_TOP		10
#define THREADS			4
#define MAX_CONNECTIONS		512	/* well below the 1024 fds systemd allows */
#define PER_IP_CONNECTIONS	16	/* a scraper needs one */
#define CONNECTION_TIMEOUT_S	5	/* a client idle this long is dropped */
#define READ_INTERVAL_NS	RL_NSEC_PER_SEC	/* a reading serves this long */
#define LISTEN_BACKLOG		128	/* where a scrape waits while every slot is taken */
#define LOG_BURST		10	/* the HTTP server's messages a minute */
#define LOG_PERIOD_NS		(60 * RL_NSEC_PER_SEC)
#define METRICS_PATH		"/metrics"
#define CONTENT_TYPE		"text/plain; version=0.0.4; charset=utf-8"

/* --listen: as given, and the address it names. */
struct listen_addr {
	const char *text;
	struct sockaddr_storage addr;
	socklen_t len;
};

struct exporter_args {
	struct listen_addr listen;
	__u64 top;
};

/* The last reading, as a response every scrape of its interval queues
 * (MHD counts the references: one is ours, one per connection sending it). */
struct exporter {
	const struct exporter_args *a;
	pthread_mutex_t lock;		/* one reader at a time; the others wait for it */
	struct MHD_Response *last;	/* NULL before the first reading */
	__u64 read_ns;			/* when it was taken (rl_now_ns) */
};

/* "198.18.0.1:9567", "[2001:db8::1]:9567": numeric only (no name to
 * resolve at boot), port 1 to 65535. */
static int parse_listen(const char *s, void *field, char *err, size_t errlen)
{
	struct listen_addr *l = field;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&l->addr;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&l->addr;
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2], why[RL_ERR_LEN];
	size_t hlen = colon ? (size_t)(colon - s) : 0;
	__u64 port;

	if (!colon || !hlen || hlen >= sizeof(host))
		goto bad;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (rl_parse_uint(colon + 1, "port", 1, 65535, &port, why, sizeof(why))) {
		snprintf(err, errlen, "'%s': %s", s, why);
		return -EINVAL;
	}
	memset(&l->addr, 0, sizeof(l->addr));
	l->text = s;
	if (host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) != 1)
			goto bad;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		l->len = sizeof(*v6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
		goto bad;
	v4->sin_family = AF_INET;
	v4->sin_port = htons((uint16_t)port);
	l->len = sizeof(*v4);
	return 0;
bad:
	snprintf(err, errlen, "bad address '%s': use ADDR:PORT with a numeric address, e.g. 127.0.0.1:9567 or [::1]:9567",
		 s);
	return -EINVAL;
}

static void exporter_defaults(void *cfg)
{
	((struct exporter_args *)cfg)->top = DEFAULT_TOP;
}

static int exporter_operands(struct rl_parser *p, void *cfg, int argc,
			     char **argv)
{
	(void)p;
	if (argc)
		return rl_usage_err("exporter: unexpected '%s': see 'xdp-ratelimit exporter --help'",
				    argv[0]);
	if (!((struct exporter_args *)cfg)->listen.text)
		return rl_usage_err("exporter: give the address to serve on: --listen ADDR:PORT, e.g. 127.0.0.1:9567");
	return 0;
}

/* The bound, listening socket, or -1 after saying why. */
static int listen_on(const struct exporter_args *a)
{
	int fd = socket(a->listen.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		rl_err("exporter: cannot create a socket: %s", strerror(errno));
		return -1;
	}
	/* a restart must not wait out TIME_WAIT; a live listener still
	 * makes bind fail (EADDRINUSE) */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::]:PORT is IPv6 only: the address given, nothing more */
	if (a->listen.addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->listen.addr, a->listen.len) ||
	    listen(fd, LISTEN_BACKLOG)) {
		int e = errno;

		close(fd);
		rl_err("exporter: cannot listen on %s: %s%s", a->listen.text, strerror(e),
		       e == EADDRINUSE ? " (is another exporter running? pick another port)" :
		       e == EADDRNOTAVAIL ? " (no interface here has that address: see 'ip addr')" : "");
		return -1;
	}
	return fd;
}

/* The metrics as stats --prometheus prints them, in a malloc'd buffer. */
static char *metrics(const struct exporter_args *a, size_t *len)
{
	struct rl_stats_opts o = { .prometheus = true, .top = a->top };
	struct rl_stats_snapshot *s = calloc(1, sizeof(*s));
	struct rl_stats_iface *views = calloc(RL_MAX_IFACES, sizeof(*views));
	struct rl_stats_view v = { .ifs = views };
	char *buf = NULL;
	FILE *f = NULL;
	int ret = -ENOMEM;

	*len = 0;
	if (s && views && (f = open_memstream(&buf, len))) {
		/* an interface that cannot be read is reported on stderr and
		 * left out; the others are served */
		(void)rl_stats_snapshot_read(&o, NULL, s);
		for (size_t i = 0; i < s->n; i++)
			views[i] = s->ifs[i].view;
		v.n = s->n;
		v.attached = s->attached;
		v.nattached = s->nattached;
		ret = rl_stats_print_prometheus(f, &v);
	}
	if (f && fclose(f) && !ret)
		ret = -ENOMEM;
	if (s)
		rl_stats_snapshot_free(s);
	free(s);
	free(views);
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* libmicrohttpd says a line for each connection refused or dropped: at
 * most LOG_BURST a minute, so that a flood of clients cannot flood the
 * log; how many were not shown is said with the next period's first. */
struct log_limit {
	pthread_mutex_t lock;
	__u64 since;
	unsigned int n, dropped;
};

static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct log_limit *l = cls;
	__u64 now = rl_now_ns();

	pthread_mutex_lock(&l->lock);
	if (now - l->since >= LOG_PERIOD_NS) {
		if (l->dropped)
			fprintf(stderr, "xdp-ratelimit: exporter: %u more messages of the HTTP server not shown\n",
				l->dropped);
		l->since = now;
		l->n = l->dropped = 0;
	}
	if (l->n < LOG_BURST) {
		l->n++;
		fputs("xdp-ratelimit: exporter: ", stderr);
		vfprintf(stderr, fmt, ap);	/* its own words, ending in \n */
	} else {
		l->dropped++;
	}
	pthread_mutex_unlock(&l->lock);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     const char *body)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)body,
						MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;	/* drops the connection */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A reading of the maps as a response, or NULL. */
static struct MHD_Response *read_metrics(const struct exporter_args *a)
{
	struct MHD_Response *r;
	size_t len;
	char *body = metrics(a, &len);

	if (!body)
		return NULL;
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return NULL;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE);
	return r;
}

/* The metrics: the last reading while it is younger than READ_INTERVAL_NS,
 * else a new one. Queued under the lock, so that a new reading cannot
 * release the one being queued. */
static enum MHD_Result serve_metrics(struct exporter *e, struct MHD_Connection *c)
{
	static const char failed[] = "xdp-ratelimit exporter: cannot read the metrics (see its log)\n";
	enum MHD_Result ret;
	__u64 now;

	pthread_mutex_lock(&e->lock);
	now = rl_now_ns();
	if (!e->last || now - e->read_ns >= READ_INTERVAL_NS) {
		struct MHD_Response *r = read_metrics(e->a);

		if (!r) {
			pthread_mutex_unlock(&e->lock);
			return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, failed);
		}
		if (e->last)
			MHD_destroy_response(e->last);	/* ours; queued ones stay */
		e->last = r;
		e->read_ns = now;
	}
	ret = MHD_queue_response(c, MHD_HTTP_OK, e->last);
	pthread_mutex_unlock(&e->lock);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **state)
{
	static const char not_found[] = "xdp-ratelimit exporter: the metrics are at " METRICS_PATH "\n";
	static const char bad_method[] = "xdp-ratelimit exporter: only GET and HEAD\n";

	(void)version, (void)upload, (void)upload_len, (void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, bad_method);
	if (strcmp(url, METRICS_PATH))
		return reply(c, MHD_HTTP_NOT_FOUND, not_found);
	return serve_metrics(cls, c);
}

static int exporter_run(void *cfg)
{
	struct exporter_args *a = cfg;
	struct exporter e = { .a = a, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct log_limit log = { .lock = PTHREAD_MUTEX_INITIALIZER,
				 .since = rl_now_ns() };
	struct MHD_Daemon *d;
	sigset_t stop;
	int fd, sig;

	/* blocked before the server's threads start, so they inherit it and
	 * only sigwait below takes the signals; a client gone mid-response
	 * must not kill us (MHD sends with MSG_NOSIGNAL; this is belt and
	 * braces) */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	fd = listen_on(a);
	if (fd < 0)
		return RL_EXIT_FAIL;
	/* epoll, not a thread per connection: a slow client costs a slot */
	d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0,
			     NULL, NULL, on_request, &e,
			     MHD_OPTION_EXTERNAL_LOGGER, on_log, &log,	/* first: for every message */
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)THREADS,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_IP_CONNECTIONS,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
			     MHD_OPTION_END);
	if (!d) {
		close(fd);
		return rl_fail("exporter: cannot start the HTTP server on %s", a->listen.text);
	}
	printf("serving http://%s%s\n", a->listen.text, METRICS_PATH);
	fflush(stdout);
	while (sigwait(&stop, &sig))
		;
	MHD_stop_daemon(d);	/* closes the listening socket too */
	if (e.last)
		MHD_destroy_response(e.last);
	return RL_EXIT_OK;
}

_Static_assert(DEFAULT_TOP == 10, "exporter --help states it");
_Static_assert(READ_INTERVAL_NS == RL_NSEC_PER_SEC, "exporter --help states it");

const struct rl_cmd rl_cmd_exporter = {
	.name = "exporter",
	.summary = "serve the counters to Prometheus over HTTP",
	.doc =
		"Serve what 'stats --prometheus' prints at http://ADDR:PORT/metrics until\n"
		"SIGINT or SIGTERM; the scrapes of one second share one reading of the\n"
		"maps. Binds only ADDR; a bad or busy address fails before anything is\n"
		"served. Every client that reaches ADDR:PORT sees the metrics, the busiest\n"
		"source addresses among them: listen on loopback, or restrict who connects.\n"
		"Reads only, through read-only map fds.\n",
	.opts = (const struct rl_opt[]){
		{ .name = "listen", .arg = "ADDR:PORT", .kind = RL_OPT_PARSE,
		  .parse = parse_listen, RL_OPT_FIELD(struct exporter_args, listen),
		  .help = "where to serve: a numeric IPv4 address, or IPv6 in\n"
		  "brackets, and a port (required)" },
		{ .name = "top", .arg = "N", .kind = RL_OPT_COUNT,
		  .max = RL_MAX_MAX_SOURCES, .note = "0: every source",
		  RL_OPT_FIELD(struct exporter_args, top), .help = "series for the N busiest sources per interface\n"
		  "(default 10; 0: every source, unbounded)" },
		{ 0 }
	},
	.notes =
		"Examples:\n"
		"  xdp-ratelimit exporter --listen 127.0.0.1:9567\n"
		"  xdp-ratelimit exporter --listen [2001:db8::1]:9567 --top 50\n"
		"  curl -s http://127.0.0.1:9567/metrics\n",
	.flags = RL_CMD_ROOT,
	.cfg_size = sizeof(struct exporter_args),
	.defaults = exporter_defaults,
	.operands = exporter_operands,
	.run = exporter_run,
};
