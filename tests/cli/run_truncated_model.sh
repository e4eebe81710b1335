#!/bin/sh
# tilegraph run on a truncated GGUF file (an interrupted download or copy), cut in its data and in
# its metadata, mapped and read: exit status 1, one line on stderr naming the file and the byte
# where the problem is, nothing on stdout. Usage: run_truncated_model.sh TILEGRAPH
set -u
tilegraph=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$tilegraph" gguf-gen --config tiny -o "$dir/whole.gguf" > /dev/null || exit 1
size=$(wc -c < "$dir/whole.gguf")
status=0
for cut in $((size / 2)) 100; do
  head -c "$cut" "$dir/whole.gguf" > "$dir/cut.gguf"
  for access in "" --no-mmap; do
    "$tilegraph" run --model "$dir/cut.gguf" $access > "$dir/stdout" 2> "$dir/stderr"
    code=$?
    echo "cut at $cut of $size bytes ${access:-mapped}: exit status $code, stdout $(wc -c < "$dir/stdout") bytes, stderr $(wc -l < "$dir/stderr") lines: $(cat "$dir/stderr")"
    if [ $code -ne 1 ] || [ -s "$dir/stdout" ] || [ "$(wc -l < "$dir/stderr")" -ne 1 ] ||
       ! grep -q "^tilegraph: error: gguf: $dir/cut.gguf: .* (at byte [0-9]*)$" "$dir/stderr"; then
      status=1
    fi
    # A tensor's data cut off is located at its offset field, which holds the offset named.
    if grep -q 'data \[' "$dir/stderr"; then
      offset=$(sed 's/.*data \[\([0-9]*\),.*/\1/' "$dir/stderr")
      at=$(sed 's/.*(at byte \([0-9]*\))$/\1/' "$dir/stderr")
      field=$(od -An -tu8 -j "$at" -N 8 "$dir/cut.gguf" | tr -d ' ')
      echo "  byte $at holds $field, the offset $offset"
      [ "$field" = "$offset" ] || status=1
    fi
  done
done
exit $status
