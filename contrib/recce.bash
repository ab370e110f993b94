# Bash completion for recce. Subcommands come from `recce help`; each
# subcommand's options from its own option table (`recce CMD
# --list-options`), so this file never needs to change when an option is
# added. Installed by `make install` into bash-completion's directory.

_recce()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]:-} i
	local recce=${COMP_WORDS[0]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		local cmds
		cmds=$("$recce" help 2>/dev/null | sed -n '/^commands:/,/^$/s/^ \{1,\}\([a-z][a-z-]*\) .*/\1/p')
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return
	fi
	for ((i = 2; i < COMP_CWORD; i++)); do
		[ "${COMP_WORDS[i]}" = "--" ] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
	done
	case "$cur" in
	-*)
		local opts
		opts=$("$recce" "$cmd" --list-options 2>/dev/null | cut -f1 |
			grep -oE '(^|, )--?[a-zA-Z][a-z-]*' | sed 's/^, //')
		COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
		;;
	*)
		case "${COMP_WORDS[COMP_CWORD - 1]}" in
		-p | --pid) COMPREPLY=($(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -f -- "$cur")) ;;
		esac
		;;
	esac
}
complete -F _recce recce
