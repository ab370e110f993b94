# recce's build. `make` builds ./recce; `make check` installs what is
# missing, builds and runs every test; `make demo` profiles the bundled
# example server; `make bench` compares recce with perf (never in check).

PREFIX ?= /usr/local
CC ?= cc
B ?= build
PKGS := libdw libelf libprotobuf-c zlib ncursesw openssl sqlite3 libbpf
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT ?= -O2
CFLAGS ?= $(OPT) -g
WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wundef
ifeq ($(WERROR),1)
WARN += -Werror
endif
SAN ?=
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -fno-omit-frame-pointer $(WARN) $(CFLAGS) $(SAN) \
	-Isrc -I$(B) $(PKG_CFLAGS)
LDLIBS = $(PKG_LIBS) -liberty -lZydis -lstdc++ -lpthread -lm

# src/ has one folder per layer (docs/internals.md); every .c in them but
# the entry point goes into one static library.
LAYERS := util symbols proc perf profile events inject sampling trace top writers patch store dump capture continuous remote tasks cli
SRCS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
CORE_OBJS := $(patsubst src/%.c,$(B)/%.o,$(filter-out src/cli/recce.c,$(SRCS))) \
	$(B)/profile.pb-c.o $(B)/agent.pb-c.o $(B)/help-pages.o $(B)/flame-viewer.o $(B)/page-html.o
