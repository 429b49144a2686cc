# Shared by the end-to-end scripts: one "ok - ..." / "not ok - ..." line per check, and a
# closing "N passed, N failed" line, with ", N skipped" when a check could not run here
# (scripts/test adds these up and reports skips as skips, never as passes).
# shellcheck shell=bash

passed=0
failed=0
skipped=0
# skip DESCRIPTION REASON: a check that cannot run on this machine (TAP's "# SKIP").
skip() { skipped=$((skipped + 1)); echo "ok - $1 # SKIP $2"; }
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
    if [ "$skipped" -gt 0 ]; then
        echo "$passed passed, $failed failed, $skipped skipped"
    else
        echo "$passed passed, $failed failed"
    fi
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit $?
}

