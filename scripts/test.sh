#!/usr/bin/env bash
# Runs calltrail's whole test suite: formatting and static checks, the tests
# with and without the calltrail build tag and under the race detector, a
# short fuzzing run of the trace reader, the runtime's tests (with its
# internal packages') on every Go release from go1.22 (toolchains come
# from the Go module proxy), and on linux/arm64 and linux/riscv64 under
# qemu (installed from Debian's packages when missing), and on linux/386.
# Cross-builds for darwin/arm64 and windows/amd64.
# The web UI's browser tests drive headless Chromium (installed from
# Debian's packages when missing) in every pass of the tests.
# The store's tests run against ClickHouse (Debian's clickhouse-server,
# installed when missing): two servers as the shards of a cluster; the
# OTLP tests against an OpenTelemetry Collector built from its modules.
#
# Some steps that do not depend on each other run two at a time, the
# output of the one in the background shown when it ends: most of them
# leave a core idle much of the time (a test waiting for the program it
# built, a download, an install), and the machine has two.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

tmp=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$tmp"' EXIT

# background NAME FUNCTION runs FUNCTION in the background, its output
# kept for finish NAME, which waits for it, shows what it printed and
# stops the script if it failed.
background() {
	( set -euo pipefail; "$2" ) >"$tmp/$1.log" 2>&1 &
	printf '%s' $! >"$tmp/$1.pid"
}
finish() {
	local status=0
	wait "$(cat "$tmp/$1.pid")" || status=$?
	cat "$tmp/$1.log"
	if [ "$status" != 0 ]; then
		echo "FAILED: $1 (exit $status)"
		exit "$status"
	fi
}

if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi

