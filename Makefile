# xdp-ratelimit: `make` builds everything into build/ (OUTPUT=DIR for another),
# `make test` runs every test suite, `make V=1` shows the commands. Debian
# packages: scripts/install-deps.sh. `make test-unit|test-prog|test-e2e T=NAME`
# runs only the tests NAME selects (CONTRIBUTING.md, "Running one test").
OUTPUT ?= build
# One spelling of the output directory however it is given (tests/ops runs
# `make install OUTPUT=$PWD/build`): the dependency files (-MMD) name each
# object as the rules do, or a header change would not rebuild the objects
# another spelling built.
override OUTPUT := $(patsubst $(CURDIR)/%,%,$(abspath $(OUTPUT)))
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
PKG_CONFIG ?= pkg-config
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

# x86_64 only: the program's cross-CPU reads rely on x86's memory order
# (doc/design/cpus.md); attach refuses other CPUs too. `make
# clean` works anywhere.
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/')
ifneq ($(ARCH),x86)
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
$(error xdp-ratelimit builds for x86_64 only: its cross-CPU counting relies on x86's memory order, and this machine is $(ARCH))
endif
endif
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# The sanitizer build lives in its own OUTPUT: set it before anything
# (INCLUDES, the object lists) expands OUTPUT.
CLEAN_DIR := $(OUTPUT)
CFLAGS ?= -O2 -g
ifeq ($(SANITIZE),1)
	CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
	LDFLAGS += -fsanitize=address,undefined
	override OUTPUT := $(OUTPUT)/sanitize
endif
INCLUDES := -Iinclude -Iuser -Itests -I$(OUTPUT)
# where the systemd unit reads its rules files (save --to-unit writes there)
CONFDIR ?= /etc/xdp-ratelimit
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -DRL_VERSION='"$(VERSION)"' \
	-DRL_CONF_DIR='"$(CONFDIR)"' $(INCLUDES)
# user/lib (libxdp-ratelimit.a) needs libxdp, libbpf, hiredis, libcrypto
# (the fleet values' HMAC-SHA256, user/lib/sync_value.c) and zlib (a
# kernel's gzipped config, user/lib/kernel_probe.c); the CLI
# adds libmicrohttpd (the exporter); trafficgen and the bench write their
# results with jansson.
LIB_PKGS := libxdp libbpf hiredis libcrypto zlib
LIB_LDLIBS := $(shell $(PKG_CONFIG) --libs $(LIB_PKGS) 2>/dev/null || \
	echo -lxdp -lbpf -lelf -lz -lhiredis -lcrypto) -lpthread
CLI_LDLIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd) \
	$(LIB_LDLIBS)
TOOL_LDLIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson) $(LIB_LDLIBS)

# -mcpu=v3: fetching atomics, the full barrier of the cross-CPU confirm step
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Iinclude $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH))

