# bash completion for berth and berth-launch (installed as
# share/bash-completion/completions/berth and .../berth-launch).
#
# Commands, subcommands and options are read from the programs' own --help
# (once per shell and program), so the completion follows the CLI as it
# grows: a new command or option needs no change here. An option's value is
# completed by the placeholder its help gives it: DIR or D a directory, FILE
# a file, anything else (N, DUR, K=V, ...) nothing. Ticket ids come from the
# running group (`berth list --json`), when there is one.

declare -gA _berth_help_cache

# _berth_help PROG [WORD...]: the output of `PROG [WORD...] --help`, cached.
_berth_help() {
	local key="$*"
	if [[ -z ${_berth_help_cache[$key]+set} ]]; then
		_berth_help_cache[$key]=$("$@" --help 2>/dev/null </dev/null)
	fi
	printf '%s\n' "${_berth_help_cache[$key]}"
}

# The options a help text names: "--opt" or "--opt PLACEHOLDER", one a line.
_berth_help_opts() {
	grep -oE -- '(^|[][ ,|(])--[a-z][a-z0-9-]*( [A-Z][A-Z=./]*)?' |
		sed -E 's/^[][ ,|(]//' | sort -u
}

# _berth_value HELP OPT: completes the value of OPT by its placeholder in HELP.
# 0 when OPT takes a value (COMPREPLY is then set), 1 when it is a flag.
_berth_value() {
	local ph
	ph=$(printf '%s\n' "$1" | _berth_help_opts | sed -n "s/^$2 //p" | head -n 1)
	[[ -n $ph ]] || return 1
	case $ph in
	DIR | D) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	FILE) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	*) COMPREPLY=() ;;
	esac
	return 0
}

# The launcher that goes with the berth being completed.
_berth_launcher() {
	local d=${1%/*}
	if [[ $1 == */* && -x $d/berth-launch ]]; then
		echo "$d/berth-launch"
	else
		echo berth-launch
	fi
}

_berth_launch() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local help words
	COMPREPLY=()
	help=$(_berth_help "${COMP_WORDS[0]}")
	if ((COMP_CWORD > 1)) && [[ $prev == --* ]] && _berth_value "$help" "$prev"; then
		return 0
	fi
	if [[ $cur == -* ]]; then
		words="$(printf '%s\n' "$help" | _berth_help_opts | cut -d' ' -f1 | sort -u) --help"
	else
		words=$(printf '%s\n' "$help" | sed -n 's/^usage: [^ ]* \([a-z|]*\).*/\1/p' | tr '|' ' ')
	fi
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}

_berth() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]} i w cmd= ci=0 sub= help words home=()
	COMPREPLY=()

	# The command is the first word after the global options.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--home | --timeout)
			[[ $w == --home ]] && home=(--home "${COMP_WORDS[i + 1]}")
			((i++))
			;;
		--home=*) home=("$w") ;;
		-*) ;;
		*)
			cmd=$w ci=$i
			break
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		help=$(_berth_help "$prog")
		if [[ $prev == --* ]] && _berth_value "$help" "$prev"; then
			return 0
		fi
		if [[ $cur == -* ]]; then
			words="$(printf '%s\n' "$help" | sed -n '/^Options:/,/^$/p' | _berth_help_opts |
				cut -d' ' -f1 | sort -u) --help"
		else
			words=$(printf '%s\n' "$help" | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
		fi
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
	fi

	case $cmd in
	help)
		((COMP_CWORD == ci + 1)) || return 0
		words=$(_berth_help "$prog" | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
		;;
	up | down)
		# berth up/down pass their options on to the launcher.
		help=$(_berth_help "$(_berth_launcher "$prog")")
		;;
	seat)
		help=$(_berth_help "$prog" seat)
		if ((COMP_CWORD == ci + 1)); then
			words=$(printf '%s\n' "$help" | sed -n 's/^\(usage:\)\{0,1\} *berth seat \([a-z-]*\).*/\2/p')
			mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
			return 0
		fi
		sub=${COMP_WORDS[ci + 1]}
		;;
	*)
		help=$(_berth_help "$prog" "$cmd")
		;;
	esac

	# add's options end at the job's command (the first word that is not an
	# option or an option's value, or the word after --); from there on
	# the words are the job's: a program, then anything (files).
	if [[ $cmd == add ]]; then
		local takes npos=0 dd=0
		takes=" $(printf '%s\n' "$help" | _berth_help_opts | awk 'NF > 1 { printf "%s ", $1 }')"
		for ((i = ci + 1; i < COMP_CWORD; i++)); do
			w=${COMP_WORDS[i]}
			if ((dd || npos)) || [[ $w != -* ]]; then
				((npos++))
			elif [[ $w == -- ]]; then
				dd=1
			elif [[ $takes == *" $w "* ]]; then
				((i++))
			fi
		done
		if ((npos > 0)); then
			compopt -o default 2>/dev/null
			return 0
		fi
		if ((dd)) || [[ $cur != -* && $takes != *" $prev "* ]]; then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
			return 0
		fi
	fi

	if [[ $prev == --* ]] && _berth_value "$help" "$prev"; then
		return 0
	fi
	if [[ $cur == -* ]]; then
		# seat: the options of its subcommand's usage line(s) only.
		[[ -n $sub ]] && help=$(printf '%s\n' "$help" | awk -v s="$sub" '
			/berth seat [a-z-]+/ { keep = ($0 ~ "berth seat " s "( |$)"); if (keep) print; next }
			/^ +\[/ { if (keep) print; next }
			{ keep = 0 }')
		words=$(printf '%s\n' "$help" | _berth_help_opts | cut -d' ' -f1 | sort -u)
		mapfile -t COMPREPLY < <(compgen -W "$words --help" -- "$cur")
		return 0
	fi
	case $cmd in
	show | hold | release | retry | cancel | wait | logs)
		words=$("$prog" "${home[@]}" --timeout 1s list --json 2>/dev/null </dev/null |
			grep -oE '"id":"T[0-9]+"' | cut -d'"' -f4)
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		;;
	esac
	return 0
}

complete -F _berth berth
complete -F _berth_launch berth-launch
