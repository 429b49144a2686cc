#!/bin/sh
# pkagent.sh CMD...: the real polkit text agent (pkttyagent) on this terminal, registered for
# this shell's process, then CMD as this shell's child, off the terminal (its output is shown
# when it ends; pkexec's subject is its parent process: this shell, the agent's). An argument
# @SELF@ becomes this shell's pid (for pkcheck --process). Exits with CMD's status.
# Used by Tests/EndToEnd/callers-polkit.sh inside the sandbox, as the requesting user.
# In the sandbox's private /run/tmp when there is one: it goes with the namespace, whatever happens.
base=/tmp
[ -d /run/tmp ] && [ -w /run/tmp ] && base=/run/tmp
tmp=$(mktemp -d "$base/bu-pkagent.XXXXXX") || exit 70
agent=
# Whatever ends this script (the command, a hang-up when the terminal goes), nothing is left.
trap '[ -n "$agent" ] && kill "$agent" 2>/dev/null; rm -rf -- "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 143' TERM
out="$tmp/out" fifo="$tmp/ready"
mkfifo -m 0600 "$fifo" || exit 70
# Without job control the agent stays in the terminal's foreground process group: it reads the
# terminal like any prompt. --notify-fd says when it is registered (no race with the request).
pkttyagent --notify-fd 3 --process $$ 3>"$fifo" &
agent=$!
read -r _ <"$fifo"
n=$#
while [ "$n" -gt 0 ]; do
    a=$1; shift
    [ "$a" = @SELF@ ] && a=$$
    set -- "$@" "$a"
    n=$((n - 1))
done
"$@" </dev/null >"$out" 2>&1
rc=$?
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
agent=
cat "$out"
echo "PKAGENT: $* -> $rc"
exit "$rc"