DOCS := $(wildcard docs/recce*.md)
UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
TARGET_SRCS := $(wildcard tests/targets/*.c)
TARGET_BINS := $(patsubst tests/targets/%.c,$(B)/targets/%,$(TARGET_SRCS))
TARGET_CXX_SRCS := $(wildcard tests/targets/*.cpp)
TARGET_CXX_BINS := $(patsubst tests/targets/%.cpp,$(B)/targets/%,$(TARGET_CXX_SRCS))

.PHONY: all lib deps check check-loaded check-kernels check-smoke lint unit cli targets demo demo-seq demo-patch bench soak mutate asan asan-check fuzz fuzz-run fuzz-replay \
	install clean format
.DEFAULT_GOAL := all

MANS := $(patsubst docs/%.md,$(B)/man/%.1,$(DOCS))
VERSION := $(shell sed -n 's/^\#define RECCE_VERSION "\(.*\)"$$/\1/p' src/util/version.h)

all: recce lib $(MANS)

# Man pages from the same docs/ pages as --help.
$(B)/man/%.1: docs/%.md scripts/md-man.awk src/util/version.h
	@mkdir -p $(B)/man
	awk -v name=$* -v version=$(VERSION) -f scripts/md-man.awk $< > $@.tmp && mv $@.tmp $@

recce: $(B)/recce
	cp $< $@

$(B)/recce: $(B)/cli/recce.o $(B)/librecce-core.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/librecce-core.a: $(CORE_OBJS)
	rm -f $@
	ar rcs $@ $^

# librecce (lib/, include/recce.h), the library programs link to write
# events: position-independent, every symbol hidden but the API's, never
# unloaded (its thread-exit hook must outlive a dlclose).
LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(patsubst lib/%.c,$(B)/lib/%.o,$(LIB_SRCS))
# RECCE_NO_MACROS: the library defines the functions that recce.h's
# macros of the same names wrap.
LIB_CFLAGS = -std=gnu11 -D_GNU_SOURCE -DRECCE_NO_MACROS -fPIC -fvisibility=hidden \
	-fno-omit-frame-pointer $(WARN) $(CFLAGS) -Iinclude -Isrc
LIB_SONAME := librecce.so.0

lib: $(B)/lib/librecce.so $(B)/lib/librecce.a $(B)/lib/recce.pc $(B)/lib/librecce-fast.so \
	$(B)/lib/librecce-patch.so

$(B)/lib/%.o: lib/%.c include/recce.h lib/internal.h src/events/ring-format.h
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/lib/librecce.so: $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,-z,nodelete -Wl,--no-undefined -o $@ $^ -lpthread
	ln -sf librecce.so $(B)/lib/$(LIB_SONAME)

$(B)/lib/librecce.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

# librecce-fast.so, the library `recce trace --fast` loads into a running
# process: its recorder runs at the entry of the traced functions, so it
# touches no vector register (the calls' float arguments are in them).
# Never built with the sanitizers: it lives in programs built without.
FAST_CFLAGS = -std=gnu11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -mgeneral-regs-only \
	-fno-stack-protector -fno-omit-frame-pointer $(WARN) $(OPT) -g -Isrc

$(B)/lib/librecce-fast.so: lib/fast/fast.c lib/fast/alloc.c lib/fast/internal.h \
		src/inject/fast-format.h src/perf/alloc-format.h
	@mkdir -p $(@D)
	$(CC) $(FAST_CFLAGS) -shared -Wl,-z,nodelete -Wl,--no-undefined -o $@ \
		lib/fast/fast.c lib/fast/alloc.c -lpthread

# librecce-patch.so, the thunk `recce patch` puts between a patched
# function's callers and its replacement: assembly with its own unwind
# tables, needing nothing from the C library.
$(B)/lib/librecce-patch.so: lib/patch/thunk.S
	@mkdir -p $(@D)
	$(CC) -shared -nostdlib -Wl,-z,nodelete -Wl,-z,noexecstack -o $@ $<

$(B)/lib/recce.pc: scripts/recce.pc.in src/util/version.h
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(B)/profile.pb-c.c $(B)/profile.pb-c.h: proto/profile.proto | $(B)
	protoc-c --proto_path=proto --c_out=$(B) $<

$(B)/profile.pb-c.o: $(B)/profile.pb-c.c
	$(CC) $(ALL_CFLAGS) -Wno-shadow -c -o $@ $<

$(B)/agent.pb-c.c $(B)/agent.pb-c.h: proto/agent.proto | $(B)
	protoc-c --proto_path=proto --c_out=$(B) $<

$(B)/agent.pb-c.o: $(B)/agent.pb-c.c
	$(CC) $(ALL_CFLAGS) -Wno-shadow -c -o $@ $<

# The BPF programs, in BPF C (src/perf/bpf/), compiled by clang and
# embedded as libbpf skeletons that the perf layer includes.
# hits.bpf.c is built twice: hits-py with the Python frames of each hit.
BPF_SRCS := $(wildcard src/perf/bpf/*.bpf.c)
BPF_OBJS := $(patsubst src/perf/bpf/%.bpf.c,$(B)/perf/bpf/%.bpf.o,$(BPF_SRCS)) $(B)/perf/bpf/hits-py.bpf.o
BPF_SKELS := $(BPF_OBJS:.bpf.o=.skel.h)
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
BPF_CFLAGS = -O2 -g -Wall -target bpf -D__TARGET_ARCH_x86 \
	-I/usr/include/$(shell $(CC) -print-multiarch) -Isrc

BPF_HDRS := $(wildcard src/perf/bpf/*.h) src/perf/hit-format.h src/perf/alloc-format.h src/perf/py-format.h src/util/x86-regs.h

$(B)/perf/bpf/%.bpf.o: src/perf/bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	clang $(BPF_CFLAGS) -c -o $@ $<

$(B)/perf/bpf/hits-py.bpf.o: src/perf/bpf/hits.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	clang $(BPF_CFLAGS) -DHITS_PY -c -o $@ $<

$(B)/perf/bpf/%.skel.h: $(B)/perf/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_prog > $@.tmp && mv $@.tmp $@

$(B)/perf/uprobe-bpf.o $(B)/perf/alloc-bpf.o $(B)/perf/py-bpf.o $(B)/perf/pick-bpf.o: $(BPF_SKELS)

# The compiled programs stay, for llvm-objdump -d when one needs a look.
.SECONDARY: $(BPF_OBJS)

$(B)/help-pages.c: scripts/gen-help.sh scripts/md-text.awk $(DOCS) | $(B)
	sh scripts/gen-help.sh $(DOCS) > $@.tmp && mv $@.tmp $@

$(B)/%.o: src/%.c $(B)/profile.pb-c.h $(B)/agent.pb-c.h | $(B)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/help-pages.o: $(B)/help-pages.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The flamegraph viewer's script, a real .js file, embedded as a string.
$(B)/flame-viewer.c: scripts/embed-text.sh src/writers/flame-viewer.js | $(B)
	sh scripts/embed-text.sh flame_viewer_js src/writers/flame-viewer.js > $@.tmp && mv $@.tmp $@

$(B)/flame-viewer.o: $(B)/flame-viewer.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The profile page of agent --continuous and recce view, a real .html file.
$(B)/page-html.c: scripts/embed-text.sh src/writers/page.html | $(B)
	sh scripts/embed-text.sh page_html src/writers/page.html > $@.tmp && mv $@.tmp $@

$(B)/page-html.o: $(B)/page-html.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B):
	mkdir -p $(B)/tests $(B)/targets

-include $(wildcard $(B)/*.d $(B)/*/*.d)

