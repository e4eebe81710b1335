#!/bin/sh
# --prompt-file and --text-file read only a regular file, or standard input when given "-", and at
# most 64 MiB of either: a device that never ends (/dev/zero, /dev/urandom), a FIFO with no writer,
# a directory and a larger file each fail at once (exit status 1, one line naming the problem)
# instead of reading without end or blocking. Usage: refuse_text_files.sh TILEGRAPH
set -u
tilegraph=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo"
head -c $((64 * 1024 * 1024 + 1)) /dev/zero | tr '\0' 'a' > "$dir/large.txt"
status=0
# check DESCRIPTION EXPECTED-STDERR-PATTERN COMMAND...: within 20 s, exit status 1 and that line.
check() {
  what=$1 pattern=$2
  shift 2
  timeout 20 "$@" > /dev/null 2> "$dir/stderr" < "${input:-/dev/null}"
  code=$?
  echo "$what: exit status $code: $(cat "$dir/stderr")"
  if [ $code -ne 1 ] || ! grep -q "^tilegraph: error: $pattern$" "$dir/stderr"; then
    echo "  FAILED: expected exit status 1 and 'tilegraph: error: $pattern'"
    status=1
  fi
}
for option in "run --prompt-file" "perplexity --text-file"; do
  name=${option#* }
  check "$option /dev/zero" "$name: '/dev/zero' is not a regular file (it is a character device)" \
    "$tilegraph" $option /dev/zero
  check "$option /dev/urandom" "$name: '/dev/urandom' is not a regular file (it is a character device)" \
    "$tilegraph" $option /dev/urandom
  check "$option FIFO" "$name: '$dir/fifo' is not a regular file (it is a FIFO)" "$tilegraph" $option "$dir/fifo"
  check "$option directory" "$name: '$dir' is not a regular file (it is a directory)" "$tilegraph" $option "$dir"
  check "$option 64 MiB + 1 byte" "$name: '$dir/large.txt' is larger than the limit of 67108864 bytes (64 MiB)" \
    "$tilegraph" $option "$dir/large.txt"
  input=/dev/zero check "$option - from /dev/zero" \
    "$name: standard input is larger than the limit of 67108864 bytes (64 MiB)" "$tilegraph" $option -
  input=/dev/urandom check "$option - from /dev/urandom" \
    "$name: standard input is larger than the limit of 67108864 bytes (64 MiB)" "$tilegraph" $option -
done
# Standard input within the limit is the prompt, as the same text in a file would be.
ids=$(printf 'Hi</s>you\n' | "$tilegraph" run --prompt-file - --tokens 1 | grep 'prompt ids')
echo "run --prompt-file - from a pipe: $ids"
echo "$ids" | grep -q "prompt ids (9): *1 259 75 108 2 259 124 114 120$" || status=1
exit $status
