#!/usr/bin/env bash
# Load (docs/SECURITY.md, item 7): 64 concurrent PAM transactions of mixed outcomes against one
# store, each worker running one transaction after another through build/pam-harness, for
# LOAD_SECONDS (default 20; --long: 60). Then: every transaction got its role's result (no
# error surfaced to PAM: no "store unavailable", no system error), every counter equals the
# failures the workers saw, and the audit log holds one row per transaction.
#
#   bash Tests/EndToEnd/load.sh [--long]     (as root, after scripts/build)
#
# Roles (workers x role):
#   16 wrong PIN         mail, news (8 each)  PAM_AUTHINFO_UNAVAIL  passcode_failures += 1 (handed on to the password)
#    8 right PIN         daemon               PAM_SUCCESS           counters cleared
#    8 touch             nobody               PAM_SUCCESS           (own sensor socket each)
#    8 wrong finger      one user each        PAM_MAXTRIES          bio_failures += 1 (policy=biometrics, max_tries=1)
#    8 not enabled       bin                  PAM_IGNORE            (seen as PAM_TRY_AGAIN, see below), no audit
#    8 unknown user      (no such user)       PAM_USER_UNKNOWN      no row, no audit
#    8 no passcode       sys                  PAM_AUTHINFO_UNAVAIL  (after the same Argon2id work)
# The PIN roles use sensor=libfprint (no reader in this build) so they go straight to the PIN.
# Wrong-finger workers pause 0.1 s between transactions so no counter nears bio_lockout=1000
# in a minute. Prints "N passed, N failed" last.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${BUILD_DIR:-$repo/build}"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"
# shellcheck source=lib/world.bash
source "$here/lib/world.bash"

seconds=${LOAD_SECONDS:-20}
[ "${1:-}" = --long ] && seconds=60

w=$(mktemp -d /tmp/bu-load.XXXXXX) && chmod 0700 "$w"
trap 'rm -rf -- "$w"' EXIT
cli=("$build/biounlock" --db "$w/store/biounlock.db" --sensor simulated --sim-socket "$w/sim/s")
finger_users=(games man lp uucp proxy www-data backup list)

setup() {
    world_create "$w" "$build/biounlock" || return 1
    local u
    for u in mail news "${finger_users[@]}"; do
        "${cli[@]}" enrol "$u" --timeout 20 >/dev/null &
        local pid=$! i
        for i in 1 2 3 4 5; do "$build/biounlock" --sim-socket "$w/sim/s" sim scan "$u-finger" --wait 10 >/dev/null || return 1; done
        wait $pid || return 1
    done
    for u in mail news; do
        echo 2468 | "${cli[@]}" passcode set "$u" --stdin >/dev/null && "${cli[@]}" enable "$u" >/dev/null || return 1
    done
    for u in "${finger_users[@]}"; do "${cli[@]}" --policy biometrics enable "$u" >/dev/null || return 1; done
    local module="$build/pam_biounlock.so" after="auth requisite pam_debug.so auth=try_again"
    local common="require_passcode=none passcode_lockout=1000 bio_lockout=1000"
    world_service "$w" pin "$module" "$common sensor=libfprint" && echo "$after" >>"$w/pam.d/pin"
    for i in $(seq 1 16); do
        world_service "$w" "touch$i" "$module" "$common sim_socket=$w/sim/$i timeout=10 max_tries=1" && echo "$after" >>"$w/pam.d/touch$i"
        world_service "$w" "finger$i" "$module" "$common sim_socket=$w/sim/f$i timeout=10 max_tries=1 policy=biometrics"
    done
}
if ! setup >"$w/setup.log" 2>&1; then
    fail "load: set up the store (build/biounlock enrol, passcode set, enable)" "$w/setup.log"
    finish
fi

# worker ROLE USER SERVICE [ANSWER] [TOUCH-ID] [SOCKET]: transactions until the deadline; one
# "ROLE USER CODE" line per transaction in $w/out/ROLE.USER.$BASHPID.
end=$(( $(date +%s) + seconds ))
mkdir -m 0700 "$w/out"
worker() {
    local role=$1 user=$2 service=$3 answer=${4:-} touch=${5:-} socket=${6:-}
    local out="$w/out/$role.$user.$BASHPID" tmp="$w/out/.tmp.$BASHPID"
    local args=(--confdir "$w/pam.d" --service "$service" --user "$user")
    [ -n "$answer" ] && args+=(--answer "$answer")
    while [ "$(date +%s)" -lt "$end" ]; do
        if [ -n "$touch" ]; then
            "$build/pam-harness" "${args[@]}" >"$tmp" 2>&1 &
            local pid=$!
            "$build/biounlock" --sim-socket "$socket" sim scan "$touch" --wait 10 >/dev/null 2>&1
            wait "$pid"
        else
            "$build/pam-harness" "${args[@]}" >"$tmp" 2>&1
        fi
        echo "$role $user $(awk '/^RESULT /{ c = $3 } END { print c ? c : "NONE" }' "$tmp")" >>"$out"
        if [ "$role" = wrong-finger ]; then sleep 0.1; fi
    done
}