# Unit tests (cmocka), one binary per tests/unit/test-*.c.
$(B)/tests/%: tests/unit/%.c $(B)/librecce-core.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/librecce-core.a $(LDLIBS) -lcmocka

# Test target programs: small, with frame pointers and debug info, at -O1
# and, for the record and trace tests again (tests/cli/opt-levels.t), at
# -O0 and -O2, as a user's build may be.
TARGET_FLAGS = -std=gnu11 -g -fno-omit-frame-pointer -fno-inline-functions-called-once -pthread
$(B)/targets/%: tests/targets/%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 $(TARGET_FLAGS) -o $@ $< -lm
# A caller that keeps a register across a call, as -O2 compiles it.
$(B)/targets/keeper: tests/targets/keeper.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O2 $(TARGET_FLAGS) -o $@ $<
$(B)/targets-O0/%: tests/targets/%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O0 $(TARGET_FLAGS) -o $@ $< -lm
$(B)/targets-O2/%: tests/targets/%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O2 $(TARGET_FLAGS) -o $@ $< -lm
# Code as LLVM emits it for size without frame pointers (clang, rustc):
# functions that leave by conditional and indirect jumps.
$(B)/targets/tails: tests/targets/tails.c | $(B)
	@mkdir -p $(@D)
	clang -Os -g -fomit-frame-pointer -o $@ $<
# C++ targets (exceptions, names), with the same flags; shop at -O2, where
# the compiler splits off .cold fragments and makes .constprop clones.
CXX_TARGET_OPT = -O1
$(B)/targets/shop: CXX_TARGET_OPT = -O2
$(B)/targets/%: tests/targets/%.cpp | $(B)
	@mkdir -p $(@D)
	$(CXX) $(CXX_TARGET_OPT) -g -fno-omit-frame-pointer -pthread -o $@ $<

# Programs that use librecce (ev-*): C against the static library, C++
# against the shared one, as programs of either kind link it.
$(B)/targets/ev-%: tests/targets/ev-%.c $(B)/lib/librecce.a include/recce.h | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 $(TARGET_FLAGS) -Iinclude -o $@ $< $(B)/lib/librecce.a -ldl
$(B)/targets/ev-%: tests/targets/ev-%.cpp $(B)/lib/librecce.so include/recce.h | $(B)
	@mkdir -p $(@D)
	$(CXX) -O1 -g -fno-omit-frame-pointer -pthread -Iinclude -o $@ $< -L$(B)/lib -lrecce \
		-Wl,-rpath,$(abspath $(B)/lib)

# Programs built against Debian's libuv1 (uv-*), as any libuv program is.
$(B)/targets/uv-%: tests/targets/uv-%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 $(TARGET_FLAGS) -o $@ $< -luv

