# shellcheck shell=bash
# A private world for running the built module outside the sudo sandbox: a root-only
# directory with a store made by the real CLI, a simulated sensor socket directory, empty lid
# and logind directories, and a pam.d directory for pam_start_confdir. Used by the load test,
# scripts/fuzz and scripts/timing. Users are existing system accounts (the host's /etc/passwd is
# never touched):
#   daemon   finger daemon-right-index, PIN 2468, enabled
#   nobody   finger nobody-right-index, password hunter22, enabled (disabled for service "other")
#   sys      finger sys-right-index, no passcode, enabled (policy=biometrics)
#   bin      no row: biometric unlock not enabled
#
#   world_create DIR CLI      fills the empty root-only DIR using the CLI at path CLI
#   world_args DIR            the module arguments that point at DIR's store, sensor, lid, logind
#   world_service DIR NAME MODULE ARGS...   writes DIR/pam.d/NAME: MODULE with world_args, then ARGS

world_create() {
    local w=$1 cli=$2
    [ -x "$cli" ] || { echo "world: $cli is missing (run scripts/build)" >&2; return 1; }
    mkdir -m 0700 "$w/store" "$w/sim" "$w/pam.d" "$w/lid" "$w/sessions" || return 1
    local g=(--db "$w/store/biounlock.db" --sensor simulated --sim-socket "$w/sim/s")
    _world_enrol() { # USER ID: five simulated touches of ID while the CLI enrols
        "$cli" "${g[@]}" enrol "$1" --timeout 20 >/dev/null &
        local pid=$! i
        for i in 1 2 3 4 5; do "$cli" --sim-socket "$w/sim/s" sim scan "$2" --wait 10 >/dev/null || { kill $pid; return 1; }; done
        wait $pid
    }
    _world_enrol daemon daemon-right-index && _world_enrol nobody nobody-right-index && _world_enrol sys sys-right-index &&
    echo 2468 | "$cli" "${g[@]}" passcode set daemon --stdin >/dev/null &&
    echo hunter22 | "$cli" "${g[@]}" passcode set nobody --kind password --stdin >/dev/null &&
    "$cli" "${g[@]}" enable daemon >/dev/null && "$cli" "${g[@]}" enable nobody >/dev/null &&
    "$cli" "${g[@]}" disable nobody --service other >/dev/null &&
    "$cli" "${g[@]}" --policy biometrics enable sys >/dev/null
}

world_args() {
    local w=$1
    echo "db=$w/store/biounlock.db sensor=simulated sim_socket=$w/sim/s config=$w/none.conf lid_path=$w/lid logind_path=$w/sessions proc_path=$w/proc"
}

world_service() {
    local w=$1 name=$2 module=$3; shift 3
    echo "auth [success=done ignore=ignore default=die] $module $(world_args "$w") $*" >"$w/pam.d/$name"
}
