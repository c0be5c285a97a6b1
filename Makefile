# a2amesh — the two commands: `make run` and `make test`.

GO      ?= go
# An execution count, not a duration: Go 1.26's fuzz coordinator can fail a
# duration-bounded run with a bare "context deadline exceeded" when the time
# runs out while a worker is mid-input (go.dev/issue/75804, fixed in 1.27);
# a count has no deadline to race. 150000 inputs are 1-15 s per target here.
FUZZTIME ?= 150000x
# Packages whose tests exercise concurrency run under the race detector;
# that is every package with tests here.
RACE_PKGS := ./...
# The modules of their own inside this one, which ./... does not reach:
# bench and interop hold what only the benchmarks and the interop tests
# need (a2a-go, the load tool), deploy/k8s the Kubernetes manifests' tests
# (kustomize, k8s.io/api), bench/eino and bench/adkgohops the comparisons
# with Eino and adk-go, gateway/console/browser the console's test in
# chromium (chromedp), so none of those becomes a dependency of a library
# user. bench, interop and gateway/console/browser are race-tested like
# the rest; deploy/k8s has its own target (test-deploy).
TEST_MODULES := bench interop gateway/console/browser
MODULES := $(TEST_MODULES) deploy/k8s bench/eino bench/adkgohops

.PHONY: run test test-race fuzz-seed fuzz bench bench-load build vet clean proto image image-context test-image test-deploy

# Start the whole mesh on the embedded defaults: an in-process NATS server,
# every agent service as its own process, and the gateway on
# 127.0.0.1:9100, with the offline model unless OPENAI_* names an endpoint.
run:
	$(GO) run ./cmd/a2amesh up

# Everything CI checks: vet, the race-enabled test suite (with the interop
# tests against a2a-go and @a2a-js/sdk), a short run of every fuzzer, the
# container image's proof (podman, as root) and the Kubernetes manifests'
# (kustomize's builds and the policies, then the prod overlay run as local
# pods and rolled under load; root).
# The @a2a-js/sdk test uses Node.js 20+ from PATH, or fetches the pinned
# one from the npm registry; A2AMESH_ALLOW_SKIP=node make test skips it.
test: vet test-race fuzz-seed test-image test-deploy

# Vetting every module keeps the side-by-side benchmarks compiling.
vet:
	$(GO) vet ./...
	@for m in $(MODULES); do echo "cd $$m && $(GO) vet ./..."; (cd $$m && $(GO) vet ./...) || exit 1; done

test-race:
	$(GO) test -race -count=1 -timeout 10m $(RACE_PKGS)
	@for m in $(TEST_MODULES); do echo "cd $$m && $(GO) test -race -count=1 -timeout 10m ./..."; (cd $$m && $(GO) test -race -count=1 -timeout 10m ./...) || exit 1; done

# Each fuzz target for a few seconds beyond its seed corpus (which plain
# `go test` already runs): FUZZTIME inputs, or the count after a target's
# second colon for a slow one, so that each takes about 30 s at most here
# and the stage about 7 minutes (the offline model's answers, the bridge's
# decoders and the SSE reader take 1-5 ms an input under the fuzzer).
FUZZ_TARGETS := \
	./a2a:FuzzWire10 \
	./a2a:FuzzDecode10 \
	./a2a/a2av03:FuzzWire03 \
	./a2a/jsonrpc:FuzzDecodeRequest \
	./a2a/jsonrpc:FuzzScanEnvelope \
	./a2a/jsonrpc:FuzzDecodeResponse \
	./a2a/internal/pbconv:FuzzRequest \
	./a2a/internal/pbconv:FuzzDirectEvent \
	./a2a/internal/pbconv:FuzzJSONValue \
	./a2a/internal/pbconv:FuzzDecode \
	./a2a/grpcserver:FuzzLimitConn:30000x \
	./a2a/restserver:FuzzRESTRequest \
	./internal/fastjson:FuzzReadAny \
	./internal/fastjson:FuzzAppendString \
	./internal/fastjson:FuzzAppendFloat \
	./a2a/client:FuzzSSEReader:50000x \
	./adk:FuzzResume \
	./bridge:FuzzDecoder:40000x \
	./bridge:FuzzFromPlain:40000x \
	./bridge:FuzzMetaAppendJSON:40000x \
	./bridge:FuzzSplitOwner:30000x \
	./adk/tool/calc:FuzzEval \
	./gateway:FuzzParseTopology:50000x \
	./natsstore:FuzzLogMessage \
	./a2a/auth:FuzzJWT:30000x \
	./a2a/auth:FuzzParseConfig:30000x \
	./a2a/internal/jwks:FuzzParse \
	./a2a/cardsign:FuzzCanonicalize \
	./a2a/cardsign:FuzzVerify:30000x \
	./a2a/push:FuzzVerifyRequest:30000x \
	./a2a/credentials:FuzzParseTokenResponse \
	./adk/model/offline:FuzzReply:3000x

