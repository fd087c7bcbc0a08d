# bash completion for xdp-ratelimit(8): commands and options come from the
# binary's own --help (so they follow its option tables), interfaces from
# the pins of attached ones (or /sys/class/net for attach), prefixes from
# `quota list`, banned addresses from `ban list`; files for
# --password-file and --fleet-key-file, the URL schemes for --redis. Installed as
# .../bash-completion/completions/xdp-ratelimit.
# shellcheck shell=bash

# The words of the usage line of "WORDS" (e.g. "quota set"): its options.
_xdp_ratelimit_options() {	# BIN WORDS...
	local bin=$1
	shift
	"$bin" "$1" --help 2>/dev/null | awk -v cmd="$*" '
		/^$/ { if (u) exit; next }
		/^(Usage:)? +xdp-ratelimit / || /^Usage: xdp-ratelimit / {
			u = 1
			line = $0
			sub(/^(Usage:)? *xdp-ratelimit +/, "", line)
			on = index(line " ", cmd " ") == 1
		}
		u && on {
			s = $0
			while (match(s, /\[--[a-z][a-z0-9-]*/)) {
				print substr(s, RSTART + 1, RLENGTH - 1)
				s = substr(s, RSTART + RLENGTH)
			}
		}'
	echo --help
}

# The commands (from --help's list), or the subcommands of GROUP (from
# the usage lines "xdp-ratelimit GROUP SUB ...").
_xdp_ratelimit_commands() {	# BIN [GROUP]
	if [ -n "${2:-}" ]; then
		"$1" "$2" --help 2>/dev/null | awk -v g="$2" '
			/^$/ { exit }
			{ sub(/^(Usage:)? +/, "") }
			$1 == "xdp-ratelimit" && $2 == g && $3 ~ /^[a-z]+$/ { print $3 }'
		return
	fi
	"$1" --help 2>/dev/null |
		awk '/^Commands:/ { c = 1; next } c && /^  [a-z]/ { print $1; next } c { exit }'
	echo help
}

_xdp_ratelimit_attached() {	# BIN: the first column of status's first table
	"$1" status 2>/dev/null | awk 'NR == 1 && $1 == "IFACE" { t = 1; next }
		t && NF == 0 { exit } t { print $1 }'
}

_xdp_ratelimit_prefixes() {	# BIN [IFACE]
	"$1" quota list --wide ${2:+--iface "$2"} 2>/dev/null | awk '$1 ~ /\// && !seen[$1]++ { print $1 }'
	echo default
}

_xdp_ratelimit_banned() {	# BIN [IFACE]: the ADDRESS column of ban list
	"$1" ban list --wide ${2:+--iface "$2"} 2>/dev/null |
		awk 'NF == 3 && $1 != "ADDRESS" { print $1 }'
	echo all
}

_xdp_ratelimit() {
	local bin=${COMP_WORDS[0]} cur prev words=() cmd="" sub="" iface="" i w
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	# IPv6 prefixes hold ':', which bash splits words at: join them back
	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n : cur prev
	fi
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-*) ;;
		*) [ "${COMP_WORDS[i - 1]}" = --iface ] && iface=$w ||
			words+=("$w") ;;
		esac
	done
	cmd=${words[0]:-}
	case $cmd in quota|ban) sub=${words[1]:-} ;; esac

	case $prev in
	--iface) mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_attached "$bin")" -- "$cur"); return ;;
	--mode) mapfile -t COMPREPLY < <(compgen -W "auto native generic" -- "$cur"); return ;;
	--proto) mapfile -t COMPREPLY < <(compgen -W "tcp udp icmp icmpv6" -- "$cur"); return ;;
	--sort) mapfile -t COMPREPLY < <(compgen -W "dropped-rate dropped passed rate" -- "$cur"); return ;;
	--password-file|--fleet-key-file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
	--redis) mapfile -t COMPREPLY < <(compgen -W "redis:// unix:///" -- "$cur"); compopt -o nospace 2>/dev/null; return ;;
	--listen|--window|--buckets|--verified-ttl|--priority|--default-pps|--default-bps|--max-sources|--ipv6-prefix|--pps|--bps|--aggregate-pps|--aggregate-bps|--new-pps|--new-bps|--ban|--burst|--dport|--top|--fleet|--interval|--redis-user)
		return ;;
	esac
	if [ -z "$cmd" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_commands "$bin") --help --version --verbose" -- "$cur")
		return
	fi
	if [[ $cmd == quota || $cmd == ban ]] && [ -z "$sub" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_commands "$bin" "$cmd") --help" -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_options "$bin" $cmd $sub)" -- "$cur")
		return
	fi
	case $cmd${sub:+ $sub} in
	attach) [ ${#words[@]} -eq 1 ] && mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur") ;;
	detach|reload) [ ${#words[@]} -eq 1 ] && mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_attached "$bin")" -- "$cur") ;;
	"quota set"|"quota del")
		[ ${#words[@]} -eq 2 ] &&
			mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_prefixes "$bin" "$iface")" -- "$cur") ;;
	"ban del")
		[ ${#words[@]} -eq 2 ] &&
			mapfile -t COMPREPLY < <(compgen -W "$(_xdp_ratelimit_banned "$bin" "$iface")" -- "$cur") ;;
	restore) [ ${#words[@]} -eq 1 ] && mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	esac
	if declare -F __ltrim_colon_completions >/dev/null; then
		__ltrim_colon_completions "$cur"
	fi
}
complete -F _xdp_ratelimit xdp-ratelimit