started=$(date +%s.%N)
for i in $(seq 1 8); do
    worker wrong-pin mail pin 1357 &
    worker wrong-pin news pin 9753 &
    worker right-pin daemon pin 2468 &
    worker touch nobody "touch$i" "" nobody-right-index "$w/sim/$i" &
    worker wrong-finger "${finger_users[$((i - 1))]}" "finger$i" "" mallory "$w/sim/f$i" &
    worker not-enabled bin pin &
    worker unknown-user biounlock-no-such-user pin &
    worker no-passcode sys pin &
done
wait
elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
cat "$w"/out/[a-z]* >"$w/results"

declare -A expected=([wrong-pin]=PAM_AUTHINFO_UNAVAIL [right-pin]=PAM_SUCCESS [touch]=PAM_SUCCESS [wrong-finger]=PAM_MAXTRIES
                     [not-enabled]=PAM_TRY_AGAIN [unknown-user]=PAM_USER_UNKNOWN [no-passcode]=PAM_AUTHINFO_UNAVAIL)
total=$(wc -l <"$w/results")
echo "# $total transactions by 64 concurrent workers in $elapsed s ($(awk -v n="$total" -v t="$elapsed" 'BEGIN { printf "%.0f", n / t }') per second)"
awk '{ n[$1 " " $3]++ } END { for (k in n) print "#   " k ": " n[k] }' "$w/results" | sort

unexpected=$(awk -v spec="$(for r in "${!expected[@]}"; do printf '%s=%s ' "$r" "${expected[$r]}"; done)" '
    BEGIN { split(spec, pairs, " "); for (i in pairs) { split(pairs[i], kv, "="); want[kv[1]] = kv[2] } }
    $3 != want[$1] { print }' "$w/results" | sort | uniq -c)
check "load: all $total transactions got their role's result (no error surfaced to PAM)" test -z "$unexpected"
[ -n "$unexpected" ] && echo "$unexpected" | sed 's/^/#   unexpected: /'
for role in "${!expected[@]}"; do
    n=$(awk -v r="$role" '$1 == r' "$w/results" | wc -l)
    check "load: the $role workers completed transactions ($n)" test "$n" -gt 0
done

db="$w/store/biounlock.db"
q() { sqlite3 -cmd '.timeout 5000' "$db" "$1"; }
seen() { awk -v r="$1" -v u="$2" -v c="$3" '$1 == r && $2 == u && $3 == c' "$w/results" | wc -l; }
for u in mail news; do
    n=$(seen wrong-pin "$u" PAM_AUTHINFO_UNAVAIL)
    check "load: $u's passcode_failures equal the $n wrong PINs the workers saw" test "$(q "SELECT passcode_failures FROM users WHERE name = '$u'")" = "$n"
done
for u in "${finger_users[@]}"; do
    n=$(seen wrong-finger "$u" PAM_MAXTRIES)
    check "load: $u's bio_failures equal the $n wrong fingers the worker saw" test "$(q "SELECT bio_failures FROM users WHERE name = '$u'")" = "$n"
done
check "load: daemon's and nobody's counters are 0 (every attempt succeeded)" \
    test "$(q "SELECT sum(bio_failures + passcode_failures) FROM users WHERE name IN ('daemon', 'nobody')")" = 0

# One audit row per transaction biounlock took part in: not for an unknown user, nor for one
# who has not enabled biometric unlock (PAM_IGNORE costs no write; see scripts/bench).
audit=$(q "SELECT count(*) FROM events")
reached=$(awk '$1 != "unknown-user" && $1 != "not-enabled"' "$w/results" | wc -l)
check "load: the audit log has one row per transaction ($audit rows, $reached transactions)" test "$audit" = "$reached"
declare -A label=([PAM_SUCCESS]=success [PAM_MAXTRIES]=maxtries [PAM_TRY_AGAIN]=ignore [PAM_AUTHINFO_UNAVAIL]=unavailable)
mismatch=""
while read -r role user code count; do
    rows=$(q "SELECT count(*) FROM events WHERE user = '$user' AND outcome = '${label[$code]:-?}'")
    [ "$rows" = "$count" ] || mismatch+="$role $user $code: $count seen, $rows audited; "
done < <(awk '$1 != "unknown-user" && $1 != "not-enabled" { n[$1 " " $2 " " $3]++ } END { for (k in n) print k, n[k] }' "$w/results")
check "load: the audit rows match each user's results exactly" test -z "$mismatch"
[ -n "$mismatch" ] && echo "#   $mismatch"
check "load: the store passes SQLite's integrity check" test "$(q 'PRAGMA integrity_check')" = ok

finish
