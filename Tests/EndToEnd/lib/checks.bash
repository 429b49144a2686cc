# Shared by the end-to-end scripts: one "ok - ..." / "not ok - ..." line per check, and a
# closing "N passed, N failed" line (scripts/test adds these up).
# shellcheck shell=bash

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() {
    failed=$((failed + 1)); echo "not ok - $1"
    shift
    local f
    for f in "$@"; do
        [ -e "$f" ] || continue
        echo "#   --- ${f##*/}"
        awk '{ print "#   | " $0 }' "$f"
    done
}
# check DESCRIPTION COMMAND... [-- FILES TO SHOW ON FAILURE...]
check() {
    local description=$1; shift
    local -a cmd=() files=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do cmd+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    files=("$@")
    if "${cmd[@]}"; then pass "$description"; else fail "$description" "${files[@]}"; fi
}
finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit $?
}

