#!/usr/bin/env python3
"""Writes the seeds of the module fuzz target (Fuzz/corpus/module) in its input format
(Fuzz/Targets/module.c): 59 control bytes, then NUL-separated fields. Each seed reaches one
path of the chain; `BIOUNLOCK_FUZZ_VERBOSE=1 build/fuzz/fuzz-module -runs=0 Fuzz/corpus/module`
(with scripts/fuzz's environment) prints what each one did.

    python3 Fuzz/Targets/module-seeds.py [DIRECTORY]
"""
import os
import sys

# Indices of the harness's tables (module.c).
DAEMON, NOBODY, SYS, BIN, ROOT, RAW = range(6)
NONE, PIN_2468, PASSWORD_HUNTER22, PATTERN_12369 = 0, 1, 2, 3
GARBAGE = 8
BOOT_A = 1          # stored passcode_boot_id "fuzz-boot-a" (the harness's boot id by default)
RECENT = 1          # time: NOW - 5 s
ID_A = 0            # template data / scan id "id-a"
SCAN_MALLORY = 3


def row(name=DAEMON, enabled=True, passcode=PIN_2468, kind=0, bio_failures=0, passcode_failures=0,
        bio_failure_at=0, passcode_failure_at=0, success_at=RECENT, boot=BOOT_A, versions=0, uid=0,
        templates=((ID_A, 0, 0),), overrides=0, last_success=0, garbage=0):
    b = [0] * 16
    b[0] = name
    b[1] = 1 if enabled else 0
    b[2] = passcode + 12 * kind
    b[3] = garbage if passcode >= GARBAGE else 12 * bio_failures
    b[4] = passcode_failures
    b[5], b[6], b[7], b[8], b[9], b[10] = bio_failure_at, passcode_failure_at, success_at, boot, versions, uid
    for j, (data, finger, sensor) in enumerate(templates):
        b[11 + j] = data + 5 * finger + 20 * sensor
    b[14] = overrides | (len(templates) << 4)
    b[15] = last_success
    return b


def seed(rows=(), flags=0, user=DAEMON, service=0, store=0, config=2, env=0, boot=0, alloc=None, prune=False,
         raw_user=b"", args=b"", config_text=b"", rhost=b"", tty=b"", ruser=b"", reader=b"", keys=b"", faults=b"", answers=()):
    control = [0] * 59
    control[0], control[1], control[2], control[3], control[4], control[5], control[6] = flags, user, service, store, config, env, boot
    if alloc is not None:
        n, persistent = alloc
        control[7], control[8], control[9] = (n - 1) % 256, (n - 1) // 256, 1 | (2 if persistent else 0)
    control[10] = (1 if prune else 0) | (len(rows) << 1)
    for r, b in enumerate(rows):
        control[11 + 16 * r: 27 + 16 * r] = b
    fields = [raw_user, args, config_text, rhost, tty, ruser, reader, keys, faults] + list(answers)
    for f in fields:
        assert 0 not in f, f
    return bytes(control) + b"\0".join(fields)


SILENT, SETCRED, TWICE, DELETE_CRED, TERMINAL, RUSER, RHOST, TTY = (1 << i for i in range(8))
# Reader scripts: byte 0 is the opening (4 = opens; 0 would end the field), then replies.
SCAN = 6            # kind 0 (6 % 6)
RETRY, ERROR, TIMEOUT, KEY = 2, 3, 4, 5
def scan(i): return bytes([SCAN, 6 + i])      # 6 + i: id i, never a NUL
OPENS, UNAVAILABLE, NOTHING = 4, 2, 3
# Fault rules (BiounlockSystem's FaultSchedule(fuzzInput:)): call, fault, skip, count, each taken
# modulo its choices -- so 0 (which would end the field) is written as the modulus.
CALLS = ["open", "read", "write", "send", "recv", "poll", "fstat", "stat", "lstat", "fsync", "fcntl", "fchmod", "dup2",
         "mkdir", "chmod", "rename", "unlink", "chdir", "socket", "socketpair", "bind", "listen", "accept", "connect",
         "shutdown", "opendir", "posix_spawn", "waitpid", "kill", "getpwnam_r", "getpwuid_r", "gethostname",
         "tcgetattr", "tcsetattr", "tcgetpgrp", "ttyname_r", "setrlimit", "getrlimit", "setgroups", "setregid",
         "sigprocmask", "prctl", "nanosleep"]
FAULTS = ["EINTR", "EAGAIN", "ENOSPC", "EIO", "EMFILE", "ENOMEM", "short1", "short7"]
def fault(call, what, skip=0, count=1):
    c, f = CALLS.index(call), FAULTS.index(what)
    return bytes([c or len(CALLS), f or len(FAULTS), skip or 32, count])
