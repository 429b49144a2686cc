#!/usr/bin/env bash
# End-to-end: the face (issue 34). The REAL sudo on a real terminal (a pty made by expect) inside
# the mount-namespace sandbox (scripts/lib/sandbox.sh), with build/biounlock-face reading the
# simulated camera (face_sim_socket) fed scikit-image's faces (scripts/face-images).
#
#   bash Tests/EndToEnd/face-sudo.sh     (as root; BUILD_DIR defaults to the repo's build/)
#
# Shows: `biounlock enrol USER --face` takes five frames from the camera; with the enrolled
# face in view sudo succeeds with no key pressed; with another person's face it does not, says
# so on the same prompt, and the PIN typed at once still works; face=off leaves the prompt as it was.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export BUILD_DIR="${BUILD_DIR:-$repo/build}"
# shellcheck source=../../scripts/lib/sandbox.sh
source "$repo/scripts/lib/sandbox.sh"
# shellcheck source=lib/checks.bash
source "$here/lib/checks.bash"

ALICE=bifalice ALICE_UID=4262 ALICE_UNIX_PW='alice-unix-Pw-7' ALICE_PIN=4821 ALICE_FINGER=alice-right-index
IMAGES="$BUILD_DIR/face-images"
PROMPT='Look at the camera, touch the reader or type your PIN or password for running a command as root: '

trap 'sandbox_destroy' EXIT
trap 'exit 130' INT TERM HUP
[ -f "$IMAGES/astronaut.pgm" ] || "$repo/scripts/face-images" "$IMAGES"
if ! sandbox_create; then fail "sandbox: set up"; finish; fi
sandbox_add_user "$ALICE" "$ALICE_UID" "$ALICE_UNIX_PW"
mkdir -m 0755 "$SANDBOX_DIR/cam"
FACE_CONF="$SANDBOX_DIR/face.conf"
CAM="$SANDBOX_DIR/cam/c"
export FACE_CONF IMAGES CAM
printf '%s\n' "face = on" "face_sim_socket = $CAM" "face_helper = $SANDBOX_BUILD/biounlock-face" \
    "face_models = $SANDBOX_BUILD/face-models" >"$FACE_CONF"
chmod 0644 "$FACE_CONF"
SANDBOX_MODULE_ARGS="require_passcode=none config=$FACE_CONF" sandbox_write_config
out="$SANDBOX_DIR/out"
mkdir -m 0700 "$out"

# cam.py PATH COMMAND: one command to the simulated camera once it listens (it exists while a
# helper has the camera open); returns when the camera took it.
cat >"$SANDBOX_DIR/run/cam.py" <<'PY'
import socket, sys, time
path, command = sys.argv[1], sys.argv[2].encode()
end = time.time() + 20
while True:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        break
    except OSError:
        s.close()
        if time.time() > end:
            sys.exit("no camera listening on " + path)
        time.sleep(0.05)
s.sendall(command)
s.shutdown(socket.SHUT_WR)
s.settimeout(20)
s.recv(1)
PY

# The terminal side. Args: MODE PIN CAM-COMMAND CMD...
cat >"$SANDBOX_DIR/run/face.exp" <<'EXP'
set timeout 30
log_user 1
lassign $argv mode pin cam
set cmd [lrange $argv 3 end]
proc await {pattern} {
    expect {
        -re $pattern {}
        timeout { puts "\nEXPECT: timed out waiting for /$pattern/"; exit 124 }
        eof { puts "\nEXPECT: ended while waiting for /$pattern/"; exit 125 }
    }
}
spawn -noecho {*}$cmd
switch $mode {
    look {
        await {type your PIN or password for running a command as root: $}
        exec {*}$cam
    }
    other {
        await {type your PIN or password for running a command as root: $}
        exec {*}$cam
        await {Face not recognised\. 2 tries left\.}
        send -- "$pin\r"
    }
    typeatonce {
        await {type your PIN or password for running a command as root: $}
        exec {*}$cam
        send -- "$pin\r"
    }
    plain {
        await {or touch the reader: $}
        send -- "$pin\r"
    }
}
expect {
    eof {}
    timeout { puts "\nEXPECT: no end"; exit 124 }
}
lassign [wait] pid spawn_id os_error status
exit $status
EXP

# scenario NAME MODE CAM-COMMAND: alice runs `sudo -k id -u` on a pty.
scenario() {
    local name=$1 mode=$2 command=$3
    sandbox_run '
        name=$1 mode=$2 command=$3
        cam="/usr/bin/python3 $SANDBOX_DIR/run/cam.py $CAM {$command}"
        export TT_USER=$5
        SANDBOX_AS_TTY=1 expect -f "$SANDBOX_DIR/run/face.exp" "$mode" "$4" "$cam" \
            bash -c "source \"\$SANDBOX_LIB\"; SANDBOX_AS_TTY=1 sandbox_as \"\$TT_USER\" sudo -k id -u" \
            >"$SANDBOX_DIR/out/$name.log" 2>&1
        echo $? >"$SANDBOX_DIR/out/$name.rc"
    ' "$name" "$mode" "$command" "$ALICE_PIN" "$ALICE"
    tr -d '\r' <"$out/$name.log" >"$out/$name.txt"
}
rc_is() { [ "$(cat "$out/$1.rc" 2>/dev/null)" = "$2" ]; }
has() { grep -qF -- "$2" "$out/$1.txt"; }
lacks() { ! grep -qF -- "$2" "$out/$1.txt"; }

