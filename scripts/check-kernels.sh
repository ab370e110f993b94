#!/bin/sh
# make check-kernels: the kernel-compatibility suite (tests/kernels/
# compat.sh) on this machine's kernel, then inside a VM on each kernel
# install-deps.sh --kernels keeps (Debian 12's current 6.1 and newest
# 6.12), one line per feature and kernel: works, falls back (to what),
# refused (with which message), or FAILS.
#
# The VM (qemu, emulated unless RECCE_VM_ACCEL says kvm) boots each
# kernel with a small initramfs: a static busybox loads the virtio and 9p
# modules, mounts this machine's root read-only over virtio-9p, a directory of results read-write, and runs
# the suite chrooted there with fresh /tmp, /run, cgroup2, tracefs and bpf
# mounts; a process of the suite that crashes there leaves its core in
# build/kernels/results. Exits 1 when a feature FAILS on any kernel or a VM
# never reported.
#
# --smoke (make check-smoke, which .ci/run runs after make check): the
# same suite in a VM on Debian 12's 6.1 only (five minutes here), not on
# this machine's kernel (make check's kernel-compat.t runs it there); a
# machine where that VM cannot start says so in one line and passes.
set -eu

SMOKE=0
[ "${1:-}" = --smoke ] && SMOKE=1

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
KERNELS=${RECCE_KERNELS:-/var/cache/recce/kernels}
W=$ROOT/build/kernels
TIMEOUT=${RECCE_VM_TIMEOUT:-1800}
[ $SMOKE = 1 ] && TIMEOUT=${RECCE_VM_TIMEOUT:-900}
# Emulated by default: a KVM nested where it is not offered whole can hang
# at boot (RECCE_VM_ACCEL=kvm where it works).
ACCEL=${RECCE_VM_ACCEL:-tcg}

sh scripts/install-deps.sh --kernels
rm -rf "$W"
mkdir -p "$W/results"

# The suite's Go program, built here: the VMs' root is read-only.
GO111MODULE=off GOFLAGS= GOCACHE="$W/gocache" GOPATH="$W/gopath" \
	go build -o "$W/goprof" tests/go/main.go
export RECCE_GO_TARGET="$W/goprof"

if [ $SMOKE = 0 ]; then
	echo "check-kernels: the suite on this machine's kernel ($(uname -r))"
	bash tests/kernels/compat.sh "$W/results/host.txt" >"$W/host.log" 2>&1
	VMS="$KERNELS/*/vmlinuz"
else
	VMS="$KERNELS/6.1.*/vmlinuz"
fi

status=0
for k in $VMS; do
	[ -f "$k" ] || { echo "check-kernels: no kernel in $KERNELS" >&2; exit 1; }
	kdir=${k%/vmlinuz}
	version=${kdir##*/}
	ir=$W/initramfs-$version
	mkdir -p "$ir/bin" "$ir/mods" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/root"
	cp /bin/busybox "$ir/bin/busybox"
	cp "$kdir"/modules/*.ko "$ir/mods/"
	cat >"$ir/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# Each module once those it needs are in: passes until none is left.
for pass in 1 2 3 4 5 6; do
	for m in /mods/*.ko; do insmod \$m 2>/dev/null && rm \$m; done
done
ls /mods/*.ko 2>/dev/null && echo "check-kernels: these modules would not load"
echo "check-kernels: the VM is up"
mount -t 9p -o trans=virtio,version=9p2000.L,ro root /root
mount -t 9p -o trans=virtio,version=9p2000.L,rw results /root/mnt
for d in proc sys dev; do mount --move /\$d /root/\$d; done
# A fresh /tmp, with the tree seen again at its path should it be under
# /tmp (a clone there, as CI may make).
chroot /root /bin/sh -c '
	mount -t tmpfs tmpfs /run && mkdir -p /run/tree && mount --bind "$ROOT" /run/tree &&
	mount -t tmpfs tmpfs /tmp && mkdir -p "$ROOT" && mount --bind /run/tree "$ROOT" &&
	mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm &&
	mount -t cgroup2 cgroup2 /sys/fs/cgroup &&
	echo +pids >/sys/fs/cgroup/cgroup.subtree_control &&
	mount -t tracefs tracefs /sys/kernel/tracing &&
	mount -t debugfs debugfs /sys/kernel/debug &&
	mount -t bpf bpf /sys/fs/bpf && ip link set lo up 2>/dev/null
	echo /mnt/core.$version.%e.%p >/proc/sys/kernel/core_pattern && ulimit -c unlimited
	cd "$ROOT" && RECCE_GO_TARGET=$W/goprof bash tests/kernels/compat.sh /mnt/$version.txt >/mnt/$version.log 2>&1'
poweroff -f
EOF
	chmod +x "$ir/init"
	(cd "$ir" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$W/initramfs-$version.gz"
	echo "check-kernels: booting $version in a VM"
	timeout "$TIMEOUT" qemu-system-x86_64 -machine accel="$ACCEL" -cpu max -m 2048 -smp 2 \
		-kernel "$k" -initrd "$W/initramfs-$version.gz" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1" -nographic -no-reboot -net none \
		-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$W/results",mount_tag=results,security_model=none \
		>"$W/vm-$version.console" 2>&1 </dev/null || true
	if [ ! -s "$W/results/$version.txt" ] && [ $SMOKE = 1 ] &&
		! grep -q 'check-kernels: the VM is up' "$W/vm-$version.console"; then
		echo "check-kernels: a VM cannot start here: $version never reached its init (its console: $W/vm-$version.console)"
	elif [ ! -s "$W/results/$version.txt" ]; then
		echo "check-kernels: $version: the VM did not report (its console: $W/vm-$version.console)"
		status=1
	fi
done

# The table: each feature, on this kernel and each VM's.
echo
for f in "$W"/results/*.txt; do
	[ -f "$f" ] || continue
	name=${f##*/}
	name=${name%.txt}
	[ "$name" = host ] && name="$(uname -r) (this machine)"
	echo "== $name"
	awk -F'|' '{ printf "  %-30s %-11s %s\n", $1, $2, $3 }' "$f"
	grep -q '|FAILS|' "$f" && status=1
done
for c in "$W"/results/core.*; do
	[ -f "$c" ] && echo "check-kernels: a crash's core: $c (gdb $ROOT/recce $c)"
done
exit $status
