# shellcheck shell=bash
# Helpers shared by the scripts in scripts/. Source it; it defines functions
# and a few variables and runs nothing else.
#
#   ROOT          the repository root (absolute)
#   SERVICES_DIR  $ROOT/.services, where local servers keep pid files, logs, data

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck disable=SC2034 # used by the files that source this one
SERVICES_DIR="$ROOT/.services"

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# use_go puts the Go toolchain on PATH (it lives in /usr/local/go/bin on these
# machines, which a non-login shell may not have).
use_go() {
	case ":$PATH:" in
	*:/usr/local/go/bin:*) ;;
	*) [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH" ;;
	esac
	if [ -d "$HOME/go/bin" ]; then PATH="$PATH:$HOME/go/bin"; fi
	export PATH
	command -v go >/dev/null || die "go not found (expected /usr/local/go/bin/go)"
}

# ensure_commands CMD:PACKAGE... installs, with apt-get, the Debian package of
# every CMD that is not on PATH. apt-get update runs at most once per process.
_APT_UPDATED=""
ensure_commands() {
	local pair cmd pkg missing=()
	for pair in "$@"; do
		cmd="${pair%%:*}" pkg="${pair#*:}"
		if ! command -v "$cmd" >/dev/null 2>&1; then
			case " ${missing[*]-} " in *" $pkg "*) ;; *) missing+=("$pkg") ;; esac
		fi
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	apt_install "${missing[@]}"
}

# apt_install PACKAGE... installs Debian packages non-interactively.
apt_install() {
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || die "need root (or sudo) to install: $*"
		sudo=(sudo)
	fi
	command -v apt-get >/dev/null || die "apt-get not found; install by hand: $*"
	if [ -z "$_APT_UPDATED" ]; then
		log "apt-get update"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
			die "apt-get update failed"
		_APT_UPDATED=1
	fi
	log "apt-get install $*"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "$@" >/dev/null ||
		die "apt-get install $* failed"
}

# run_clean CMD... runs CMD with only fds 0-2 open, so a daemon it starts holds
# neither scripts/services' lock nor a caller's pipe. Start every server with it.
run_clean() {
	(
		for fd in /proc/"$BASHPID"/fd/*; do
			fd="${fd##*/}"
			if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
		done
		exec "$@"
	)
}

# wait_until SECONDS CMD... runs CMD every 0.1 s until it succeeds; fails after
# SECONDS.
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# port_open PORT: something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

port_closed() { ! port_open "$1"; }

# pid_alive PIDFILE NAME: the pid in PIDFILE is a live process whose command
# line contains NAME (so a recycled pid is not mistaken for ours).
pid_alive() {
	local pid
	[ -s "$1" ] || return 1
	pid="$(cat "$1")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"
}

# kill_pidfile PIDFILE NAME: TERM the process, wait up to 10 s, then KILL.
kill_pidfile() {
	local pid
	pid_alive "$1" "$2" || { rm -f "$1"; return 0; }
	pid="$(cat "$1")"
	kill "$pid" 2>/dev/null || true
	if ! wait_until 10 pid_gone "$pid"; then
		kill -9 "$pid" 2>/dev/null || true
		wait_until 5 pid_gone "$pid" || true
	fi
	rm -f "$1"
}

# pid_gone PID: no process has that pid any more.
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# env_line NAME VALUE prints an `export NAME=VALUE` line, single-quoting the
# value when it holds anything but plain characters.
env_line() {
	if [[ "$2" =~ ^[A-Za-z0-9_./:,@+=-]*$ ]]; then
		printf 'export %s=%s\n' "$1" "$2"
	else
		printf "export %s='%s'\n" "$1" "${2//\'/\'\\\'\'}"
	fi
}