# ---- setup: a finger, a PIN, the face (enrolled from the simulated camera), enabled ----
sandbox_run '
    { sandbox_enrol "$1" "$2" right-index && printf "%s\n" "$3" | bio passcode set "$1" --stdin &&
      bio --sensor simulated enable "$1"; } >"$4/setup.log" 2>&1
' "$ALICE" "$ALICE_FINGER" "$ALICE_PIN" "$out"
check "setup: $ALICE enrols a finger, sets a PIN, enables biometric unlock" test $? -eq 0 -- "$out/setup.log"
sandbox_run '
    /usr/bin/python3 "$SANDBOX_DIR/run/cam.py" "$CAM" "FRAME $IMAGES/astronaut.pgm" &
    bio --config "$FACE_CONF" enrol "$1" --face >"$2/enrol.log" 2>&1
    echo $? >"$2/enrol.rc"
    wait
' "$ALICE" "$out"
check "enrol --face: five frames of the astronaut from the simulated camera, stored" \
    eval '[ "$(cat "$out/enrol.rc")" = 0 ] && grep -qF "frame 5/5" "$out/enrol.log" && grep -qF "Enrolled the face of $ALICE." "$out/enrol.log"' -- "$out/enrol.log"

# ---- the enrolled face in view: no key pressed ----
scenario look look "FRAME $IMAGES/astronaut-dark.pgm"
check "face: one prompt, '$PROMPT'" has look "$PROMPT" -- "$out/look.txt"
check "face: sudo ran the command with no key pressed" eval 'rc_is look 0 && grep -qx 0 "$out/look.txt"' -- "$out/look.txt"
check "face: no other prompt" lacks look "password for $ALICE:" -- "$out/look.txt"

# ---- another person: refused, said so, and the PIN still works at the same prompt ----
scenario other other "FRAME $IMAGES/lfw-001.pgm"
check "another person: 'Face not recognised. 2 tries left.' on the same prompt" has other "Face not recognised. 2 tries left." -- "$out/other.txt"
check "another person: the PIN typed afterwards lets sudo run the command" eval 'rc_is other 0 && grep -qx 0 "$out/other.txt"' -- "$out/other.txt"

# ---- another person in view, the PIN typed at once: nothing waits for the camera ----
scenario typeatonce typeatonce "FRAME $IMAGES/lfw-001.pgm"
check "type at once: the PIN typed while another face is in view lets sudo run the command" \
    eval 'rc_is typeatonce 0 && grep -qx 0 "$out/typeatonce.txt"' -- "$out/typeatonce.txt"
sandbox_run 'bio log --json >"$1/log.json" 2>&1' "$out"
check "audit: the face's success is recorded as method face, reason face-matched" \
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
events = d.get("events", []) if isinstance(d, dict) else d
sys.exit(0 if any(e.get("method") == "face" and e.get("reason") == "face-matched" for e in events) else 1)
' "$out/log.json" -- "$out/log.json"

# ---- the CLI: status shows the face, doctor checks it ----
sandbox_run 'bio --config "$FACE_CONF" status "$1" --json >"$2/status.json" 2>&1; bio --config "$FACE_CONF" doctor >"$2/doctor.txt" 2>&1; true' "$ALICE" "$out"
check "status --json: the face is enrolled, with its camera" \
    python3 -c 'import json, sys; u = json.load(open(sys.argv[1]))["users"][0]; sys.exit(0 if u["face"] and u["face"]["camera"].startswith("simulated:") else 1)' \
    "$out/status.json" -- "$out/status.json"
check "doctor: face=on, the helper and its models are in place" grep -qF "face=on: the face helper and its models are in place" "$out/doctor.txt" -- "$out/doctor.txt"

# ---- face=off: the prompt as it always was ----
sed -i 's/^face = on/face = off/' "$FACE_CONF"
scenario off plain ""
check "face=off: the finger's prompt, no camera" eval 'has off "PIN or password for running a command as root, or touch the reader: " && lacks off "camera"' -- "$out/off.txt"
check "face=off: the PIN works" eval 'rc_is off 0 && grep -qx 0 "$out/off.txt"' -- "$out/off.txt"

# ---- unenrol --face: the face goes, the finger stays ----
sandbox_run 'bio unenrol "$1" --face >"$2/unenrol.txt" 2>&1 && bio status "$1" --json >"$2/status2.json" 2>&1' "$ALICE" "$out"
check "unenrol --face: the face is removed and the finger kept" \
    python3 -c 'import json, sys; u = json.load(open(sys.argv[1]))["users"][0]; sys.exit(0 if u["face"] is None and len(u["fingers"]) == 1 else 1)' \
    "$out/status2.json" -- "$out/unenrol.txt" "$out/status2.json"

finish
