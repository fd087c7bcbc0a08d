/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The host's side of SYN cookies (xdp-ratelimit(8), SYN COOKIES): the
 * program answers SYNs with the kernel's own cookies, and the ACK that
 * returns one must become a connection of the host's listener. On 6.1 the
 * kernel's way is netfilter SYNPROXY, which checks the cookie with the
 * same secret, opens the connection to the listener and shifts sequence
 * numbers: one nft table per interface (rl_cookie_host_table), added when
 * a rule of the interface first has --syn-cookies on, removed by detach.
 * It only sees the ACKs the program passed for a valid cookie (they carry
 * RL_COOKIE_MARK_*, which no sender sets), so no other packet of the host
 * meets SYNPROXY.
 */
#ifndef RL_COOKIE_HOST_H
#define RL_COOKIE_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* The nft table of interface `iface`: "xdp_ratelimit_" and its name
 * (characters nft names lack as '_'). */
void rl_cookie_host_table(const char *iface, char *buf, size_t len);

/* Is the table there? */
bool rl_cookie_host_present(const char *iface);

/* Add the table for `iface`, offering `mss` and `wscale` (what the
 * program's SYN-ACKs offer): 1 when it was there already, 0 when added,
 * -errno with err saying why (nft missing, refused). */
int rl_cookie_host_add(const char *iface, __u16 mss, __u8 wscale, char *err,
		       size_t errlen);

/* Remove it: 0 when removed, 1 when there was none, -errno. */
int rl_cookie_host_del(const char *iface, char *err, size_t errlen);

/* What a cookie SYN-ACK offers on interface `ifindex`: the IPv4 MSS its
 * MTU allows and the window scale the host's listeners use (what
 * tcp_select_initial_window makes of net.ipv4.tcp_rmem and
 * net.core.rmem_max), which SYNPROXY keeps; the defaults when unreadable. */
void rl_cookie_opts(int ifindex, __u16 *mss, __u8 *wscale);

#endif /* RL_COOKIE_HOST_H */
