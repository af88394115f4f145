# bash completion for kandev. Load it from ~/.bashrc:
#   source <(kandev completion bash)
_kandev() {
    local line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -r -a words <<< "$line"
    if [[ ${#words[@]} -eq 0 || $line == *[[:space:]] ]]; then
        words+=("")
    fi
    local kandev=${words[0]}
    [[ $kandev == "~/"* ]] && kandev=$HOME/${kandev#"~/"}
    # bash replaces only the part of the word after the last '=' or ':'.
    local cur=${words[${#words[@]}-1]} brk=""
    if [[ $cur == *[=:]* ]]; then
        brk=${cur%"${cur##*[=:]}"}
    fi
    COMPREPLY=()
    local c
    while IFS= read -r c; do
        c=${c%%$'\t'*}
        [[ -n $c ]] && COMPREPLY+=("${c#"$brk"}")
    done < <("$kandev" __complete -- "${words[@]:1}" 2>/dev/null)
}
if ((BASH_VERSINFO[0] > 4 || BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4)); then
    complete -o default -o nosort -F _kandev kandev
else
    complete -o default -F _kandev kandev
fi
