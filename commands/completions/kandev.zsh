#compdef kandev
# zsh completion for kandev. Load it after compinit:
#   source <(kandev completion zsh)
# or save it as _kandev in a directory of $fpath.
_kandev() {
  local kandev=${words[1]}
  kandev=${kandev/#\~/$HOME}
  local out line
  local -a vals descs
  out=$("$kandev" __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)
  for line in "${(@f)out}"; do
    [[ -z $line ]] && continue
    vals+=("${line%%$'\t'*}")
    if [[ $line == *$'\t'* ]]; then
      descs+=("${line%%$'\t'*}  -- ${line#*$'\t'}")
    else
      descs+=("$line")
    fi
  done
  if (( ${#vals} )); then
    compadd -V kandev -l -d descs -a vals
  else
    _files
  fi
}
if [[ $funcstack[1] == _kandev ]]; then
  _kandev "$@"
else
  compdef _kandev kandev
fi
