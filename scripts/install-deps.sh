#!/bin/sh
# Installs, with apt-get, the Debian packages recce needs to build, test,
# demo and benchmark. Quick when everything is present: it asks dpkg first
# and only calls apt-get for what is missing.
set -eu

PACKAGES="
gcc make pkg-config perl binutils procps
libdw-dev libelf-dev elfutils
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev
libcmocka-dev
erlang-base golang-go libxml2-utils
linux-perf
"

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

[ -z "$missing" ] && exit 0

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
