#!/usr/bin/env bash
# Fuzzing (docs/SECURITY.md, item 1): builds the libFuzzer targets in Fuzz/Targets with
# AddressSanitizer and runs each briefly (about two minutes in all), replaying the committed
# corpus (seeds and every input that once crashed) first. Longer runs: scripts/fuzz --long.
#
#   bash Tests/EndToEnd/fuzz.sh     (as root, after scripts/build)
#
# Prints one "ok - ..." / "not ok - ..." line per target and ends with "N passed, N failed".
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec "$repo/scripts/fuzz" "$@"
