#!/bin/sh
# gguf-gen interrupted while it writes: it must die of the signal and leave nothing beside the
# output, not even its hidden temporary. Usage: interrupt_gguf_gen.sh TILEGRAPH SIGNAL
# (KILL too: the temporary has no name until it is complete, where the file system offers
# O_TMPFILE, as ext4, xfs, btrfs and tmpfs do.)
set -u
tilegraph=$1
signal=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# ~340 MiB of f32 weights: writing and syncing them takes long enough to be caught at it.
"$tilegraph" gguf-gen --config small --n-embd 1024 --n-head 8 --n-ff 2816 --n-vocab 32000 --n-layer 2 \
    --type f32 -o "$dir/model.gguf" >/dev/null &
pid=$!
tries=0
# Writing: the process has a file open in $dir (named or not).
until ls -l /proc/$pid/fd 2>/dev/null | grep -q "$dir/"; do
  tries=$((tries + 1))
  if [ $tries -gt 3000 ] || ! kill -0 $pid 2>/dev/null; then
    echo "never saw it writing"
    exit 1
  fi
  sleep 0.01
done
kill -s "$signal" $pid
wait $pid
status=$?
echo "status $status, left: $(ls -A "$dir" | tr '\n' ' ')"
[ $status -gt 128 ] && [ -z "$(ls -A "$dir")" ]
