# fish completion for kandev. Load it with:
#   kandev completion fish | source
# or save it as ~/.config/fish/completions/kandev.fish
function __kandev_complete
    set -l tokens (commandline -opc)
    set -l current (commandline -ct)
    set -l out ($tokens[1] __complete -- $tokens[2..-1] "$current" 2>/dev/null)
    if test (count $out) -eq 0
        __fish_complete_path "$current"
        return
    end
    printf '%s\n' $out
end
complete -c kandev -f -k -a '(__kandev_complete)'