# The replacements recce patch loads into the patchee targets.
FIX_SRCS := $(wildcard tests/targets/fixes/*.c tests/targets/fixes/*.cpp)
FIX_SOS := $(patsubst tests/targets/fixes/%,$(B)/targets/fixes/%.so,$(basename $(FIX_SRCS)))
$(B)/targets/fixes/%.so: tests/targets/fixes/%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 -g -fPIC -shared -o $@ $<
$(B)/targets/fixes/%.so: tests/targets/fixes/%.cpp | $(B)
	@mkdir -p $(@D)
	$(CXX) -O1 -g -fPIC -shared -o $@ $<

# Libraries the targets load themselves, linked for lazy binding as a
# distribution's libraries without -z now are.
LIB_SRCS := $(wildcard tests/targets/libs/*.c)
LIB_SOS := $(patsubst tests/targets/libs/%.c,$(B)/targets/libs/%.so,$(LIB_SRCS))
$(B)/targets/libs/%.so: tests/targets/libs/%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 -g -fPIC -shared -Wl,-z,lazy -o $@ $<

# A program with a private library of its own, found by its RUNPATH.
$(B)/targets/libs/libgreet.so: tests/targets/libs/libgreet.c | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 -g -fPIC -shared -Wl,-soname,libgreet.so -o $@ $<
$(B)/targets/needs: tests/targets/needs.c $(B)/targets/libs/libgreet.so | $(B)
	@mkdir -p $(@D)
	$(CC) -O1 $(TARGET_FLAGS) -o $@ $< -L$(B)/targets/libs -lgreet \
		-Wl,--enable-new-dtags,-rpath,'$$ORIGIN/libs'

# A few again at -O2 without frame pointers, as distributions build their
# packages, for the unwinder's check against libdwfl (tests/cli/
# record-nofp.t).
NOFP_FLAGS = -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -pthread
NOFP_BINS := $(addprefix $(B)/targets-nofp/,qsort threads sigspin throws qsort-lld stackfault spawner deep)
$(B)/targets-nofp/%: tests/targets/%.c | $(B)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(NOFP_FLAGS) -o $@ $< -lm
$(B)/targets-nofp/%: tests/targets/%.cpp | $(B)
	@mkdir -p $(@D)
	$(CXX) $(NOFP_FLAGS) -o $@ $<
# Linked by LLD, whose layout puts a segment's start in the page another
# ends in, mapped twice at two addresses.
$(B)/targets-nofp/%-lld: tests/targets/%.c | $(B)
	@mkdir -p $(@D)
	clang -std=gnu11 $(NOFP_FLAGS) -fuse-ld=lld -o $@ $< -lm

OPT_TARGET_BINS := $(filter-out $(B)/targets/ev-% $(B)/targets/uv-% $(B)/targets/needs,$(TARGET_BINS))
targets: $(TARGET_BINS) $(TARGET_CXX_BINS) $(FIX_SOS) $(LIB_SOS) $(B)/targets/hot-stripped $(B)/targets/hot-minidebug \
	$(B)/ratchet $(B)/targets/ratchet-ipa-ra $(B)/drive $(B)/fibchain lib $(NOFP_BINS) $(B)/bench/fleet-sim \
	$(subst /targets/,/targets-O0/,$(OPT_TARGET_BINS)) $(subst /targets/,/targets-O2/,$(OPT_TARGET_BINS))

# The same hot target without symbols or debug info, for the stripped test.
$(B)/targets/hot-stripped: $(B)/targets/hot
	strip -o $@ $<

# The same again with MiniDebugInfo, as Fedora ships its binaries: fully
# stripped, with an xz-compressed .gnu_debugdata section holding the
# symbols of the functions the dynamic table lacks (GDB's recipe).
$(B)/targets/hot-minidebug: $(B)/targets/hot
	@rm -rf $@.d && mkdir -p $@.d
	nm -D $< --format=posix --defined-only | awk '{ print $$1 }' | sort >$@.d/dynsyms
	nm $< --format=posix --defined-only | awk '$$2 ~ /^[TtD]$$/ { print $$1 }' | sort >$@.d/funcsyms
	comm -13 $@.d/dynsyms $@.d/funcsyms >$@.d/keep
	objcopy --only-keep-debug $< $@.d/debug
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$@.d/keep $@.d/debug $@.d/mini
	xz -f $@.d/mini
	strip --strip-all -R .comment -o $@.d/bin $<
	objcopy --add-section .gnu_debugdata=$@.d/mini.xz $@.d/bin $@
	@rm -rf $@.d

# The demo server names its source relative to the tree, as a release
# build would, so reports read examples/ratchet.c:LINE.
$(B)/ratchet: examples/ratchet.c | $(B)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -ffile-prefix-map=$(CURDIR)=. \
		-pthread -o $@ $<

# The same server as GCC compiles it by default, without -ffile-prefix-map:
# its callers keep values in registers across calls (-fipa-ra), for patch.
$(B)/targets/ratchet-ipa-ra: examples/ratchet.c | $(B)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -o $@ $<

# The fix that `make demo-patch` loads into the running server.
$(B)/fast-fibonacci.so: examples/fast-fibonacci.c | $(B)
	$(CC) -O2 -g -fPIC -shared -o $@ $<

# The three-process story of `make demo-seq`, with librecce.
$(B)/fibchain: examples/fibchain.c $(B)/lib/librecce.a include/recce.h | $(B)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -Iinclude -o $@ $< $(B)/lib/librecce.a -pthread

$(B)/drive: examples/drive.c | $(B)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -pthread -o $@ $<

# Fuzz targets (tests/fuzz/), one per reader of hostile input. `make fuzz`
# searches with libFuzzer (clang, ASan, UBSan) for FUZZ_SECONDS each,
# starting from the corpus in the tree; what it finds goes to
# build-fuzz/corpus and crashes to build-fuzz/crashes. `make check`
# replays every corpus input once under ASan and UBSan.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_SECONDS ?= 60
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined

$(B)/fuzz/%-replay: tests/fuzz/fuzz-%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(B)/librecce-core.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ tests/fuzz/fuzz-$*.c tests/fuzz/replay.c $(B)/librecce-core.a \
		$(LDLIBS)

$(B)/fuzz/%-fuzzer: tests/fuzz/fuzz-%.c tests/fuzz/fuzz.h $(B)/librecce-core.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz-$*.c $(B)/librecce-core.a \
		$(LDLIBS)

fuzz-replay: $(patsubst %,$(B)/fuzz/%-replay,$(FUZZ_NAMES))
	@set -e; for n in $(FUZZ_NAMES); do $(B)/fuzz/$$n-replay tests/fuzz/corpus/$$n; done

fuzz-run: $(patsubst %,$(B)/fuzz/%-fuzzer,$(FUZZ_NAMES))
	@set -e; for n in $(FUZZ_NAMES); do \
		mkdir -p $(B)/corpus/$$n $(B)/crashes/$$n; \
		echo "# fuzz-$$n for $(FUZZ_SECONDS) s"; \
		$(B)/fuzz/$$n-fuzzer -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(B)/crashes/$$n/ $(B)/corpus/$$n tests/fuzz/corpus/$$n \
			2>&1 | grep -E 'DONE|stat::number_of_executed|==[0-9]+==ERROR|SUMMARY|Test unit'; \
	done

fuzz: deps
	$(MAKE) B=build-fuzz CC=clang OPT=-O1 SAN="$(SAN_FLAGS) -fsanitize=fuzzer-no-link" fuzz-run

deps:
	@sh scripts/install-deps.sh

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "# $$t"; $$t; done

# The CLI tests run CLI_JOBS at a time (one more than JOBS: many wait on
# their targets' own clocks, and a third file takes the CPU two leave
# idle), the longest first; those named in
# tests/cli/serial.list run alone after them: they change or count what
# the whole machine shares (a sysctl, every BPF program, every process's
# samples, where a neighbour test's target would be counted too), or
# load it beyond what a neighbour can bear (inject-torture's storms of
# stops). Each file passes with other work beside it (check-loaded).
JOBS ?= 2
CLI_JOBS ?= $(shell expr $(JOBS) + 1)
CLI_SERIAL = $(addprefix tests/cli/,$(shell cat tests/cli/serial.list))
CLI_LONG = $(addprefix tests/cli/,opt-levels.t trace-events.t trace-fast.t \
	kernel-compat.t clickhouse.t events-model.t record-alloc-fast.t)
CLI_REST = $(filter-out $(CLI_LONG) $(CLI_SERIAL),$(sort $(wildcard tests/cli/*.t)))
cli: recce targets
	@rc=0; \
	B=$(B) prove -j$(CLI_JOBS) --timer $(CLI_LONG) $(CLI_REST) || rc=1; \
	B=$(B) prove --timer $(CLI_SERIAL) || rc=1; \
	exit $$rc

# Checks of the tree itself: the layering of src/, no unbounded string
# writes, and engines that print, exit, read the environment or poll only
# where the list says.
lint:
	@sh scripts/check-layers.sh
	@sh scripts/check-calls.sh
	@bash scripts/check-engines.sh
	@sh scripts/check-mutants.sh
	@sh scripts/check-skips.sh

# The same suite with every core kept busy by other work: green here is
# green on a real machine (never in check itself: it is check, loaded).
check-loaded:
	sh scripts/with-load.sh $(MAKE) check

# The kernel-compatibility suite here and in a VM on each of Debian 12's kernels.
check-kernels: all targets
	sh scripts/check-kernels.sh

# Its short form, in CI after check: the suite in a VM on Debian 12's 6.1.
check-smoke: all targets
	sh scripts/check-kernels.sh --smoke

# The builds run JOBS at a time too (the tree, then again under the
# sanitizers).
check: deps
	$(MAKE) lint
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) unit
	$(MAKE) -j$(JOBS) cli
	$(MAKE) -j$(JOBS) B=build-asan OPT=-O1 SAN="$(SAN_FLAGS)" TARGETS_B=$(B) asan-check

demo: deps
	$(MAKE) all $(B)/ratchet $(B)/drive
	sh scripts/demo.sh

# librecce's sequence tokens across three processes, drawn as Mermaid.
demo-seq: deps
	$(MAKE) all $(B)/fibchain
	B=$(B) sh scripts/demo-seq.sh

demo-patch: deps
	$(MAKE) all $(B)/ratchet $(B)/drive $(B)/fast-fibonacci.so
	B=$(B) sh scripts/demo-patch.sh

bench: deps
	$(MAKE) all $(B)/bench/fleet-sim
	B=$(B) sh bench/run.sh

# The fleet store's host simulator (bench/fleet-sim.c, for bench/fleet-store.sh).
$(B)/bench/fleet-sim: bench/fleet-sim.c $(B)/librecce-core.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/librecce-core.a $(LDLIBS)

# Small bugs put into a copy of the tree one at a time (tests/mutants/):
# every one must make a test fail. MUTANTS="a b" runs only those.
mutate: deps
	MUTATE_JOBS=$${MUTATE_JOBS:-$(JOBS)} sh scripts/mutate.sh

# Minutes, never in `make check`: 20 random SIGKILLs of each of trace,
# record and top (kill.t runs 2 in check), 20 runs and 20 SIGKILLs of
# patch and trace --fast in each thread state (inject-torture.t runs 2
# and 1), 5,000 random programs against librecce's ring model (200 in
# check) and 300 against trace --fast's (8 in check), the load tests, and
# an hour of the continuous agent beside programs coming and going.
soak: deps
	$(MAKE) all targets
	RECCE_KILLS=20 TORTURE_RUNS=20 TORTURE_KILLS=20 EVENTS_MODEL_CASES=5000 FAST_MODEL_CASES=300 \
		B=$(B) prove -v tests/cli/kill.t tests/cli/inject-torture.t tests/cli/events-model.t \
		tests/cli/fast-model.t tests/soak/load.t tests/soak/agent-memory.t

asan: deps
	$(MAKE) targets
	$(MAKE) B=build-asan OPT=-O1 SAN="$(SAN_FLAGS)" TARGETS_B=$(B) asan-check

# Under ASan and UBSan: the unit tests, every fuzz corpus, and the command
# line's error paths (tests/cli/errors-asan.list, the longest first,
# CLI_JOBS at a time) on the real binary. A CLI that exits at once leaks
# by design: leaks are not checked there. A sanitizer's report exits 86
# or 87, which no test expects of recce.
TARGETS_B ?= build
asan-check: unit fuzz-replay $(B)/recce $(B)/lib/librecce-fast.so $(B)/lib/librecce-patch.so
	ASAN_OPTIONS=detect_leaks=0:exitcode=86 UBSAN_OPTIONS=exitcode=87:print_stacktrace=1 \
		RECCE=$(B)/recce TARGETS=$(TARGETS_B)/targets B=$(B) \
		prove -j$(CLI_JOBS) --timer $$(sed 's|^|tests/cli/|' tests/cli/errors-asan.list)

install: recce lib $(MANS)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0644 include/recce.h $(DESTDIR)$(PREFIX)/include/recce.h
	install -m 0755 $(B)/lib/librecce.so $(DESTDIR)$(PREFIX)/lib/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(PREFIX)/lib/librecce.so
	install -m 0644 $(B)/lib/librecce.a $(DESTDIR)$(PREFIX)/lib/librecce.a
	install -d $(DESTDIR)$(PREFIX)/lib/recce
	install -m 0644 $(B)/lib/librecce-fast.so $(DESTDIR)$(PREFIX)/lib/recce/librecce-fast.so
	install -m 0644 $(B)/lib/librecce-patch.so $(DESTDIR)$(PREFIX)/lib/recce/librecce-patch.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' scripts/recce.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/recce.pc
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ]; then ldconfig; fi
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 $(MANS) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/doc/recce
	install -m 0755 recce $(DESTDIR)$(PREFIX)/bin/recce
	install -m 0644 $(DOCS) docs/librecce.md README.md $(DESTDIR)$(PREFIX)/share/doc/recce/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 contrib/recce.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/recce
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed -e 's|@PREFIX@|$(PREFIX)|' contrib/recce-agent.service.in \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/recce-agent.service
	sed -e 's|@PREFIX@|$(PREFIX)|' contrib/recce-agent-continuous.service.in \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/recce-agent-continuous.service
	install -d $(DESTDIR)$(PREFIX)/share/recce
	install -m 0644 contrib/agent.conf $(DESTDIR)$(PREFIX)/share/recce/agent.conf

format:
	clang-format -i src/*/*.c src/*/*.h src/perf/bpf/*.[ch] lib/*.[ch] lib/fast/*.[ch] include/*.h tests/unit/*.c tests/targets/*.c \
		tests/fuzz/*.[ch] examples/*.c

clean:
	rm -rf build build-asan build-fuzz recce