# What the tests run, installed when missing: Debian's chromium (the web
# UI's browser tests drive it, and here they must run, not skip),
# clickhouse-server (the store's tests start it themselves, with a
# configuration of their own under a temporary directory, loopback only)
# and qemu-user; and the OpenTelemetry Collector, built from its modules.
install() {
	need=()
	command -v chromium >/dev/null || need+=(chromium)
	command -v clickhouse-server >/dev/null || [ -x /usr/sbin/clickhouse-server ] || need+=(clickhouse-server)
	{ command -v qemu-aarch64 >/dev/null && command -v qemu-riscv64 >/dev/null; } || need+=(qemu-user)
	if [ ${#need[@]} -gt 0 ]; then
		$sudo apt-get update -qq
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	fi
	go build -C scripts/otelcol -o "$tmp/otelcol" .
}
export CALLTRAIL_BROWSER=required CALLTRAIL_CLICKHOUSE=required CALLTRAIL_OTELCOL="$tmp/otelcol"

step "installing what the tests run (chromium, clickhouse-server, qemu-user, the OpenTelemetry Collector), beside the static checks"
background install install

step gofmt
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then
	echo "gofmt would change:" $bad
	exit 1
fi

step go vet
go vet ./...
go vet -tags calltrail ./...
go vet -tags calltrail,calltrail_exithook .

step staticcheck
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags calltrail ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags calltrail,calltrail_exithook .

step "installed"
finish install

# Every go test has an explicit limit, well above what it takes here. The
# long tests (TestRealModules, TestCaseStudies, TestHugeInputs, which
# CALLTRAIL_LONG lets run) run in the first pass only: they build
# calltrail and the programs they trace themselves, whatever the tags,
# and under the race detector reading their traces of tens of millions
# of calls would take most of the run. That pass runs alone: the case
# studies check where their programs' time goes, file syncs included,
# and another pass's builds and servers beside them change the answer.
step "tests (without the calltrail tag: guards compiled out), the long ones included"
CALLTRAIL_LONG=1 go test -count=1 -timeout 15m ./...

# The runtime (with its internal packages) on every supported Go
# release, toolchains from the Go module proxy; and on linux/arm64 and
# linux/riscv64 under qemu, and cross-built for darwin/arm64 and
# windows/amd64.
others() {
	echo "-- the runtime on every supported Go release"
	for v in go1.22.12 go1.23.12 go1.24.13 go1.25.14; do
		echo "-- $v"
		GOTOOLCHAIN=$v go test -count=1 -tags calltrail . ./tracefile ./internal/gstate ./internal/clock ./internal/ring ./internal/gtable
	done
	echo "-- other platforms"
	echo "-- linux/386, 32-bit"
	GOARCH=386 go test -count=1 -tags calltrail .
	for arch in arm64 riscv64; do
		echo "-- linux/$arch under qemu"
		GOARCH=$arch go test -c -tags calltrail -o "$tmp/calltrail-$arch.test" .
		qemu_arch=$arch
		[ "$arch" = arm64 ] && qemu_arch=aarch64
		# The process tests build and run host binaries; the rest run here.
		(cd "$tmp" && "qemu-$qemu_arch" "./calltrail-$arch.test" -test.count=1 -test.skip 'TestProcess|TestCompiledOut')
		for pkg in tracefile internal/gstate internal/clock internal/ring internal/gtable; do
			GOARCH=$arch go test -c -o "$tmp/pkg-$arch.test" "./$pkg"
			(cd "./$pkg" && "qemu-$qemu_arch" "$tmp/pkg-$arch.test" -test.count=1)
		done
	done
	for target in darwin/arm64 windows/amd64; do
		echo "-- $target: build"
		GOOS=${target%/*} GOARCH=${target#*/} go vet -tags calltrail ./...
		GOOS=${target%/*} GOARCH=${target#*/} go test -c -tags calltrail -o "$tmp/calltrail-${target%/*}.test" .
		GOOS=${target%/*} GOARCH=${target#*/} go build -o "$tmp/calltrail-cmd-${target%/*}" ./cmd/calltrail
	done
}
# They run in the background until the end of the script: the race
# detector's pass, the pass with the tag and the fuzzing beside them keep
# the cores busy while qemu runs on one.
step "tests under the race detector; beside them, the runtime on every supported Go release and on other platforms, until the end"
background others others
go test -count=1 -timeout 15m -race -tags calltrail ./...

# tagged lists the packages whose test binaries the calltrail tag changes:
# those that import, themselves or through their tests, a package with
# files the tag selects. The tests of the others would run twice the
# same binary. It leaves out cmd/calltrail, which imports the runtime
# only for its source (calltrail.Source) and has no guards: the tag adds
# an idle tracer to its test binary, and the race detector's pass above
# runs that binary, with the tag, already.
tagged() {
	local files='{{.ImportPath}} {{.GoFiles}} {{.CgoFiles}} {{.SFiles}} {{.TestGoFiles}} {{.XTestGoFiles}} {{.EmbedFiles}}'
	go list -deps -test -f "$files" ./... | LC_ALL=C sort >"$tmp/untagged.files"
	go list -deps -test -tags calltrail -f "$files" ./... | LC_ALL=C sort >"$tmp/tagged.files"
	{
		LC_ALL=C comm -3 "$tmp/untagged.files" "$tmp/tagged.files" | awk '{ print $1 }'
		echo --
		go list -test -tags calltrail -f '{{.ImportPath}} {{join .Deps " "}}' ./...
	} | awk '
		$0 == "--" { listing = 1; next }
		!listing { changed[$1] = 1; next }
		$1 ~ /\.test$/ {
			pkg = substr($1, 1, length($1) - 5)
			hit = changed[pkg]
			for (i = 2; i <= NF; i++) if (changed[$i]) hit = 1
			if (hit && pkg !~ /\/cmd\/calltrail$/) print pkg
		}'
}

step "tests (with the calltrail tag) of the packages it changes"
go test -count=1 -timeout 10m -tags calltrail $(tagged)

step "benchmarks run once, as a smoke test"
go test -count=1 -run '^$' -bench . -benchtime 1000x -tags calltrail . >/dev/null

step "fuzzing the trace reader, the web UI's parameters, instrument and undo, and every view of generated traces"
# Budgets are counts of inputs, each about 5-20 s here: a duration's
# deadline races Go's fuzzing coordinator (golang/go#75804), which then
# fails with "context deadline exceeded" and no failing input; and the
# minimizing of each new input is bounded by a count too (its default is
# a minute, in which nothing else runs). FUZZTIME (a count, 5000x, or a
# duration) overrides the budgets. FuzzViews, whose inputs run every view,
# minimizes each new input in at most 100 runs: with 1,000 it stood still
# for half a minute at each, most of its time, shrinking inputs that had
# passed (a failing one is reported either way).
go test -run '^$' -fuzz FuzzReader -fuzzminimizetime 1000x -fuzztime "${FUZZTIME:-500000x}" ./tracefile # each input read three ways: reading ahead or not, and taking Calls
go test -run '^$' -fuzz FuzzParams -fuzzminimizetime 1000x -fuzztime "${FUZZTIME:-25000x}" ./web
go test -run '^$' -fuzz FuzzUndo -fuzzminimizetime 1000x -fuzztime "${FUZZTIME:-150000x}" ./instrument
go test -run '^$' -fuzz FuzzViews -fuzzminimizetime 100x -fuzztime "${FUZZTIME:-2000x}" ./cmd/calltrail

step "the runtime on every supported Go release, and on other platforms"
finish others

step "all tests passed"
