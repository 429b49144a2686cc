#!/usr/bin/env bash
# The man pages render, and document every command, option and config key that exists:
#   - scripts/man renders man/*.scd with scdoc, and man(1) reports no roff warnings;
#   - every command and option printed by `biounlock --help` and `biounlock CMD --help`
#     (the built CLI in BUILD_DIR) has an entry in man/biounlock.8.scd;
#   - every key of Options.keys (Sources/BiounlockCore/Options/OptionKeys.swift) has an entry in
#     man/biounlock.conf.5.scd and man/pam_biounlock.8.scd, and one row in README.md's
#     configuration table.
# So a new command, option or key fails here until its man page entry is written.
#
#   bash Tests/EndToEnd/manpages.sh      (BUILD_DIR defaults to the repo's build/)
# Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed"; exits 0 only if all passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$repo/build}"
cli="$BUILD_DIR/biounlock"

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "not ok - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/#   /'; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

tmp="$(mktemp -d /tmp/biounlock-man.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# ---- rendering ----
if out="$("$repo/scripts/man" "$tmp/man" 2>&1)"; then
    pass "scripts/man renders man/*.scd into biounlock.8, pam_biounlock.8, biounlock.conf.5"
else
    fail "scripts/man renders man/*.scd" "$out"; finish
fi
for page in biounlock.8 pam_biounlock.8 biounlock.conf.5 biounlockd.8 biounlock-settings.1; do
    if [ ! -s "$tmp/man/$page" ]; then fail "$page exists and is not empty"; continue; fi
    if command -v man >/dev/null 2>&1; then
        warnings="$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$tmp/man/$page" 2>&1 >/dev/null)"
        if [ -z "$warnings" ]; then pass "$page renders without roff warnings"; else fail "$page renders without roff warnings" "$warnings"; fi
    else
        pass "$page rendered (man(1) not installed: warnings not checked)"
    fi
done

# ---- the CLI's commands and options in biounlock(8) ----
scd8="$repo/man/biounlock.8.scd"
if [ ! -x "$cli" ]; then fail "the built CLI exists at $cli (run ./scripts/build)"; finish; fi
help="$("$cli" --help 2>&1)" || { fail "biounlock --help exits 0" "$help"; finish; }

# Command words: the leading words of each line under COMMANDS before the first argument
# (an upper-case placeholder or an [option]).
mapfile -t commands < <(printf '%s\n' "$help" | awk '
    /^COMMANDS:/ { on = 1; next }
    /^[A-Z ]+:$/ { on = 0 }
    on && /^  [a-z]/ {
        words = ""
        for (i = 1; i <= NF; i++) { if ($i ~ /^[a-z][a-z-]*$/) words = words (words ? " " : "") $i; else break }
        print words
    }')
[ ${#commands[@]} -ge 5 ] || fail "found the command list in 'biounlock --help'" "$help"
missing=""
for c in "${commands[@]}"; do grep -qF -- "*$c*" "$scd8" || missing+=" '$c'"; done
if [ -z "$missing" ]; then pass "biounlock.8 has an entry for each of the ${#commands[@]} commands of 'biounlock --help'"
else fail "biounlock.8 has an entry for every command of 'biounlock --help'" "missing:$missing"; fi

# Options: every --flag (and -h) that any help text lists.
options="$(
    printf '%s\n' "$help"
    for c in "${commands[@]}"; do
        # shellcheck disable=SC2086
        "$cli" $c --help 2>&1
    done
)"
mapfile -t flags < <(printf '%s\n' "$options" | grep -oE '^  (-h, )?--[a-z][a-z-]*' | sed -E 's/^  (-h, )?//' | sort -u)
[ ${#flags[@]} -ge 5 ] || fail "found the options in the help texts" "$options"
missing=""
for f in "${flags[@]}"; do grep -qF -- "*$f*" "$scd8" || missing+=" $f"; done
if [ -z "$missing" ]; then pass "biounlock.8 documents each of the ${#flags[@]} options of the help texts (${flags[*]})"
else fail "biounlock.8 documents every option of the help texts" "missing:$missing"; fi

# ---- config keys in biounlock.conf(5) and pam_biounlock(8) ----
mapfile -t keys < <(grep -oE 'OptionKey\(name: "[a-z_]+"' "$repo/Sources/BiounlockCore/Options/OptionKeys.swift" | sed -E 's/.*"(.*)"/\1/')
[ ${#keys[@]} -ge 5 ] || fail "found the option keys in OptionKeys.swift"
missing5="" missing8=""
for k in "${keys[@]}"; do
    grep -qE "^\*$k\*" "$repo/man/biounlock.conf.5.scd" || missing5+=" $k"
    grep -qE "^\*$k(=\*|\*)" "$repo/man/pam_biounlock.8.scd" || missing8+=" $k"
done
if [ -z "$missing5" ]; then pass "biounlock.conf.5 has an entry for each of the ${#keys[@]} keys (${keys[*]})"
else fail "biounlock.conf.5 has an entry for every key of Options.keys" "missing:$missing5"; fi
if [ -z "$missing8" ]; then pass "pam_biounlock.8 lists each of the ${#keys[@]} module arguments"
else fail "pam_biounlock.8 lists every key of Options.keys" "missing:$missing8"; fi
# README's configuration table (the only key table in the Markdown docs) has one row per key.
readme_bad=""
for k in "${keys[@]}"; do
    n="$(grep -cE "^\| \`$k\` \|" "$repo/README.md")"
    [ "$n" = 1 ] || readme_bad+=" $k($n rows)"
done
if [ -z "$readme_bad" ]; then pass "README's configuration table has one row for each of the ${#keys[@]} keys"
else fail "README's configuration table has one row for every key of Options.keys" "wrong:$readme_bad"; fi

# Defaults stated in the pages match the code's.
defaults_ok=1 detail=""
for pair in "timeout:timeoutSeconds: Int = " "max_tries:maxTries: Int = "; do
    key=${pair%%:*} pattern=${pair#*:}
    value="$(grep -oE "${pattern}[0-9]+" "$repo/Sources/BiounlockCore/Options/Options.swift" | grep -oE '[0-9]+$')"
    for page in biounlock.conf.5.scd pam_biounlock.8.scd; do
        awk -v k="$key" -v v="$value" '
            $0 ~ "^\\*" k "(=)?\\*" { on = 1; next }
            on && /^\*/ { exit 1 }
            on && index($0, "Default: *" v "*") { found = 1; exit 0 }
            END { exit found ? 0 : 1 }' "$repo/man/$page" || { defaults_ok=0; detail+=" $page:$key(code says $value)"; }
    done
done
if [ "$defaults_ok" = 1 ]; then pass "the timeout and max_tries defaults in the pages match Options.swift"
else fail "the timeout and max_tries defaults in the pages match Options.swift" "wrong:$detail"; fi

finish
