# zkhost: build, test, demo. `make help` lists the targets.
GO      ?= go
BIN     := bin
KEYS    := .keys
DEMO    := .demo
PKGS    := ./...
# The SDK is a module of its own (sdk/go.mod, replaced into the root module), and so
# are the example modules (a user's synthesizer imports zkhost as a dependency);
# `go ... ./...` at the root enters none of them.
SDK_MOD := sdk
EXAMPLE_MODS := examples/hintsynth
# Packages whose concurrency matters run under the race detector in `make test`;
# the proving packages (gnark's MSMs) run without it, to keep the suite's time down.
RACE_PKGS := ./host/... ./e2e/
# The others run once without it (the race run covers RACE_PKGS: running them twice
# doubled the e2e suite's time for nothing the race run does not see).
NORACE_PKGS = $(shell $(GO) list ./... | grep -v -E '^github.com/zkhost/zkhost/(host|e2e)(/|$$)')
SDK_RACE_PKGS := ./ ./keyreg/ ./plugins/
# Tests run without the race detector, each for a race that is not ours: rotating a
# NATS server's password (ReloadOptions) races inside nats-server v2.15.2 itself
# (reloadAuthorization's auth-error event against a client connecting), which the
# detector reports in the test that runs the in-process server.
RACE_SKIP := TestCredentialsRotated

.PHONY: all build cuda test test-slowdisk test-race vet demo bench-cpu proto clean help soak soak-cluster install check-install docs-test

# `make install`: where things go (GNU conventions; DESTDIR stages a package).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
DOCDIR     ?= $(PREFIX)/share/doc/zkhost
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# The version every binary reports (internal/version): a release sets it
# (make VERSION=v1.2.0 install); otherwise every binary reports the module
# version go build stamps from the checkout, the same for all of them.
VERSION    ?=
LDFLAGS    := $(if $(VERSION),-X github.com/zkhost/zkhost/internal/version.version=$(VERSION))

all: build

help:
	@echo "make build      build bin/zkhost and bin/zkhost-backend-cpu"
	@echo "make test       vet, gofmt, scripts/check-sdk-deps.sh, the install check (systemd-analyze verify), then the whole test suite, the SDK's and examples' modules included (race detector on the host, plugin, e2e and SDK packages), then the docs test"
	@echo "make demo       keygen (cached), then prove a 4-partition merkle job and print the verified result"
	@echo "make install    install the binaries, the service's config and the systemd unit (PREFIX=/usr/local, DESTDIR)"
	@echo "make docs-test  run every shell block of README.md and docs/*.md as pasted, in a fresh clone (a few minutes)"
	@echo "make cuda       build bin/zkhost-backend-cuda (needs nvcc)"
	@echo "make bench-cpu  gnark groth16.Prove against zkhost's CPU path, same circuits and cores: medians and ratios over alternating rounds (scripts/bench-cpu.sh)"
	@echo "make proto      regenerate the committed protobuf code"
	@echo "make test-slowdisk  make test with every fsync delayed (SYNC_DELAY_US, default 120000; needs strace)"
	@echo "make soak       long soak: 1,000 partitions under random kill -9 and SIGSTOP of backends, host restarts and a damaged stored proof (not part of make test)"
	@echo "make soak-cluster  cluster soak: 600 partitions on three hosts sharing NATS JetStream, under kill -9 of hosts (not part of make test)"

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/zkhost ./cmd/zkhost-backend-cpu

include cudabackend/cuda.mk

# The CUDA backend: kernels built by nvcc into build/cuda/libzkcuda.a, linked with
# cudart statically, so the binary needs only the driver where it runs.
cuda: cuda-lib cuda-tools
	$(GO) build -tags cuda -ldflags '$(LDFLAGS)' -o $(BIN)/zkhost-backend-cuda ./cmd/zkhost-backend-cuda

