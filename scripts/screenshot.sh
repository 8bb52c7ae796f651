#!/usr/bin/env bash
# Takes the screenshot of adk-go's web UI kept in docs/: the example agent, run through adk-go's
# launcher (`example web`), showing a session adkctx compacted: every stored turn, with each
# compaction shown as a notice where it happened (the model's requests got the summary instead).
#
#   scripts/screenshot.sh [output.png]     # default: docs/webui-full-conversation.png
#   TURNS=12 HEIGHT=7000 scripts/screenshot.sh   # the defaults: the whole 12-turn session
#
# It installs Debian's chromium and Material Icons font when they are missing (needs root),
# pre-fills a session with the offline demo (scripted turns: the sliding window compacts more
# than once), serves it with `example web` on a loopback port and lets headless Chromium load
# the session's page. The server and the browser run in a network namespace of their own with
# only a loopback interface when `unshare` allows it (adk-go's launcher listens on every
# interface). Not run by `make test` or CI.
#
# The web UI loads its icon fonts from fonts.gstatic.com, which the namespace (or a machine
# without network) cannot reach: the icons would show as their names. A small HTTPS server on
# loopback answers for that host instead (Chromium maps the name to it and accepts its
# throwaway certificate) with Debian's Material Icons font, whose ligatures name the same icons;
# the names the UI uses that only Material Symbols has (robot_2, robot, thumb_up_filled,
# thumb_down_filled) are added to it with fontTools as ligatures of their nearest icons.
# The UI's text font (Google Sans) is not packaged: Chromium uses a local sans-serif.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/webui-full-conversation.png}"
port="${PORT:-8765}"
turns="${TURNS:-12}"
height="${HEIGHT:-7000}"
iconfont=/usr/share/fonts/truetype/material-design-icons-iconfont/MaterialIcons-Regular.ttf

if ! command -v chromium >/dev/null || [ ! -f "$iconfont" ] ||
	! /usr/bin/python3 -c 'import fontTools, brotli' 2>/dev/null; then
	apt-get update -qq && apt-get install -y -qq chromium fonts-material-design-icons-iconfont \
		python3-fonttools python3-brotli >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd example && go build -o "$work/example" .)

icons="$work/icons.woff2"
/usr/bin/python3 - "$iconfont" "$icons" <<'PY'
import sys
from fontTools.ttLib import TTFont
from fontTools.ttLib.tables.otTables import Ligature

font = TTFont(sys.argv[1])
glyph = font.getBestCmap()
added = {"robot_2": "smart_toy", "robot": "smart_toy",
         "thumb_up_filled": "thumb_up", "thumb_down_filled": "thumb_down"}
for lookup in font["GSUB"].table.LookupList.Lookup:
    for table in lookup.SubTable:
        table = getattr(table, "ExtSubTable", table)
        ligatures = getattr(table, "ligatures", None)
        if not ligatures:
            continue
        known = {tuple([first] + l.Component): l.LigGlyph for first, ls in ligatures.items() for l in ls}
        for name, like in added.items():
            target = known.get(tuple(glyph[ord(c)] for c in like))
            if target is None:
                continue
            chars = [glyph[ord(c)] for c in name]
            lig = Ligature()
            lig.Component, lig.LigGlyph = chars[1:], target
            ligatures.setdefault(chars[0], []).append(lig)
        for ls in ligatures.values():  # the longest name first, so robot_2 is not read as robot
            ls.sort(key=lambda l: -len(l.Component))
font.flavor = "woff2"
font.save(sys.argv[2])
PY

# The stand-in for fonts.gstatic.com: any icon font the UI asks for is Material Icons; other
# fonts are not found, so the browser falls back to local ones. CORS lets the UI's page use it.
mkdir -p "$work/fonts"
printf 'module fonts\n\ngo 1.22\n' >"$work/fonts/go.mod"
cat >"$work/fonts/main.go" <<'GO'
package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	icons := os.Args[1]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if strings.HasPrefix(r.URL.Path, "/s/materialicons") || strings.HasPrefix(r.URL.Path, "/s/materialsymbols") {
			w.Header().Set("Content-Type", "font/woff2")
			http.ServeFile(w, r, icons)
			return
		}
		http.NotFound(w, r)
	}))
	srv.StartTLS()
	defer srv.Close()
	fmt.Println(strings.TrimPrefix(srv.URL, "https://"))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}
GO
(cd "$work/fonts" && go build -o "$work/fontserver" .)

# A compacted session: the demo stores it in the SQLite file under app "coder", with the full
# text of truncated tool results as artifacts in the same file.
XDG_CONFIG_HOME="$work" "$work/example" -demo -turns "$turns" -report json \
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
"$work/fontserver" "$icons" >"$work/fonts.addr" 2>"$work/fonts.log" &
fonts=\$!
trap 'kill \$server \$fonts 2>/dev/null; wait \$server \$fonts 2>/dev/null || true' EXIT
for _ in \$(seq 100); do
	[ -s "$work/fonts.addr" ] && curl -fsS "http://127.0.0.1:$port/api/list-apps" >/dev/null 2>&1 && break
	sleep 0.2
done
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--host-resolver-rules="MAP fonts.gstatic.com \$(cat "$work/fonts.addr")" --ignore-certificate-errors \
	--user-data-dir="$work/chromium" --hide-scrollbars --window-size=1400,$height \
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
