#!/usr/bin/env bash
# Takes the README's screenshots of the web UI on a real case: the seed 003
# log shipper (examples/logship) in its encoder mode, whose remaining
# culprit, a state file synced after every batch, shows only off CPU.
# Needs Debian's chromium (apt-get install -y chromium). Writes
# docs/img/case-*.png.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/calltrail" ./cmd/calltrail
"$tmp/calltrail" run -o "$tmp/logship.trace" ./examples/logship -mode encoder -n 200000 >/dev/null
"$tmp/calltrail" serve "$tmp/logship.trace" >"$tmp/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do
	url=$(grep -o 'http://[^ ]*/' "$tmp/serve.log" || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/serve.log"; exit 1; }

shot() { # name, view
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$tmp/chromium" --window-size=1280,800 --hide-scrollbars \
		--virtual-time-budget=5000 --screenshot="docs/img/case-$1.png" "$url#$2" 2>/dev/null
	echo "docs/img/case-$1.png"
}
shot overview overview
shot flame-wait 'flame?weight=wait'
shot function 'func?name=main.(*shipper).saveState'