vet:
	$(GO) vet $(PKGS)
	for m in $(SDK_MOD) $(EXAMPLE_MODS); do (cd $$m && $(GO) vet ./...) || exit 1; done
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	GO=$(GO) ./scripts/check-sdk-deps.sh

test: build vet check-install
	$(GO) test -count=1 -timeout 20m $(NORACE_PKGS)
	cd $(SDK_MOD) && $(GO) test -count=1 -timeout 20m ./...
	for m in $(EXAMPLE_MODS); do (cd $$m && $(GO) test -count=1 -timeout 10m ./...) || exit 1; done
	$(GO) test -count=1 -race -timeout 20m -skip '^($(RACE_SKIP))$$' $(RACE_PKGS)
	$(GO) test -count=1 -timeout 5m -run '^($(RACE_SKIP))$$' ./host/cluster/
	cd $(SDK_MOD) && $(GO) test -count=1 -race -timeout 20m $(SDK_RACE_PKGS)
	./scripts/docs-test.sh

# The suite on a disk with slow syncs: strace delays every fsync and fdatasync,
# which is how timing assumptions in tests get caught here. The default delay is
# the sync time seen on CI's disk (an observation, see BENCHMARKS.md's journal section).
SYNC_DELAY_US ?= 120000
test-slowdisk:
	@command -v strace >/dev/null || (echo "test-slowdisk needs strace (apt-get install strace)"; exit 1)
	strace -f --seccomp-bpf -qq -e trace=fdatasync,fsync -e inject=fdatasync,fsync:delay_exit=$(SYNC_DELAY_US) -o /dev/null $(MAKE) test

demo: build
	./scripts/demo.sh

# The binaries (the CUDA backend too when `make cuda` built it), the service's
# config (never over an existing one), the full example config, the systemd unit
# and its user; packaging/README.md says what to run after.
install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/zkhost $(DESTDIR)$(DOCDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR)
	install -m 0755 $(BIN)/zkhost $(BIN)/zkhost-backend-cpu $(DESTDIR)$(BINDIR)/
	if [ -x $(BIN)/zkhost-backend-cuda ]; then install -m 0755 $(BIN)/zkhost-backend-cuda $(DESTDIR)$(BINDIR)/; fi
	test -e $(DESTDIR)$(SYSCONFDIR)/zkhost/zkhost.toml || install -m 0644 packaging/zkhost.toml $(DESTDIR)$(SYSCONFDIR)/zkhost/zkhost.toml
	install -m 0644 examples/zkhost.toml $(DESTDIR)$(DOCDIR)/zkhost.toml.example
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 packaging/README.md $(DESTDIR)$(DOCDIR)/INSTALL.md
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
		packaging/zkhost.service.in > $(DESTDIR)$(UNITDIR)/zkhost.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/zkhost.service
	install -m 0644 packaging/sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/zkhost.conf

# `make install` into a scratch DESTDIR, then systemd-analyze verify on the unit
# it wrote (part of make test).
check-install: build
	./scripts/check-install.sh

# Every shell block of README.md and docs/*.md, run as pasted in a fresh clone
# (scripts/docs-test.sh; the last step of make test, and on its own here).
docs-test:
	./scripts/docs-test.sh

bench-cpu: build
	./scripts/bench-cpu.sh

proto:
	./proto/gen.sh

soak:
	./scripts/soak.sh

# The cluster's soak (docs/cluster.md): knobs SOAK_PARTITIONS (600), SOAK_HOST_KILLS (4), SEED (1).
SOAK_PARTITIONS ?= 600
SOAK_HOST_KILLS ?= 4
SEED ?= 1
soak-cluster:
	$(GO) test -tags clustersoak ./e2e/ -run '^TestClusterSoak$$' -count=1 -v -timeout 60m -args \
		-soak.cluster.partitions=$(SOAK_PARTITIONS) -soak.cluster.host-kills=$(SOAK_HOST_KILLS) -soak.seed=$(SEED)

clean:
	rm -rf $(BIN) build $(DEMO)
