#!/bin/sh
# Installs, with apt-get, the Debian packages recce needs to build, test,
# demo and benchmark. Quick when everything is present: it asks dpkg first
# and only calls apt-get for what is missing.
set -eu

PACKAGES="
gcc make pkg-config perl binutils xz-utils procps man-db groff-base
libdw-dev libelf-dev elfutils libiberty-dev libzydis-dev g++ clang libc6-dbg
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libssl-dev libsqlite3-dev
libcmocka-dev libncurses-dev tmux libuv1-dev
erlang-base golang-go rustc libxml2-utils python3
linux-perf bpftool libbpf-dev debuginfod curl
valgrind chromium nodejs libjemalloc2 bpftrace openssh-server openssh-client
liblttng-ust-dev lttng-tools uftrace prometheus gdb strace sqlite3 clickhouse-server
postgresql redis-server
"

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

# The npm packages of the format tests (speedscope's importer and
# playwright-core), from tests/js's lockfile; offline once installed.
install_js()
{
	[ -d tests/js/node_modules/speedscope ] && [ -d tests/js/node_modules/playwright-core ] && return 0
	# Debian's nodejs leaves npm to a package of its own; other builds of
	# node bring it along.
	if ! command -v npm >/dev/null 2>&1; then
		[ "$(id -u)" -eq 0 ] || { echo "install-deps: npm is missing: run as root to install it" >&2; return 0; }
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm ||
			{ echo "install-deps: could not install npm: the format tests that need it will skip" >&2; return 0; }
	fi
	npm ci --prefix tests/js --no-audit --no-fund >/dev/null 2>&1 ||
		echo "install-deps: npm ci --prefix tests/js failed: the format tests that need it will skip" >&2
}

if [ -z "$missing" ]; then
	install_js
	exit 0
fi

echo "install-deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: these Debian packages are missing:$missing" >&2
	echo "install-deps: run this script as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
install_js
