# shellcheck shell=bash
# The texts the issue-12 contract (shared-contract-12.md, "Prompts and messages") fixes, in one
# place: the callers-*.sh scripts match prompts and messages only through these. A later issue
# translates them; change them here.
#
# {Cred}: what biounlock's prompt says it takes.
CRED_PIN="PIN or password"        # a user whose biounlock PIN can be used now
CRED_PASSWORD="Password"          # policy=biometrics, no passcode, or the passcode locked

# What the prompts say in place of a known PAM service's name (issue 33, item 3: the table in
# Sources/BiounlockCore/Localization/ServiceWords.swift, for the services the tests run); an
# unknown service keeps its name.
service_words() {
    case "$1" in
        sudo|sudo-i|su|su-l|doas|run0|pkexec) printf 'running a command as root' ;;
        login|sshd|remote|gdm-password|gdm-fingerprint|lightdm|sddm|greetd) printf 'logging in' ;;
        i3lock|swaylock|hyprlock|gtklock|xscreensaver|xsecurelock|light-locker|vlock|physlock|kde|kde-fingerprint) printf 'unlocking the screen' ;;
        polkit-1) printf 'authorising an action' ;;
        chsh|chfn) printf 'changing account details' ;;
        *) printf '%s' "$1" ;;
    esac
}
# On a terminal, while the reader is usable ("type or touch").
prompt_type_or_touch() { printf '%s for %s, or touch the reader: ' "$1" "$(service_words "$2")"; }
# On a terminal or without one, once the reader is done (or cannot be used).
prompt_reader_done() { printf '%s for %s: ' "$1" "$(service_words "$2")"; }
# Without a terminal, while the reader is still usable.
prompt_or_enter() { printf '%s for %s, or touch the reader, then press Enter: ' "$1" "$(service_words "$2")"; }
# Without a terminal: the TEXT_INFO before the reader waits alone (touch_first seconds).
touch_request() { printf 'Touch the fingerprint reader to authenticate for %s' "$(service_words "$1")"; }

# Messages (PAM_ERROR_MSG).
# (the time left in whatever form: "4 min", "58 s", "1 h 5 min")
PIN_LOCKED_RE='PIN locked for [0-9][^:]*: use your finger or your password\.'
NOT_RECOGNISED="Fingerprint not recognised."

# pam_unix's own prompt, after biounlock stepped aside or handed on.
UNIX_PROMPT="Password: "

# Words that only biounlock says: none may reach a caller for whom biounlock steps aside
# (remote=ignore, not enabled). ("biounlock" itself is not one: the test users are "biounlock test user".)
BIOUNLOCK_WORDS_RE='Touch|touch the reader|Fingerprint|fingerprint|PIN|Passcode|passcode|reader'

# Tcl/ERE-safe form of a literal text (for converse.exp's =REGEX steps and grep -E).
re_quote() { printf '%s' "$1" | sed -e 's/[][\.*^$+?(){}|]/\\&/g'; }
