#!/usr/bin/env bash
# buildbench.sh measures what a traced build costs beside a plain one, on
# a real module from the Go module proxy (gojq by default): the first
# calltrail build after a warm plain build, against a cold plain build,
# each with a build cache of its own, and the traced binary's size
# against the plain one's. Usage: scripts/buildbench.sh [MODULE@VERSION PKG] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
mod=${1:-github.com/itchyny/gojq@v0.12.17}
pkg=${2:-./cmd/gojq}
runs=${3:-3}
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
go build -o "$tmp/calltrail" ./cmd/calltrail
src=$(go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
cp -r "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
cd "$tmp/src"
go mod download
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); awk "BEGIN { print $t1 - $t0 }"; }
ratio() { awk "BEGIN { print $1 / $2 }"; }
for i in $(seq "$runs"); do
	export GOCACHE="$tmp/cache$i"
	cold=$(secs go build -o "$tmp/plain" "$pkg")
	warm=$(secs go build -o "$tmp/plain" "$pkg")
	traced=$(secs "$tmp/calltrail" build -o "$tmp/traced" "$pkg")
	again=$(secs "$tmp/calltrail" build -o "$tmp/traced" "$pkg")
	plain_size=$(stat -c %s "$tmp/plain")
	traced_size=$(stat -c %s "$tmp/traced")
	printf '%s: cold plain %.2fs, warm plain %.2fs, traced after warm plain %.2fs (%.2fx cold), traced again %.2fs; binary %d -> %d bytes (%.2fx)\n' \
		"$mod" "$cold" "$warm" "$traced" "$(ratio "$traced" "$cold")" "$again" "$plain_size" "$traced_size" "$(ratio "$traced_size" "$plain_size")"
	rm -rf "$GOCACHE"
done
