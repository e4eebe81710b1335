#!/bin/sh
# tilegraph run's progress line, on a pseudo-terminal that script(1) provides: it shows the tokens
# done, and a decode rate only once a decode step has been timed (the first update, after the
# prefill, has none to show); with stderr piped, none of it is printed. Usage: run_progress.sh TILEGRAPH
set -u
tilegraph=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "$1"
  exit 1
}

script -qec "'$tilegraph' run --tokens 40" /dev/null < /dev/null > "$dir/terminal" || fail "run failed on a terminal"
# Each update starts with a carriage return.
updates=$(tr '\r' '\n' < "$dir/terminal" | grep -aE '^  [0-9]+/40 tokens')
first=$(echo "$updates" | head -n 1)
last=$(echo "$updates" | tail -n 1)
echo "first update: $first"
echo "last update: $last"
echo "$first" | grep -q '^  1/40 tokens' || fail "no progress line on the terminal"
echo "$first" | grep -q 'tok/s' && fail "the first update shows a rate before any decode step was timed"
echo "$last" | grep -Eq '^  40/40 tokens, [0-9.]+ tok/s decode' || fail "the last update shows no rate"

# stdout on the terminal, stderr into a pipe.
script -qec "exec 3>&1; '$tilegraph' run --tokens 40 2>&1 1>&3 3>&- | cat > '$dir/stderr'" /dev/null < /dev/null \
    > "$dir/terminal" || fail "run failed with stderr piped"
grep -aq 'generated ids (40)' "$dir/terminal" || fail "no results on the terminal"
grep -aq '/40 tokens' "$dir/stderr" "$dir/terminal" && fail "a progress line with stderr piped"
[ -s "$dir/stderr" ] && fail "stderr piped is not empty: $(cat "$dir/stderr")"
echo "progress on a terminal only, its rate once there is one"
