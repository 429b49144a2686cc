# bash completion for biounlock(8)                                     -*- shell-script -*-
# Installed as /usr/share/bash-completion/completions/biounlock (the package; scripts/install
# under its prefix). Commands, options and their values as `biounlock --help` lists them:
# Tests/biounlockTests/CompletionTests checks that the two agree.

_biounlock_commands="enrol enroll unenrol unenroll passcode enable disable status list doctor log verify reset forget forget-password migrate sensors version sim help"

# The options of a command (its words joined by a space), global ones apart.
_biounlock_options() {
    case $1 in
        enrol|enroll) echo "--finger --device --timeout --replace --face" ;;
        unenrol|unenroll) echo "--finger --all --device --face" ;;
        "passcode set") echo "--kind --stdin" ;;
        enable|disable) echo "--service --pam-dir --force" ;;
        status|list|sensors|version) echo "--json" ;;
        doctor) echo "--pam-dir --module --json" ;;
        log) echo "--user --service --since --limit --json" ;;
        verify) echo "--service --face" ;;
        reset) echo "--biometric --passcode" ;;
        "sim "*) echo "--wait" ;;
    esac
}

_biounlock() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # --option=value: readline splits it at '=' (COMP_WORDBREAKS).
    if [[ $cur == "=" ]]; then
        cur=""
    elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    local globals="--db --config --sensor --sim-socket --policy --json --version --help"
    COMPREPLY=()

    # The value of the option before the cursor.
    case $prev in
        --db|--config|--sim-socket|--module)
            COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
        --pam-dir)
            COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
        --sensor) COMPREPLY=($(compgen -W "auto libfprint fprintd simulated" -- "$cur")); return ;;
        --policy) COMPREPLY=($(compgen -W "biometrics-or-passcode biometrics" -- "$cur")); return ;;
        --kind) COMPREPLY=($(compgen -W "pin password pattern" -- "$cur")); return ;;
        --finger)
            COMPREPLY=($(compgen -W "left-thumb left-index-finger left-middle-finger left-ring-finger left-little-finger right-thumb right-index-finger right-middle-finger right-ring-finger right-little-finger" -- "$cur"))
            return ;;
        --service)
            local services
            services=$(command ls /etc/pam.d /usr/lib/pam.d 2>/dev/null | grep -v -e ':$' -e '^$' -e '^common-' | sort -u)
            COMPREPLY=($(compgen -W "$services" -- "$cur")); return ;;
        --user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        --device|--timeout|--wait|--since|--limit) return ;;
    esac

    # The command so far: its words, skipping global options and their values.
    local i word command="" arguments=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --db|--config|--sensor|--sim-socket|--policy|--finger|--device|--timeout|--kind|--service|--pam-dir|--module|--user|--since|--limit|--wait)
                if [[ ${COMP_WORDS[i + 1]-} == "=" ]]; then ((i += 2)); else ((i++)); fi
                continue ;;
            -*) continue ;;
        esac
        if [[ -z $command ]]; then
            command=$word
        elif [[ $command == passcode || $command == sim || $command == help ]] && [[ $command != *" "* ]]; then
            command="$command $word"
        else
            ((arguments++))
        fi
    done

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$globals" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_biounlock_commands" -- "$cur"))
        fi
        return
    fi
    case $command in
        passcode) COMPREPLY=($(compgen -W "set clear" -- "$cur")); return ;;
        sim) COMPREPLY=($(compgen -W "scan retry error unplug sleep" -- "$cur")); return ;;
        help) COMPREPLY=($(compgen -W "$_biounlock_commands" -- "$cur")); return ;;
        "help "*) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_biounlock_options "$command") --help" -- "$cur"))
        return
    fi
    # The one positional argument most commands take: a user name.
    case $command in
        enrol|enroll|unenrol|unenroll|"passcode set"|"passcode clear"|enable|disable|status|verify|reset|forget|forget-password)
            ((arguments == 0)) && COMPREPLY=($(compgen -u -- "$cur")) ;;
    esac
} && complete -F _biounlock biounlock

# ex: filetype=sh
