#!/bin/sh
# `tilegraph compile --emit html` writes a self-contained page that headless Chromium renders
# without a script error: the page marks <body data-rendered="1"> when its script has drawn
# everything and data-error="1" on any error; the SPM chart and the timeline are SVG rectangles.
set -eu
cli=$1
browser=$(command -v chromium || true)
[ -n "$browser" ] || { echo "chromium is not installed (scripts/bootstrap test installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" compile --emit html -o "$tmp/page.html"
grep -q 'src=\|href=' "$tmp/page.html" && { echo "the page loads an outside resource"; exit 1; }
# Chromium refuses to run as root inside its sandbox; the page is our own file.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$tmp/page.html" \
  > "$tmp/dom.html" 2> "$tmp/chromium.log" || { cat "$tmp/chromium.log"; exit 1; }
if grep -q 'data-error="1"' "$tmp/dom.html"; then
  grep -o 'id="error">[^<]*' "$tmp/dom.html"
  exit 1
fi
grep -q 'data-rendered="1"' "$tmp/dom.html" || { echo "the page's script did not finish"; exit 1; }
rects=$(grep -o '<rect' "$tmp/dom.html" | wc -l)
[ "$rects" -gt 10 ] || { echo "only $rects SVG rectangles drawn"; exit 1; }
echo "rendered, $rects rectangles"
