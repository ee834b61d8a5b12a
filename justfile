# poolsolve recipes. `just` alone lists them; none is needed by the README's
# two commands, which work with plain `go`.

# List the recipes.
default:
    @just --list

# Build the poolsolve binary into ./bin.
build:
    go build -o bin/poolsolve .

# Run the tests (the README's test command).
test:
    go test ./...

# The race detector on the packages that run goroutines, as .ci/run does.
race:
    go test -race ./agent/ ./gateway/ ./inventory/ ./answer/
    go test -race -short ./solver/ ./cli/

# Vet and check formatting.
lint:
    go vet ./...
    test -z "$(gofmt -l .)"

# Plan the three-Spark example fleet.
plan-example *ARGS:
    go run . plan --fleet examples/spark-fleet.json {{ARGS}}

# Print the example fleet as the planner sees it.
catalog-example:
    go run . catalog --fleet examples/spark-fleet.json

# Rewrite golden files after a deliberate change (review the diff!).
golden:
    UPDATE_GOLDEN=1 go test ./...

# Run every fuzz target, whole-stage ones too (default 20000 inputs each).
fuzz TIME="20000x":
    FUZZ_ALL=1 FUZZTIME={{TIME}} bash .ci/run

# Go benchmarks of the planner, by size.
bench:
    go test -run '^$' -bench . -benchmem ./solver/ ./benchmarks/

# What CI runs on a fresh machine.
ci:
    bash .ci/run
