#!/bin/sh
# plexus-smi --json with plugin paths that are not UTF-8 (Linux paths are any
# bytes): the output must parse as JSON, each invalid byte shown as U+FFFD and
# well-formed UTF-8 kept. Usage: check_smi_json_bytes.sh PLEXUS_SMI
set -eu
smi=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/plexus-smi-bytes.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# 0xff alone; an overlong '/' (0xc0 0xaf); a cut 3-byte sequence; a valid 'é'.
name=$(printf 'bad\377-\300\257-\342\202-\303\251.so')
printf 'junk' > "$dir/$name"
out=$(PLEXUS_PLUGIN_PATH="$dir/$name" "$smi" --json)
# strict: under the C locale Python would otherwise let stray bytes through
printf '%s\n' "$out" | PYTHONIOENCODING=utf-8:strict python3 -m json.tool > /dev/null ||
  { echo "not UTF-8 JSON: $out"; exit 1; }
printf '%s\n' "$out" | python3 -c '
import json, sys
files = [p["file"] for p in json.loads(sys.stdin.buffer.read().decode("utf-8"))["plugins"]]
want = "bad\ufffd-\ufffd\ufffd-\ufffd\ufffd-\u00e9.so"
assert any(f.endswith("/" + want) for f in files), files
print("plexus-smi --json: parsed; bytes shown as", ascii(want))
'
