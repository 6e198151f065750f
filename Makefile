# make run   - build everything, then run the proxy on configs/default.yaml
# make xds-demo - build everything, then run the xDS demo: scripts/xds-demo-server.js and the proxy
#              on configs/xds-demo.yaml, both stopped by Ctrl-C (docs/xds.md, "Watching it change")
# make test  - build everything, then run the whole test suite
# make fuzz  - build everything, then run every fuzzer at FUZZ_INPUTS inputs (100,000 by default) plus its
#              regression corpus (docs/fuzzing.md); FUZZ_SEED picks the run (1 by default)
# make bench - build everything, compare the proxy with nginx and node-http-proxy, time a hot restart,
#              hold 10,000 idle connections, compare --concurrency 2 with 1,
#              measure stats at scale (10,000 clusters), xDS pushes (10,000 clusters, 10,000 routes)
#              and the /stats forms' rendering, and the load balancers' picks per second
# make bench-compare BASE=<rev> - build the revision <rev> beside this checkout and compare the CPU
#              per request of its proxy and this checkout's, in alternating rounds (bench/README.md)
# make soak  - build everything, then run the proxy under the hot-restarter at half its capacity
#              for 10 minutes through hot restarts, worker kills and xDS/runtime changes (bench/README.md)
# make bench-profile - profile the worker of a bench row under load and write its top self-time entries
#              (bench/l7_profile.txt; PROFILE_ROW, PROFILE_FILTERS: bench/README.md)
SHELL := /bin/bash
.DEFAULT_GOAL := build

NPM_STAMP := node_modules/.package-lock.json
ADDON := native/proxy-native.node
TS_SOURCES := $(shell find src test bench -name '*.ts' 2>/dev/null)
RS_SOURCES := $(shell find native/src -name '*.rs' 2>/dev/null)

.PHONY: build run xds-demo test fuzz bench bench-compare soak bench-profile clean

# Refused before anything is built: the comparison needs a revision to compare with.
ifneq ($(filter bench-compare,$(MAKECMDGOALS)),)
ifeq ($(strip $(BASE)),)
$(error set BASE to the revision to compare with, e.g. make bench-compare BASE=main)
endif
endif

$(NPM_STAMP): package.json package-lock.json
	@node scripts/check-node.js make
	npm ci --no-audit --no-fund
	@touch $@

$(ADDON): $(NPM_STAMP) native/Cargo.toml $(RS_SOURCES) scripts/build-native.sh scripts/ensure-rust.sh
	bash scripts/build-native.sh

dist/.tsc-stamp: $(NPM_STAMP) tsconfig.json $(TS_SOURCES)
	npx tsc -p .
	@touch $@

# One run writes both: the schema and its annotations (v2 names, validation rules).
dist/protos.json dist/proto_annotations.json &: $(NPM_STAMP) scripts/gen-protos.js $(shell find scripts/protos -name '*.proto')
	node scripts/gen-protos.js

# The supervisor's and the worker's code, one file each (scripts/build-bundle.js).
dist/bundle/.stamp: dist/.tsc-stamp scripts/build-bundle.js
	node scripts/build-bundle.js
	@touch $@

# V8's code for the modules, recorded by running the build (src/common/compile_cache.ts); the
# recording run reads build_info.json, so it is written first.
dist/compile_cache/.stamp: $(ADDON) dist/.tsc-stamp dist/bundle/.stamp dist/protos.json dist/proto_annotations.json configs/default.yaml scripts/build-compile-cache.js scripts/compile-cache-recorder.js
	@node scripts/gen-build-info.js
	node scripts/build-compile-cache.js
	@touch $@

build: $(ADDON) dist/.tsc-stamp dist/bundle/.stamp dist/protos.json dist/proto_annotations.json dist/compile_cache/.stamp
	@node scripts/gen-build-info.js

run: build
	./bin/proxy -c configs/default.yaml

# A background job of a non-interactive shell ignores SIGINT: the trap stops the server when the
# proxy exits, whether Ctrl-C or anything else ended it.
xds-demo: build
	@node scripts/xds-demo-server.js & server=$$!; \
	trap 'kill $$server 2>/dev/null; wait $$server' EXIT; \
	./bin/proxy -c configs/xds-demo.yaml --disable-hot-restart --concurrency 2

# The spec reporter ends with every failing test and its error, so a log's tail names the failure.
test: build
	bash scripts/install-test-deps.sh
	node --test --test-concurrency=2 --test-reporter=spec dist/test/unit dist/test/integration

fuzz: build
	node --expose-gc dist/test/fuzz/run.js

bench: build
	bash scripts/install-bench-deps.sh
	node dist/bench/run.js
	node dist/bench/hot_restart.js
	node dist/bench/idle_connections.js
	node dist/bench/worker_scaling.js
	node dist/bench/stats_scale.js
	node dist/bench/eds_update.js
	node dist/bench/cds_scale.js
	node dist/bench/xds_push.js
	node --expose-gc dist/bench/prometheus_exposition.js
	node dist/bench/ipc_channel.js
	node dist/bench/pick_cost.js
	node dist/bench/lb_table_build.js
	node dist/bench/lb_picks.js

bench-compare: build
	bash scripts/install-bench-deps.sh
	node dist/bench/compare.js "$(BASE)"

soak: build
	bash scripts/install-bench-deps.sh
	node dist/bench/soak.js

bench-profile: build
	bash scripts/install-bench-deps.sh
	node dist/bench/profile.js

clean:
	rm -rf dist native/target $(ADDON)