# Terminal keys.
LINE, ENTER, CLOSED, CTRL_C = 1, 2, 4, 5

seeds = {
    # A touch of the enrolled finger at the touch request: PAM_SUCCESS by fingerprint.
    "touch": seed(rows=[row()], reader=bytes([OPENS]) + scan(ID_A)),
    # No reader: the PIN at the prompt.
    "pin": seed(rows=[row(templates=())], answers=[b"2468"]),
    "pin-silent-setcred": seed(rows=[row(templates=())], flags=SILENT | SETCRED, answers=[b"2468"]),
    # A wrong PIN: counted, handed on as PAM_AUTHTOK; setcred then records nothing (no success).
    "wrong-pin": seed(rows=[row(templates=())], flags=SETCRED, answers=[b"1111"]),
    # The passcode locked (5 wrong, the last 5 s ago): the prompt takes the password only.
    "pin-locked": seed(rows=[row(templates=(), passcode_failures=5, passcode_failure_at=RECENT)], answers=[b"2468"]),
    # Biometrics locked (5 wrong fingers): no reader, the PIN.
    "bio-locked": seed(rows=[row(bio_failures=5, bio_failure_at=RECENT)], reader=bytes([OPENS]) + scan(ID_A), answers=[b"2468"]),
    # Wrong fingers (mallory) three times, then the PIN at the prompt.
    "wrong-fingers-then-pin": seed(rows=[row()], reader=bytes([OPENS]) + scan(SCAN_MALLORY) * 3, answers=[b"2468"]),
    # policy=biometrics, nowhere to type: PAM_MAXTRIES.
    "biometrics-max-tries": seed(rows=[row(name=SYS, passcode=NONE)], user=SYS, args=b"policy=biometrics",
                                 reader=bytes([OPENS]) + scan(SCAN_MALLORY) * 3),
    # A remote PAM_RHOST under remote=ignore: PAM_IGNORE.
    "remote": seed(rows=[row()], flags=RHOST, rhost=b"attacker.example", reader=bytes([OPENS]) + scan(ID_A)),
    # remote=passcode over ssh: the PIN, no finger.
    "remote-passcode": seed(rows=[row()], flags=TTY, tty=b"ssh", args=b"remote=passcode", answers=[b"2468"]),
    # A logind session marked REMOTE=1, twice on one handle, then setcred.
    "logind-remote-twice": seed(rows=[row()], flags=TWICE | SETCRED, env=4, args=b"remote=allow",
                                reader=bytes([OPENS]) + scan(ID_A) + scan(ID_A)),
    # Text that cannot be a PIN: handed on to the password (pam_unix try_first_pass); the
    # setcred that follows records the password's success.
    "handed-on-password": seed(rows=[row(templates=())], flags=SETCRED, answers=[b"unix-password"]),
    # A password user (nobody, hunter22) whose toggle is off for service "other".
    "password-user": seed(rows=[row(name=NOBODY, passcode=PASSWORD_HUNTER22, overrides=1 | 0)], user=NOBODY, service=2,
                          answers=[b"hunter22"]),
    "password-user-enabled": seed(rows=[row(name=NOBODY, passcode=PASSWORD_HUNTER22, templates=())], user=NOBODY,
                                  answers=[b"hunter22"]),
    # A pattern typed with a point picked up (1369 is 12369).
    "pattern": seed(rows=[row(passcode=PATTERN_12369, templates=())], answers=[b"1369"]),
    # Not enabled: PAM_IGNORE, nothing asked.
    "not-enabled": seed(rows=[row(enabled=False)], answers=[b"2468"]),
    # A name no account has: PAM_USER_UNKNOWN.
    "unknown-user": seed(rows=[row(name=RAW)], user=RAW, raw_user=b"no-such-user-xyz", answers=[b"2468"]),
    # The row belongs to another uid (a reused name): left alone.
    "other-uid": seed(rows=[row(uid=3)], answers=[b"2468"]),
    # No user: pam_get_user asks for it.
    "user-prompt": seed(rows=[row(templates=())], user=6, answers=[b"daemon", b"2468"]),
    # Damaged and untrusted stores: PAM_AUTHINFO_UNAVAIL.
    "corrupt-store": seed(rows=[row()], store=8, answers=[b"2468"]),
    "old-schema": seed(rows=[row()], store=9, answers=[b"2468"]),
    "store-writable-by-others": seed(rows=[row()], store=12, answers=[b"2468"]),
    "lock-file-writable-by-others": seed(rows=[row()], store=7, answers=[b"2468"]),
    "store-symlink": seed(rows=[row()], store=14, answers=[b"2468"]),
    # A garbage hash, a hash costing more than allowed.
    "garbage-hash": seed(rows=[row(passcode=GARBAGE, templates=(), garbage=4)], answers=[b"2468"]),
    "costly-hash": seed(rows=[row(passcode=GARBAGE, templates=(), garbage=7)], answers=[b"2468"]),
    # Passcode required after a new boot (stored boot A, now boot B): the PIN, no finger.
    "passcode-after-boot": seed(rows=[row()], boot=1, reader=bytes([OPENS]) + scan(ID_A), answers=[b"2468"]),
    # The config file: policy=biometrics and a prompt; an untrusted one is refused.
    "config-file": seed(rows=[row()], config=0, config_text=b"policy = biometrics\ntimeout = 3\nreason = Approve %s\n",
                        reader=bytes([OPENS]) + scan(ID_A)),
    "config-untrusted": seed(rows=[row()], config=3, answers=[b"2468"]),
    # The reader: retries, then unplugged; then Enter alone.
    "reader-retry-error": seed(rows=[row()], reader=bytes([OPENS, RETRY, 1, RETRY, 3, ERROR]), answers=[b""]),
    "reader-unavailable": seed(rows=[row()], reader=bytes([UNAVAILABLE]), answers=[b"2468"]),
    # The touch request, then the prompt (the key/wait), Enter alone, then the touch.
    "enter-then-touch": seed(rows=[row()], reader=bytes([OPENS, KEY]) + scan(ID_A), answers=[b""]),
    # Type or touch on a terminal: the PIN typed while the reader waits; Ctrl-C; a touch.
    "terminal-pin": seed(rows=[row()], flags=TERMINAL, reader=bytes([OPENS, KEY]), keys=bytes([LINE, 8]), answers=[b"2468"]),
    "terminal-ctrl-c": seed(rows=[row()], flags=TERMINAL, reader=bytes([OPENS, KEY]), keys=bytes([6, CTRL_C])),
    "terminal-touch": seed(rows=[row()], flags=TERMINAL, reader=bytes([OPENS]) + scan(ID_A)),
    # The lid closed: no finger.
    "lid-closed": seed(rows=[row()], env=16, answers=[b"2468"]),
    # SQLite's 40th allocation fails, and every one after it.
    "sqlite-out-of-memory": seed(rows=[row(templates=())], alloc=(40, True), answers=[b"2468"]),
    "sqlite-one-allocation": seed(rows=[row(templates=())], alloc=(120, False), answers=[b"2468"]),
    # The audit append that prunes; counters at their largest value.
    "prune-and-huge-counters": seed(rows=[row(templates=(), passcode_failures=9, bio_failures=9)], prune=True, answers=[b"1111"]),
    # System calls that fail or come up short (the layer's funnel): EINTR on every open and
    # read (retried: the PIN still works), fsync ENOSPC (the count cannot be made durable: the PIN
    # is not checked), the lock file's fcntl EIO, reads of one byte, EMFILE, getpwnam_r ENOMEM.
    "eintr-everywhere": seed(rows=[row(templates=())], faults=fault("open", "EINTR", count=15) + fault("read", "EINTR", count=15)
                             + fault("fstat", "EINTR", count=15), answers=[b"2468"]),
    "fsync-enospc": seed(rows=[row(templates=())], faults=fault("fsync", "ENOSPC", count=15), answers=[b"2468"]),
    "fcntl-eio": seed(rows=[row(templates=())], faults=fault("fcntl", "EIO", skip=1, count=15), answers=[b"1111"]),
    "short-reads": seed(rows=[row(templates=())], config=0, config_text=b"policy=biometrics-or-passcode\n",
                        faults=fault("read", "short1", count=15), answers=[b"2468"]),
    "open-emfile": seed(rows=[row()], faults=fault("open", "EMFILE", skip=2, count=3), reader=bytes([OPENS]) + scan(ID_A),
                        answers=[b"2468"]),
    "getpwnam-enomem": seed(rows=[row(templates=())], faults=fault("getpwnam_r", "ENOMEM", count=15), answers=[b"2468"]),
    "stat-eagain": seed(rows=[row(templates=())], faults=fault("stat", "EAGAIN", count=15) + fault("lstat", "EIO", count=15),
                        answers=[b"2468"]),
    # Conversation failures: NULL text, a failed conversation, a NULL array, 1 MiB.
    "null-answer": seed(rows=[row(templates=())], answers=[b"\x01"]),
    "failed-conversation": seed(rows=[row(templates=())], answers=[b"\x02"]),
    "null-array": seed(rows=[row(templates=())], answers=[b"\x03"]),
    "big-answer": seed(rows=[row(templates=())], answers=[b"\x04\x01\x01"]),
}

directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "corpus", "module")
os.makedirs(directory, exist_ok=True)
for name in os.listdir(directory):
    os.unlink(os.path.join(directory, name))
for name, data in seeds.items():
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {directory}")