# BPF programs: NAME.bpf.o -> NAME.skel.h. ratelimit_test is the same
# source with a settable clock for BPF_PROG_TEST_RUN.
BPF_OBJS := $(OUTPUT)/ratelimit.bpf.o $(OUTPUT)/ratelimit_test.bpf.o $(OUTPUT)/xdp_probe.bpf.o \
	$(OUTPUT)/xdp_slot.bpf.o \
	$(patsubst tests/gen/%.bpf.c,$(OUTPUT)/%.bpf.o,$(wildcard tests/gen/*.bpf.c)) \
	$(patsubst bench/%.bpf.c,$(OUTPUT)/%.bpf.o,$(wildcard bench/*.bpf.c))
SKELS := $(BPF_OBJS:.bpf.o=.skel.h)

# user/lib: the library below the CLI (never prints, never exits; the
# program tests, trafficgen and the bench link only it). user/cli: the
# commands, views and rules files; the unit tests link both.
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(wildcard user/lib/*.c))
LIB := $(OUTPUT)/libxdp-ratelimit.a
CLI_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(filter-out user/cli/main.c,$(wildcard user/cli/*.c)))
CLI_LIB := $(OUTPUT)/libxdp-ratelimit-cli.a
CLI := $(OUTPUT)/xdp-ratelimit
UNIT := $(OUTPUT)/test_unit
CLI_TEST := $(OUTPUT)/test_cli
PROG := $(OUTPUT)/test_prog
GEN := $(OUTPUT)/trafficgen
HARNESS_OBJ := $(OUTPUT)/tests/harness.o
HOLD_OBJ := $(OUTPUT)/tests/xdp_hold.o
UNIT_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(wildcard tests/unit/*.c))
CLI_TEST_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(wildcard tests/cli/*.c))
PROG_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(wildcard tests/prog/*.c))
GEN_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(filter-out %.bpf.c,$(wildcard tests/gen/*.c)))
BENCH_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(filter-out %.bpf.c,$(wildcard bench/*.c)))
BENCH := $(if $(BENCH_OBJS),$(OUTPUT)/ratelimit-bench)
# libFuzzer harnesses: tests/fuzz/fuzz_NAME.c fuzzes user/lib/NAME.c
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -Werror -Iinclude -Iuser \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# the VM's multi.sh kills reloads at their commit point with it
KILL_SO := $(OUTPUT)/kill_at_swap.so
BINS := $(CLI) $(UNIT) $(CLI_TEST) $(PROG) $(if $(GEN_OBJS),$(GEN)) $(BENCH) $(FUZZERS) $(KILL_SO)

# make install: PREFIX (default /usr/local) and DESTDIR (a staging root)
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
MAN8 := $(wildcard doc/xdp-ratelimit.8)
UNITS := $(wildcard systemd/*.service)
# the unit's rules files live in CONFDIR; install puts only the example
# there, and never touches an IFACE.rules
CONF_EXAMPLE := systemd/IFACE.rules.example
INSTALLED := $(SBINDIR)/xdp-ratelimit $(BASHCOMPDIR)/xdp-ratelimit \
	$(patsubst systemd/%,$(UNITDIR)/%,$(UNITS)) \
	$(patsubst doc/%,$(MANDIR)/man8/%,$(MAN8)) \
	$(CONFDIR)/$(notdir $(CONF_EXAMPLE))

.PHONY: all deps test test-unit test-prog test-e2e test-vm test-doc test-stress test-fuzz fuzz valgrind \
	demo run bench clean install uninstall
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BINS)

deps:
	$(Q)scripts/install-deps.sh

test: all
	$(Q)tests/run.sh $(OUTPUT)

test-unit: $(UNIT) $(CLI_TEST)
	$(Q)$(UNIT) $(T) && $(CLI_TEST) $(T)

test-prog: $(PROG)
	$(Q)$(PROG) $(T)

test-e2e: all
	$(Q)tests/e2e/run.sh $(OUTPUT) $(T)

# Debian 12's own kernels (6.1 cloud, RT) booted in qemu: tests/vm/run.sh
test-vm: all
	$(Q)tests/vm/run.sh $(OUTPUT) $(T)

test-doc: $(CLI)
	$(Q)tests/doc/run.sh $(OUTPUT) $(T)

test-stress: all
	$(Q)tests/run.sh $(OUTPUT) stress

# short bounded fuzzing (as in make test); make fuzz: FUZZ_TIME seconds each
test-fuzz: $(FUZZERS)
	$(Q)tests/fuzz/run.sh $(OUTPUT)

fuzz: $(FUZZERS)
	$(Q)tests/fuzz/run.sh $(OUTPUT) long

valgrind: $(CLI) $(UNIT) $(CLI_TEST) $(if $(GEN_OBJS),$(GEN))
	$(Q)tests/valgrind.sh $(OUTPUT)

demo: all
	$(Q)scripts/demo.sh $(OUTPUT)

run: all
	$(Q)scripts/demo.sh $(OUTPUT) $(IFACE)

bench: all
	$(Q)bench/run.sh $(OUTPUT)

# the units name the binary and the rules files where they are installed
# (@SBINDIR@, @CONFDIR@)
install: $(CLI)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(CONFDIR) $(if $(MAN8),$(DESTDIR)$(MANDIR)/man8)
	$(Q)install -m 0755 $(CLI) $(DESTDIR)$(SBINDIR)/xdp-ratelimit
	$(Q)install -m 0644 completion/xdp-ratelimit.bash $(DESTDIR)$(BASHCOMPDIR)/xdp-ratelimit
	$(Q)$(foreach u,$(UNITS),sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@CONFDIR@|$(CONFDIR)|g' \
		$(u) > $(DESTDIR)$(UNITDIR)/$(notdir $(u)) && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$(notdir $(u)) &&) true
	$(Q)install -m 0644 $(CONF_EXAMPLE) $(DESTDIR)$(CONFDIR)/
	$(Q)$(if $(MAN8),install -m 0644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/)

# CONFDIR goes only when nothing but the example was in it
uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	$(Q)rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null || true

clean:
	$(call msg,CLEAN,$(CLEAN_DIR))
	$(Q)rm -rf $(CLEAN_DIR)

# make deb: a .deb of this build (not of a sanitizer build), what make
# install installs under Debian's paths, which pkg/deb/ wraps (control,
# docs, dependencies from dpkg-shlibdeps).
DEB_VERSION := $(VERSION)-1
DEB := $(OUTPUT)/xdp-ratelimit_$(DEB_VERSION)_amd64.deb
DEB_ROOT := $(OUTPUT)/deb/root
DEB_MAINTAINER ?= xdp-ratelimit maintainers <maintainers@xdp-ratelimit.example>
.PHONY: deb
deb: $(CLI)
ifeq ($(SANITIZE),1)
	$(error make deb packages the normal build: leave out SANITIZE=1)
endif
	$(call msg,DEB,$(DEB))
	$(Q)rm -rf $(DEB_ROOT)
	$(Q)$(MAKE) -s install OUTPUT=$(OUTPUT) DESTDIR=$(abspath $(DEB_ROOT)) PREFIX=/usr \
		UNITDIR=/lib/systemd/system
	$(Q)pkg/deb/build.sh $(DEB_ROOT) $(DEB) "$(DEB_VERSION)" "$(DEB_MAINTAINER)"

$(OUTPUT) $(OUTPUT)/user/lib $(OUTPUT)/user/cli $(OUTPUT)/tests/unit $(OUTPUT)/tests/cli $(OUTPUT)/tests/prog $(OUTPUT)/tests/gen $(OUTPUT)/bench:
	$(Q)mkdir -p $@

# One rule for every BPF object: bpf/, tests/gen/ and bench/ hold them.
# xdp_probe: whether freplace works (libxdp's dispatcher, user/lib/xdp_multi.c);
# xdp_slot: the stub the dispatcher runs, tail-calling the program.
vpath %.bpf.c bpf tests/gen bench
$(OUTPUT)/%.bpf.o: %.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# the same source with a clock the program tests set
$(OUTPUT)/ratelimit_test.bpf.o: bpf/ratelimit.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DRL_TEST_CLOCK -MMD -MP -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .bpf.o,,$(notdir $<)) > $@

# Every C object may include a skeleton: generate them first (order-only;
# -MMD records which it really includes).
$(OUTPUT)/%.o: %.c | $(SKELS) $(OUTPUT)/user/lib $(OUTPUT)/user/cli $(OUTPUT)/tests/unit $(OUTPUT)/tests/cli $(OUTPUT)/tests/prog $(OUTPUT)/tests/gen $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(CLI_LIB): $(CLI_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(CLI): $(OUTPUT)/user/cli/main.o $(CLI_LIB) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(CLI_LDLIBS) -o $@

$(UNIT): $(UNIT_OBJS) $(HARNESS_OBJ) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIB_LDLIBS) -lm -o $@

$(CLI_TEST): $(CLI_TEST_OBJS) $(HARNESS_OBJ) $(CLI_LIB) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(CLI_LDLIBS) -lm -o $@

$(PROG): $(PROG_OBJS) $(HARNESS_OBJ) $(HOLD_OBJ) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIB_LDLIBS) -o $@

$(GEN): $(GEN_OBJS) $(HOLD_OBJ) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(TOOL_LDLIBS) -o $@

$(OUTPUT)/fuzz_%: tests/fuzz/fuzz_%.c user/lib/%.c user/lib/%.h include/ratelimit.h | $(OUTPUT)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@

# a preload shim: no sanitizers (they would have to come first)
$(KILL_SO): tests/vm/kill_at_swap.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -std=gnu11 -shared -fPIC $< -ldl -o $@

$(OUTPUT)/ratelimit-bench: $(BENCH_OBJS) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(TOOL_LDLIBS) -lm -o $@

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/*/*.d $(OUTPUT)/*/*/*.d)

# main.c and cmd_save.c embed VERSION (RL_VERSION): rebuild them when it changes
$(OUTPUT)/user/cli/main.o $(OUTPUT)/user/cli/cmd_save.o: VERSION
