#!/usr/bin/env bash
# Takes the screenshot of adk-go's web UI kept in docs/: the example agent, run through adk-go's
# launcher (`example web`), showing a session whose older turns adkctx replaced by a summary.
#
#   scripts/screenshot.sh [output.png]     # default: docs/webui-compacted-session.png
#
# It installs Debian's chromium when it is missing (needs root), pre-fills a session with the
# offline demo (7 scripted turns: the sliding window compacts after the last), serves it with `example web` on a
# loopback port and lets headless Chromium load the session's page. The server and the browser
# run in a network namespace of their own with only a loopback interface when `unshare` allows
# it (adk-go's launcher listens on every interface). Not run by `make test` or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/webui-compacted-session.png}"
port="${PORT:-8765}"

if ! command -v chromium >/dev/null; then
	apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd example && go build -o "$work/example" .)

# A session with a summary: the demo stores it in the SQLite file under app "coder".
XDG_CONFIG_HOME="$work" "$work/example" -demo -turns 7 -report json \
	-db "$work/sessions.db" -log "$work/log.jsonl" >"$work/report.json"
session="$(jq -r .session_id "$work/report.json")"
user="developer"
echo "session $session: $(jq -r .compactions "$work/report.json") compactions, $(jq -r .events_stored "$work/report.json") events stored"

cat >"$work/serve-and-shoot.sh" <<EOF
set -euo pipefail
ip link set lo up 2>/dev/null || true
XDG_CONFIG_HOME="$work" "$work/example" -db "$work/sessions.db" -log "$work/log.jsonl" \
	web -port $port api webui -api_server_address http://127.0.0.1:$port/api >"$work/server.log" 2>&1 &
server=\$!
trap 'kill \$server 2>/dev/null; wait \$server 2>/dev/null || true' EXIT
for _ in \$(seq 100); do
	curl -fsS "http://127.0.0.1:$port/api/list-apps" >/dev/null 2>&1 && break
	sleep 0.2
done
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$work/chromium" --hide-scrollbars --window-size=1400,2400 \
	--virtual-time-budget=20000 --screenshot="$work/shot.png" \
	"http://127.0.0.1:$port/ui/?app=coder&userId=$user&session=$session" >"$work/chromium.log" 2>&1
EOF
if unshare -n true 2>/dev/null; then
	unshare -n bash "$work/serve-and-shoot.sh"
else
	bash "$work/serve-and-shoot.sh"
fi
mkdir -p "$(dirname "$out")"
cp "$work/shot.png" "$out"
echo "wrote $out"
