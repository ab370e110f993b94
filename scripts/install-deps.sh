#!/bin/sh
# Installs, with apt-get, the Debian packages recce needs to build, test,
# demo and benchmark. Quick when everything is present: it asks dpkg first
# and only calls apt-get for what is missing.
#
# With --kernels (make check-kernels), also qemu, a static busybox and
# Debian 12's current 6.1 kernel image, and its newest 6.12: each package
# is downloaded, not installed (this machine keeps booting its own
# kernel), and its kernel and the modules a VM needs to mount its root
# over 9p are kept in $RECCE_KERNELS (default
# /var/cache/recce/kernels/VERSION/). Another kernel joins the matrix as
# a directory there with its vmlinuz and those modules (modules/*.ko).
set -eu

KERNELS=0
[ "${1:-}" = --kernels ] && KERNELS=1

PACKAGES="
gcc make pkg-config perl binutils xz-utils procps man-db groff-base
libdw-dev libelf-dev elfutils libiberty-dev libzydis-dev g++ clang lld libc6-dbg
libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libssl-dev libsqlite3-dev
libcmocka-dev libncurses-dev tmux libuv1-dev
erlang-base golang-go rustc libxml2-utils python3
linux-perf bpftool libbpf-dev debuginfod curl
valgrind chromium nodejs libjemalloc2 bpftrace openssh-server openssh-client
liblttng-ust-dev lttng-tools uftrace prometheus gdb strace sqlite3 clickhouse-server
postgresql redis-server nginx systemd util-linux openjdk-17-jdk-headless
"
[ "$KERNELS" = 1 ] && PACKAGES="$PACKAGES qemu-system-x86 busybox-static"

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

# The modules a VM loads to mount this machine's root over virtio-9p.
KERNEL_MODULES="drivers/virtio/virtio drivers/virtio/virtio_ring
drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev
drivers/virtio/virtio_pci net/9p/9pnet net/9p/9pnet_virtio fs/netfs/netfs
fs/fscache/fscache fs/9p/9p"

# fetch_kernel PKG VERSION: the kernel and modules of PKG in $dir/VERSION.
fetch_kernel()
{
	[ -f "$dir/$2/vmlinuz" ] && return 0
	[ "$(id -u)" -eq 0 ] || { echo "install-deps: run as root to fetch $1" >&2; exit 1; }
	echo "install-deps: fetching $1 into $dir/$2"
	work=$(mktemp -d)
	(cd "$work" && apt-get download -q "$1" >/dev/null 2>&1) ||
		{ echo "install-deps: apt-get download $1 failed" >&2; rm -rf "$work"; exit 1; }
	dpkg-deb -x "$work"/*.deb "$work/root"
	mkdir -p "$dir/$2.new/modules"
	cp "$work/root/boot/vmlinuz-$2" "$dir/$2.new/vmlinuz"
	cp "$work/root/boot/config-$2" "$dir/$2.new/config"
	# Compressed modules made plain for busybox's insmod; one a kernel
	# builds in (or folds into another) is not there, and not needed.
	for m in $KERNEL_MODULES; do
		f=$work/root/lib/modules/$2/kernel/$m
		out=$dir/$2.new/modules/${m##*/}.ko
		if [ -f "$f.ko" ]; then
			cp "$f.ko" "$out"
		elif [ -f "$f.ko.xz" ]; then
			xz -dc "$f.ko.xz" >"$out"
		fi
	done
	rm -rf "$work" "$dir/$2"
	mv "$dir/$2.new" "$dir/$2"
}

# The kernels of the matrix: the 6.1 Debian 12's linux-image-amd64
# stands for today, and the newest 6.12 it offers beside it.
install_kernels()
{
	[ "$KERNELS" = 1 ] || return 0
	dir=${RECCE_KERNELS:-/var/cache/recce/kernels}
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
	if [ -z "$pkg" ]; then
		apt-get update -q >/dev/null
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-6\.1\.[0-9]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
	fi
	[ -n "$pkg" ] || { echo "install-deps: no Debian 6.1 kernel image is known to apt" >&2; exit 1; }
	fetch_kernel "$pkg" "${pkg#linux-image-}"
	pkg=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -n 1)
	if [ -n "$pkg" ]; then
		version=${pkg#linux-image-}
		fetch_kernel "$pkg" "${version%-unsigned}"
	fi
}

if [ -z "$missing" ]; then
	install_js
	install_kernels
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
install_kernels