fuzz-seed:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$(FUZZTIME); \
		case $$rest in *:*) n=$${rest#*:};; esac; \
		echo "fuzz $$pkg $$name ($$n)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$n $$pkg || exit 1; \
	done

# Longer fuzzing: make fuzz FUZZTIME=5000000x (a duration such as 10m works
# too, with the flake above at its end)
fuzz: fuzz-seed

# Side-by-side benchmarks: the A2A server with a2a-go v2.4.0 in process
# (go test -bench) and over the network (a2aload compare); the ADK with
# Eino v0.7.36; then bench-load.
bench: build
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -count 5 . | tee ../bin/bench.txt
	cd bench/eino && $(GO) test -run '^$$' -bench . -count 5 | tee ../../bin/bench-eino.txt
	$(MAKE) bench-load

# The benchmarks over the network (a2aload): the echo server against
# a2a-go's and a bare Hertz floor (compare), on every binding (bindings);
# what authenticating each request costs, an API key or a bearer JWT
# against the open server (auth); what a remote hop adds, with adk-go
# v0.3.0 + a2a-go v0.3.3 (hops); the echo service's stores in memory vs on
# JetStream, beside what acknowledged JetStream writes alone cost (state);
# memory at default flags under sustained and hostile load (soak); what
# 10,000 running tasks and a stream open on each cost one echo process
# (streams, about 90 s; --peer bin/a2agoecho holds them on a2a-go too,
# --state nats on JetStream); what a finished task costs to keep (retain).
# See docs/benchmarks.md.
# The echo comparisons run every server at Go's default GOGC (a2amesh
# services run at 200 otherwise, cli.TuneProcess), as the peers do.
bench-load: build
	GOGC=100 bin/a2aload compare --ours "bin/a2amesh serve echo" --peer bin/a2agoecho --floor bin/hertzfloor | tee bin/compare.md
	GOGC=100 bin/a2aload bindings --ours "bin/a2amesh serve echo" --peer bin/a2agoecho | tee bin/bindings.md
	GOGC=100 bin/a2aload auth --ours "bin/a2amesh serve echo" | tee bin/auth.md
	GOGC=100 bin/a2aload telemetry --ours "bin/a2amesh serve echo" | tee bin/telemetry.md
	bin/a2aload hops --ours bin/hops --peer bin/adkgohops | tee bin/hops.md
	bin/a2aload state | tee bin/state.md
	GOGC=100 bin/a2aload soak --ours "bin/a2amesh serve echo" --peer bin/a2agoecho | tee bin/soak.md
	GOGC=100 bin/a2aload streams --ours "bin/a2amesh serve echo" | tee bin/streams.md
	GOGC=100 bin/a2aload retain --ours "bin/a2amesh serve echo" | tee bin/retain.md

build:
	@mkdir -p bin
	$(GO) build -o bin/a2amesh ./cmd/a2amesh
	cd bench && $(GO) build -o ../bin/a2agoecho ./a2agoecho
	cd bench && $(GO) build -o ../bin/hertzfloor ./hertzfloor
	cd bench && $(GO) build -o ../bin/jsfloor ./jsfloor
	cd bench && $(GO) build -o ../bin/a2aload ./a2aload
	cd bench && $(GO) build -o ../bin/hops ./hops
	cd bench/adkgohops && $(GO) build -o ../../bin/adkgohops .

# The container image for every agent and the gateway: the static binary
# on scratch (deploy/image/Containerfile; docs/deploy.md). image-context
# stages its context in IMAGE_DIR from this checkout and Debian's CA
# certificates (package ca-certificates: the Mozilla set, without what a
# machine adds to its own bundle, such as a proxy's CA; CA_CERTS names
# other PEM files), so the build pulls nothing from a registry
# (Containerfile.multistage runs the same staging in a builder).
# podman builds it where it is installed, else docker. As root, podman's
# defaults build it here (a FROM scratch image with no RUN step needs
# neither a runtime nor cgroups); the version and revision come from git.
IMAGE     ?= localhost/a2amesh:dev
IMAGE_DIR ?= bin/image
CONTAINER ?= $(or $(shell command -v podman),$(shell command -v docker),podman)
CA_CERTS  ?= /usr/share/ca-certificates/mozilla/*.crt
image: image-context
	$(CONTAINER) build -f deploy/image/Containerfile -t $(IMAGE) \
		--build-arg VERSION=$$(git describe --tags --always --dirty 2>/dev/null || echo unknown) \
		--build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null || echo unknown) \
		$(IMAGE_DIR)

image-context:
	@cat $(CA_CERTS) >/dev/null || { echo "image-context: no CA certificates at $(CA_CERTS); apt-get install ca-certificates" >&2; exit 1; }
	rm -rf $(IMAGE_DIR)
	install -d -m 0755 $(IMAGE_DIR)/rootfs/etc/ssl/certs $(IMAGE_DIR)/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(IMAGE_DIR)/rootfs/a2amesh ./cmd/a2amesh
	install -m 0644 deploy/image/passwd deploy/image/group $(IMAGE_DIR)/rootfs/etc/
	cat $(CA_CERTS) > $(IMAGE_DIR)/rootfs/etc/ssl/certs/ca-certificates.crt
	chmod 0644 $(IMAGE_DIR)/rootfs/etc/ssl/certs/ca-certificates.crt

# The image's proof (deploy/image, build tag image): builds it with `make
# image`, checks its files and configuration, and serves A2A requests from
# its files as its user with the root read-only. It needs podman and root,
# and fails saying so where they are missing; A2AMESH_ALLOW_SKIP=podman
# skips it instead.
test-image:
	$(GO) vet -tags image ./deploy/image
	$(GO) test -tags image -count=1 -timeout 20m ./deploy/image

# The Kubernetes manifests (deploy/k8s, a module of its own): localcluster,
# which runs them as local pods and has goroutines of its own, under the
# race detector; the overlays' builds, their policies and the rollout of
# the prod overlay under load without it (kustomize's builds are CPU-bound,
# and the rollout's pods are separate processes).
test-deploy:
	cd deploy/k8s && $(GO) test -race -count=1 -timeout 10m ./internal/...
	cd deploy/k8s && $(GO) test -count=1 -timeout 15m ./ ./render/...

# Regenerate the Kitex code for the gRPC binding, proto/a2apb, from
# proto/a2a.proto with the kitex pinned as a tool in go.mod (it parses
# protobuf itself: no protoc). The generated code is committed; the test in
# proto/ runs this recipe's kitex line into a temporary directory and fails
# when the committed code differs, so edit the line here, not there.
proto:
	rm -rf proto/a2apb
	$(GO) tool kitex -module github.com/a2amesh/a2amesh -gen-path proto proto/a2a.proto

clean:
	rm -rf bin
