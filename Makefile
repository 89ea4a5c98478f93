# ros2_pulse: `make demo` runs the simulated robot under the probe; `make test` runs every test.
SHELL := /bin/bash
.DEFAULT_GOAL := build

BUILD   := build
BIN     := $(BUILD)/bin
LIB     := $(BUILD)/lib
OBJ     := $(BUILD)/obj
GO      ?= go
CC      ?= gcc
VERSION ?= $(shell cat VERSION)

CWARN   := -std=c11 -Wall -Wextra -Werror
comma   := ,
PROBE_CFLAGS := $(CWARN) -O2 -g -fPIC -fvisibility=hidden -ftls-model=initial-exec -Iprobe/include
PROBE_SRC := probe/src/core.c probe/src/table.c probe/src/config.c probe/src/init.c probe/src/topics.c probe/src/clock.c probe/src/callbacks.c probe/src/qos.c probe/src/services.c probe/src/links.c probe/src/bytes.c probe/src/symbols.c probe/src/segment_writer.c
PROBE_HDR := $(wildcard probe/src/*.h probe/include/ros2_pulse/*.h)
SIM_CFLAGS := $(CWARN) -Wno-unused-parameter -O2 -g -Iprobe/include -Isim/simgraph -Isim/rcl -Isim/rosidl
DISTROS := humble jazzy kilted
distro_num = $(if $(filter humble,$1),1,$(if $(filter jazzy,$1),2,3))

PULSE_LIB   := $(LIB)/libros2_pulse.so
NULL_LIB    := $(LIB)/libros2_pulse_null.so
FAULT_LIB   := $(LIB)/fault/libros2_pulse.so
TICKS_LIB   := $(LIB)/ticks/libros2_pulse.so
SIM_LIBS    := $(foreach d,$(DISTROS),$(LIB)/sim/$(d)/libtracetools.so $(LIB)/sim/$(d)/librcl.so $(LIB)/sim/$(d)/librosidl_runtime_c.so \
                 $(LIB)/sim/$(d)/libsim_msgs__rosidl_typesupport_introspection_c.so $(LIB)/sim/$(d)/libsim_msgs__rosidl_typesupport_introspection_cpp.so)
SIMGRAPH    := $(BIN)/simgraph
ABI_DUMP    := $(BIN)/abi_dump
PULSE       := $(BIN)/pulse

.PHONY: build probe sim pulse bridge demo bench soak screenshots test test-ros test-ros-short bench-ros test-lanes test-go test-c test-prom test-python deps test-integration fuzz sanitize sanitize-asan \
        sanitize-tsan lint clean install cross cross-build test-arm64 deb test-deb release test-fleet test-busy calltrace

# The bridge needs CycloneDDS (cyclonedds-dev, cyclonedds-tools); without it
# the rest builds and `pulse bridge` says what to install.
HAVE_DDS := $(shell pkg-config --exists CycloneDDS 2>/dev/null && command -v idlc >/dev/null && echo yes)
build: probe sim pulse $(if $(HAVE_DDS),bridge)

probe: $(PULSE_LIB) $(NULL_LIB) $(FAULT_LIB) $(TICKS_LIB) $(ABI_DUMP)
sim: $(SIM_LIBS) $(SIMGRAPH)
pulse: $(PULSE)

# callbacks.c (callback timing, waits, timers) is built for size, the rest for
# speed: its hooks run once a message event with their code evicted since the
# last one, so each line they span is an instruction-cache miss, and -Os spans
# half the lines for a few more instructions (design note 0038; the publish's
# fast path, in topics.c, keeps -O2). $(call probe_lib,flags,link flags)
PROBE_SIZE_SRC := probe/src/callbacks.c
probe_size_obj = $(patsubst $(LIB)/%.so,$(OBJ)/%.size.o,$@)
define probe_lib
	@mkdir -p $(@D) $(dir $(probe_size_obj))
	$(CC) $(PROBE_CFLAGS) -Os $(1) -c -o $(probe_size_obj) $(PROBE_SIZE_SRC)
	$(CC) $(PROBE_CFLAGS) $(1) -shared -Wl,--version-script=probe/exports.map $(2) \
	  -o $@ $(filter-out $(PROBE_SIZE_SRC),$(PROBE_SRC)) $(probe_size_obj) -ldl -lpthread
endef

$(PULSE_LIB): $(PROBE_SRC) $(PROBE_HDR) probe/exports.map
	$(call probe_lib,,-Wl$(comma)-z$(comma)now -Wl$(comma)-z$(comma)relro)

# The tests' own test: a probe that loses one count in 100 (RP_FAULT_DROP_EVERY),
# which the accuracy tests must catch. Never installed or packaged.
$(FAULT_LIB): $(PROBE_SRC) $(PROBE_HDR) probe/exports.map
	$(call probe_lib,-DRP_FAULT_DROP_EVERY=100)

# A benchmark's probe: the CPU's counter read as the clock whatever the kernel's clocksource
# (RP_BENCH_TRUST_TICKS), so that a VM on kvm-clock can measure the path a host on the TSC
# runs (gap_pairs.sh ticks=build/lib/ticks, LD_LIBRARY_PATH for pulse bench links;
# docs/PERFORMANCE.md §23). Its times are only as good as that VM's counter.
# Never installed or packaged.
$(TICKS_LIB): $(PROBE_SRC) $(PROBE_HDR) probe/exports.map
	$(call probe_lib,-DRP_BENCH_TRUST_TICKS)

# A dev tool, not the probe: records the tracetools, rcl and symbol-helper calls a real ROS 2 Humble
# process makes (tools/calltrace, docs/real-traces/README.md). Never installed or packaged.
CALLTRACE := $(LIB)/libcalltrace.so
calltrace: $(CALLTRACE)
$(CALLTRACE): tools/calltrace/calltrace.c probe/include/ros2_pulse/tracetools_api.h
	@mkdir -p $(@D)
	$(CC) $(CWARN) -O2 -g -fPIC -fvisibility=hidden -Iprobe/include -shared -o $@ $< -ldl

# Same exports, empty bodies that only forward: separates interposition cost from counting cost.
$(NULL_LIB): probe/src/null_shim.c probe/include/ros2_pulse/tracetools_api.h probe/exports.map
	@mkdir -p $(@D)
	$(CC) $(PROBE_CFLAGS) -shared -Wl,--version-script=probe/exports.map -o $@ $< -ldl

$(ABI_DUMP): probe/test/abi_dump.c probe/include/ros2_pulse/segment.h
	@mkdir -p $(@D)
	$(CC) $(CWARN) -Iprobe/include -o $@ $<

$(LIB)/sim/%/libtracetools.so: sim/tracetools/tracetools.c probe/include/ros2_pulse/tracetools_api.h
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libtracetools.so \
	  -DSIM_DISTRO=$(call distro_num,$*) -o $@ $<

# The stand-in librcl: the two publish functions whose tracepoints differ by distro, and the timer calls.
$(LIB)/sim/%/librcl.so: sim/rcl/rcl.c sim/rcl/sim_rcl.h probe/include/ros2_pulse/tracetools_api.h $(LIB)/sim/%/libtracetools.so \
                        $(LIB)/sim/%/librosidl_runtime_c.so
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,librcl.so \
	  -DSIM_DISTRO=$(call distro_num,$*) -o $@ $< -L$(@D) -ltracetools -Wl,--no-as-needed -lrosidl_runtime_c -Wl,--as-needed

# The stand-in rosidl (design note 0033): the runtime librcl loads, and sim_msgs' introspection type supports.
$(LIB)/sim/%/librosidl_runtime_c.so: sim/rosidl/runtime_c.c
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,librosidl_runtime_c.so \
	  -DSIM_DISTRO=$(call distro_num,$*) -o $@ $<

$(LIB)/sim/%/libsim_msgs__rosidl_typesupport_introspection_c.so: sim/rosidl/introspection.c sim/rosidl/sim_msgs.h probe/include/ros2_pulse/tracetools_api.h
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -shared -fvisibility=hidden -DSIM_DISTRO=$(call distro_num,$*) -DSIM_LANG=c -o $@ $<

$(LIB)/sim/%/libsim_msgs__rosidl_typesupport_introspection_cpp.so: sim/rosidl/introspection.c sim/rosidl/sim_msgs.h probe/include/ros2_pulse/tracetools_api.h
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -fPIC -shared -fvisibility=hidden -DSIM_DISTRO=$(call distro_num,$*) -DSIM_LANG=cpp -o $@ $<

GRAPHS := sim/graphs/demo.graph sim/graphs/stress.graph sim/graphs/flat.graph sim/graphs/robot.graph sim/graphs/chain.graph
$(OBJ)/graphs.c: $(GRAPHS) sim/embed_graphs.sh
	@mkdir -p $(@D)
	bash sim/embed_graphs.sh $(GRAPHS) > $@

# Linked against the Humble stand-in; LD_LIBRARY_PATH picks the distro at run time, as ld.so would.
$(SIMGRAPH): $(wildcard sim/simgraph/*.c sim/simgraph/*.h) sim/rcl/sim_rcl.h $(OBJ)/graphs.c $(LIB)/sim/humble/libtracetools.so \
             $(LIB)/sim/humble/librcl.so $(LIB)/sim/humble/librosidl_runtime_c.so
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -o $@ $(wildcard sim/simgraph/*.c) $(OBJ)/graphs.c \
	  -L$(LIB)/sim/humble -Wl,-rpath-link,$(LIB)/sim/humble -Wl,--no-as-needed -lrcl -ltracetools -lrosidl_runtime_c -Wl,--as-needed -Wl,-rpath,'$$ORIGIN/../lib/sim/humble' -ldl -lpthread

# pulse is pure Go (CGO_ENABLED=0: no library but the loader, as a PIE); a cross build sets GOARCH (make cross).
GOENV  := $(if $(GOARCH),GOARCH=$(GOARCH))
GO_SRC := $(shell find cmd internal -name '*.go' 2>/dev/null) $(shell find internal/web/assets -type f 2>/dev/null) go.mod go.sum
$(PULSE): $(GO_SRC) VERSION
	@mkdir -p $(@D)
	CGO_ENABLED=0 $(GOENV) $(GO) build -buildmode=pie -trimpath -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/pulse

# pulse-bridge: the only cgo, against Debian's CycloneDDS; idlc makes the
# message types from bridge/idl. dds_sub is the real DDS subscriber of its tests.
GEN      := $(BUILD)/gen
BRIDGE   := $(BIN)/pulse-bridge
DDS_SUB  := $(BIN)/dds_sub
# discovery_sub_24/_16 read ros_discovery_info in the Humble and Iron+ layouts.
DISCOVERY_SUBS := $(BIN)/discovery_sub_24 $(BIN)/discovery_sub_16
# fastdds_sub is a real Fast DDS subscriber (Debian's libfastrtps-dev, types
# from fastddsgen), built where those are installed.
HAVE_FASTDDS := $(shell command -v fastddsgen >/dev/null && test -e /usr/include/fastdds/dds/domain/DomainParticipant.hpp && echo yes)
FASTDDS_SUB := $(BIN)/fastdds_sub
bridge: $(BRIDGE) $(DDS_SUB) $(DISCOVERY_SUBS) $(if $(HAVE_FASTDDS),$(FASTDDS_SUB))
NEED_IDLC = @command -v idlc >/dev/null || { echo "idlc not found: apt-get install cyclonedds-dev cyclonedds-tools (or make deps)"; exit 1; }
$(GEN)/ros2_msgs.c: bridge/idl/ros2_msgs.idl
	$(NEED_IDLC)
	@mkdir -p $(@D)
	cd $(@D) && idlc $(abspath $<)
# No type information, as rmw_cyclonedds sends none for ros_discovery_info.
$(GEN)/rmw_dds_common.c: bridge/idl/rmw_dds_common.idl
	$(NEED_IDLC)
	@mkdir -p $(@D)
	cd $(@D) && idlc -t $(abspath $<)
$(BRIDGE): $(GO_SRC) $(GEN)/ros2_msgs.c $(GEN)/rmw_dds_common.c internal/dds/pulse_dds.c internal/dds/pulse_dds.h
	CGO_ENABLED=1 CC=$(CC) CGO_CFLAGS="-O2 -g -I$(abspath $(GEN))" $(GOENV) $(GO) build -tags cyclonedds -buildmode=pie -trimpath \
	  -ldflags "-X main.version=$(VERSION) -extldflags '-Wl,-z,relro,-z,now'" -o $@ ./cmd/pulse-bridge
$(DDS_SUB): bridge/test/dds_sub.c bridge/test/sub_common.h $(GEN)/ros2_msgs.c
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -I$(GEN) -o $@ $< $(GEN)/ros2_msgs.c -lddsc
FASTDDS_GEN := $(BUILD)/gen-fastdds
$(FASTDDS_GEN)/ros2_msgsPubSubTypes.cxx: bridge/idl/ros2_msgs.idl
	@mkdir -p $(@D)
	cd $(@D) && fastddsgen -replace -t . -d . $(abspath $<) >/dev/null
$(FASTDDS_SUB): bridge/test/fastdds_sub.cpp $(FASTDDS_GEN)/ros2_msgsPubSubTypes.cxx
	$(CXX) -std=c++17 -Wall -Wextra -Werror -O1 -I$(FASTDDS_GEN) -o $@ $< $(FASTDDS_GEN)/ros2_msgs.cxx \
		$(FASTDDS_GEN)/ros2_msgsPubSubTypes.cxx -lfastrtps -lfastcdr
.PRECIOUS: $(BUILD)/gen-test-%/ros_discovery_test.c
$(BUILD)/gen-test-%/ros_discovery_test.c: bridge/test/ros_discovery_test.idl
	$(NEED_IDLC)
	@mkdir -p $(@D)
	cd $(@D) && idlc -DGID_SIZE=$* $(abspath $<)
$(BIN)/discovery_sub_%: bridge/test/discovery_sub.c bridge/test/sub_common.h $(BUILD)/gen-test-%/ros_discovery_test.c
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -DGID_SIZE=$* -I$(BUILD)/gen-test-$* -o $@ $< $(BUILD)/gen-test-$*/ros_discovery_test.c -lddsc

# `make demo` and `make test` install what they need first (scripts/need-packages.sh:
# as root, or through sudo, or it prints the one apt-get line to run), then run
# in a fresh make, so variables such as HAVE_DDS see what was just installed.
DEMO_PKGS := make gcc libc6-dev
demo:
	@bash scripts/need-packages.sh $(DEMO_PKGS)
	@$(MAKE) --no-print-directory build
	$(PULSE) demo --web

# The page's screenshots in docs/web (pulse web on the demo robot, the stress farm and robot.graph, in chromium).
screenshots: build
	@bash scripts/need-packages.sh chromium
	PULSE_BUILD=$(abspath $(BUILD)) PULSE_SCREENSHOTS=$(abspath docs/web) $(GO) test -count=1 -run 'TestWebScreenshots|TestWebRobot$$' ./cmd/pulse/

# Quick hot-path figures (the full comparison is bench/README.md's job).
HOTPATH := $(BIN)/hotpath
$(HOTPATH): bench/hotpath/hotpath.c $(PULSE_LIB) $(LIB)/sim/humble/libtracetools.so $(LIB)/sim/humble/librcl.so
	$(CC) $(CWARN) -O2 -Iprobe/include -Isim/rcl -Isim/rosidl -o $@ $< -L$(LIB) -lros2_pulse -L$(LIB)/sim/humble -Wl,-rpath-link,$(LIB)/sim/humble -Wl,--no-as-needed -ltracetools -lrcl -lrosidl_runtime_c \
	  -Wl,--as-needed -Wl,-rpath,'$$ORIGIN/../lib:$$ORIGIN/../lib/sim/humble' -ldl -lpthread
# Gap tracking's steps one by one (issue 28): the probe's own bucket function, the rest as it does them.
GAPSTEPS := $(BIN)/gapsteps
$(GAPSTEPS): bench/gapsteps/gapsteps.c probe/src/core.h probe/src/clock.h probe/include/ros2_pulse/segment.h
	@mkdir -p $(BIN)
	$(CC) $(CWARN) -O2 -Iprobe/include -Iprobe/src -o $@ $< -lpthread -lm
# All three benchmarks; CSV, PNG and tables in docs/perf (docs/PERFORMANCE.md).
bench: build $(HOTPATH) $(GAPSTEPS)
	$(GAPSTEPS) --msgs 20000000 --reps 10 > docs/perf/gapsteps.csv
	$(PULSE) bench hotpath
	$(PULSE) bench overhead
	$(PULSE) bench reader
	$(PULSE) bench viewers
	$(PULSE) bench export

# An hour of pulse record at 1 s and 100 ms windows on the stress graph,
# its resident memory sampled every 30 s (not part of make bench or make test).
soak: build
	$(PULSE) bench soak

# ---------------------------------------------------------------- tests
test: deps
	@$(MAKE) --no-print-directory test-lanes
test-lanes: lint test-c test-prom test-python test-go fuzz sanitize test-arm64 test-deb test-fleet test-ros-short
	@echo "make test: all lanes passed"

# ---------------------------------------------------------------- real ROS
# The real-ROS lane (scripts/test-ros.sh, internal/realros): ros/pulse_testnodes
# built against ROS_PREFIX (default: the first of /opt/ros/{jazzy,humble,kilted})
# in build/ros, every test on every RMW the prefix has. make test runs a short
# lane (a few tests, one RMW) when it finds a prefix, and says it skipped otherwise.
test-ros: build
	bash scripts/test-ros.sh
test-ros-short: build
	bash scripts/test-ros.sh --short
# The probe's cost on real ROS 2 (docs/PERFORMANCE.md §18): callgrind per hook and the stress farm, paired.
bench-ros: build
	bash scripts/bench-ros.sh

# Every lane of make test with every core kept busy by unrelated busy loops
# for the whole run (scripts/busy.sh): the tests judge pulse against what the
# graph did, so a loaded machine passes too. On demand; not part of make test.
test-busy: deps
	@bash scripts/busy.sh $(MAKE) --no-print-directory test-lanes

# Debian packages the tests use for real: gcc's libasan/libubsan/libtsan (sanitizer lanes),
# binutils (nm, readelf), util-linux (mount, unshare: containers), libcap2-bin (setcap: pulse doctor on file capabilities), tmux (pulse top's terminal), python3 (an unprobed
# node; the fleet test reads an agent inside its namespace with it), prometheus/promtool (pulse export and the rules), CycloneDDS with idlc (pulse bridge and
# its subscribers), Fast DDS with fastddsgen and g++ (a subscriber as rmw_fastrtps nodes make
# one), graphviz (checks pulse graph's DOT output), chromium and firefox-esr (pulse web in two real browsers, driven
# by chromedp and by WebDriver BiDi). CycloneDDS's headers are named with this machine's
# architecture: dpkg calls an unqualified cyclonedds-dev installed when only the arm64
# lane's cyclonedds-dev:arm64 is (its features.h is in the arm64 include directory).
NATIVE_CYCLONE_DEV := cyclonedds-dev$(addprefix :,$(shell dpkg --print-architecture 2>/dev/null))
TEST_PKGS := make gcc g++ libc6-dev binutils util-linux libcap2-bin pkg-config tmux python3 python3-setuptools prometheus $(NATIVE_CYCLONE_DEV) cyclonedds-tools \
	libfastrtps-dev fastddsgen graphviz chromium firefox-esr
deps:
	@bash scripts/need-packages.sh $(TEST_PKGS)

# The example Prometheus configs (one server; a fleet's agent and central server), the alert rules and their unit tests.
test-prom:
	cd deploy/prometheus && promtool check config prometheus.yml && promtool check rules ros2_pulse.rules.yml && \
	  promtool test rules ros2_pulse.rules.test.yml
	cd deploy/fleet && promtool check config agent.yml && promtool check config central.yml

# ros/ros2pulse (ros2 pulse <verb>) without ROS: its flags and exit status against the
# real pulse, on Debian's python3; ros2cli's side runs in the real-ROS lane (TestROS2Pulse).
test-python: build
	PULSE_BIN=$(abspath $(PULSE)) /usr/bin/python3 -m unittest discover -s ros/ros2pulse/test

lint:
	@out=$$(gofmt -l cmd internal sim); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags fleet ./cmd/pulse/

test-c: build $(GAPSTEPS)
	$(GAPSTEPS) --msgs 100000 --reps 2 | awk -F, 'NR > 1 { n++ } END { exit n == 12 ? 0 : 1 }'
	bash probe/test/test_exports.sh $(PULSE_LIB)
	bash probe/test/test_rtld_local.sh $(abspath $(BUILD))
	bash probe/test/test_symbols.sh $(abspath $(BUILD))

# Go unit tests plus the integration tests that drive simgraph under the probe.
# -p 1: the integration tests measure rates, and parallel packages are only scheduling noise.
# -timeout 25m: cmd/pulse drives the binary through real terminals, browsers and
# Prometheus, ~10 min on a 2-core machine, which is go test's default limit.
test-go: build bridge
	$(GO) vet -tags cyclonedds ./internal/dds/ ./cmd/pulse-bridge/
	PULSE_BUILD=$(abspath $(BUILD)) $(GO) test -p 1 -count=1 -timeout 25m ./...
	PULSE_BUILD=$(abspath $(BUILD)) $(GO) test -count=1 -race ./internal/segment/ ./internal/window/ ./internal/recorder/ ./internal/runner/ ./internal/top/ ./internal/cpu/ ./internal/web/

# A short fuzz pass over every parser of outside input: segments, specs and logs.
# Minimising each new input is capped: the default 60 s spent on 13 KB seeds starves the run.
# A count, not a duration: go1.26's fuzz coordinator can report a bare
# "context deadline exceeded" at a -fuzztime deadline (golang/go#75804). About
# 5-10 s per target here.
FUZZTIME ?= 200000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/segment/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/spec/
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/logfmt/
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/graphfile/
	$(GO) test -run '^$$' -fuzz '^FuzzEndsWhole$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/zlog/
	$(GO) test -run '^$$' -fuzz '^FuzzDetail$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/web/
	$(GO) test -run '^$$' -fuzz '^FuzzParseTruth$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/realros/
	$(GO) test -run '^$$' -fuzz '^FuzzParseCallgrind$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/bench/
	$(GO) test -run '^$$' -fuzz '^FuzzParseStat$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./internal/cpu/
	$(GO) test -run '^$$' -fuzz '^FuzzParseBars$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100ms ./cmd/pulse/

# ASan+UBSan over probe and simulator, and TSan over the simulator, with the exit storm repeated.
sanitize: sanitize-asan sanitize-tsan
sanitize-asan:
	bash probe/test/sanitize.sh asan
sanitize-tsan:
	bash probe/test/sanitize.sh tsan

# ---------------------------------------------------------------- arm64
# The arm64 tree beside the native one, with Debian's cross compiler; the
# bridge too where an arm64 CycloneDDS is installed through multiarch
# (scripts/need-arm64.sh tries). A fresh make sees what was just installed.
ARM64    := build-arm64
CROSS_CC := aarch64-linux-gnu-gcc
ARM64_CROSS := $(MAKE) --no-print-directory BUILD=$(ARM64) CC=$(CROSS_CC) GOARCH=arm64
cross:
	@bash scripts/need-arm64.sh
	@$(MAKE) --no-print-directory cross-build
cross-build:
	$(ARM64_CROSS) probe sim pulse
	@if [ -e /usr/lib/aarch64-linux-gnu/libddsc.so ]; then $(ARM64_CROSS) $(ARM64)/bin/pulse-bridge; \
	  else echo "cross: no arm64 CycloneDDS (cyclonedds-dev:arm64): $(ARM64) has no pulse-bridge"; fi

# The arm64 lane, part of make test: the tests of exact counts, run as arm64
# programs under qemu-user through binfmt_misc. The Go tests are built for
# arm64 and run there too; PULSE_EMULATED makes the timing tests skip, saying
# why (emulated time is not the hardware's). Its duration is in the README.
test-arm64: cross
	bash probe/test/test_exports.sh $(ARM64)/lib/libros2_pulse.so
	CC=$(CROSS_CC) bash probe/test/test_rtld_local.sh $(abspath $(ARM64))
	@mkdir -p $(ARM64)/test
	CGO_ENABLED=0 GOARCH=arm64 $(GO) test -c -o $(ARM64)/test/segment.test ./internal/segment
	CGO_ENABLED=0 GOARCH=arm64 $(GO) test -c -o $(ARM64)/test/integration.test ./internal/integration
	cd internal/segment && ABI_DUMP=$(abspath $(ARM64))/bin/abi_dump ../../$(ARM64)/test/segment.test -test.count=1
	cd internal/integration && PULSE_BUILD=$(abspath $(ARM64)) PULSE_EMULATED=qemu-user \
	  ../../$(ARM64)/test/integration.test -test.count=1 -test.v

# ---------------------------------------------------------------- fleet
# Three robots in network namespaces of their own (graph, pulse export, a
# Prometheus agent from deploy/fleet/agent.yml) and one central Prometheus
# (deploy/fleet/central.yml): per-robot alerts, a lost link, an exporter
# restart (cmd/pulse/fleet_test.go). Root; it skips, saying why, without.
test-fleet: build
	PULSE_BUILD=$(abspath $(BUILD)) $(GO) test -tags fleet -run '^TestFleet$$' -count=1 -v ./cmd/pulse/

# ---------------------------------------------------------------- packages
# Debian packages for amd64 and arm64 (nfpm, pinned in go.mod as a tool;
# packaging/), their install test, and the release: dist/ with the packages,
# a tarball per architecture and SHA256SUMS.
DIST := dist
deb: build bridge cross
	@rm -f $(DIST)/*.deb
	bash scripts/package.sh amd64 $(BUILD) $(DIST)
	bash scripts/package.sh arm64 $(ARM64) $(DIST)
# lintian: no errors (its two warnings and why they stay: docs/design/0014); then
# the install test, as root (make test runs it), one clone at a time: it
# installs and purges the machine's one ros2-pulse package.
test-deb: deb
	@bash scripts/need-packages.sh lintian man-db systemd file
	lintian --fail-on error $(DIST)/*.deb
	flock /tmp/ros2_pulse-test-deb.lock bash scripts/test-deb.sh $(DIST) $(abspath $(BUILD)) $(abspath $(ARM64))
release: deb
	bash scripts/tarball.sh amd64 $(BUILD) $(DIST)
	bash scripts/tarball.sh arm64 $(ARM64) $(DIST)
	cd $(DIST) && rm -f SHA256SUMS && sha256sum *.deb *.tar.gz > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	install -m 0755 $(PULSE) $(DESTDIR)$(PREFIX)/bin/pulse
	install -m 0644 $(PULSE_LIB) $(DESTDIR)$(PREFIX)/lib/libros2_pulse.so

PREFIX ?= /usr/local

clean:
	rm -rf $(BUILD) $(ARM64) $(DIST)
