#!/usr/bin/env bash
# `frenzy completion bash` in a real bash: the script loads, and completing words gives the subcommands, a
# subcommand's own options (and no other's), a nested subcommand, and files. zsh's script is bash's behind
# bashcompinit; fish's names every subcommand.  usage: completion_test.sh FRENZY REPO
set -u
F="$1"; cd "$2"
passed=0; failed=0
source <("$F" completion bash) || { echo "FAIL: the bash script does not load"; exit 1; }
# expect "WORDS..." WANT [ABSENT]: completes the last word; WANT must be offered, ABSENT must not
expect() {
  read -r -a COMP_WORDS <<< "$1"
  [[ "$1" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _frenzy
  local got=" ${COMPREPLY[*]} "
  if [[ "$got" == *" $2 "* ]] && { [ -z "${3:-}" ] || [[ "$got" != *" $3 "* ]]; }; then
    passed=$((passed + 1)); echo "ok   '$1' -> $2${3:+ (not $3)}"
  else
    failed=$((failed + 1)); echo "FAIL '$1': offered [${COMPREPLY[*]}], expected $2${3:+ and not $3}"
  fi
}
expect "frenzy est" estimate
expect "frenzy " simulate
expect "frenzy rep" report
expect "frenzy --ver" --version
expect "frenzy estimate --mo" --model
expect "frenzy estimate --" --html --runs
expect "frenzy simulate --json --ru" --runs
expect "frenzy plan --model gpt2 --gp" --gpus
expect "frenzy trace s" synth
expect "frenzy trace synth --jo" --jobs
expect "frenzy plan --job examples/jobs/plan-llama-2-7" examples/jobs/plan-llama-2-7b.json
# option values the CLI knows (issue 55): presets, GPU types, frameworks, precisions, policies
expect "frenzy estimate --model llama-3.1-8" llama-3.1-8b
expect "frenzy estimate --gpu h100" h100-80g
expect "frenzy plan --framework megat" megatron
expect "frenzy estimate --precision fp8" fp8-mixed
expect "frenzy simulate --policy tir" tiresias
expect "frenzy estimate --model gpt2 --gpu " a100-80g estimate
# every subcommand of --help is offered
for sub in $("$F" --help | awk '/^Subcommands:/{on=1; next} on && !NF {on=0} on && /^  [a-z]/ {print $1}'); do expect "frenzy " "$sub"; done
zsh_script="$("$F" completion zsh)"
if [[ "$zsh_script" == *"bashcompinit"* && "$zsh_script" == *"complete -o filenames -o bashdefault -F _frenzy frenzy"* ]]; then
  passed=$((passed + 1)); echo "ok   zsh: bash's script behind bashcompinit"
else failed=$((failed + 1)); echo "FAIL zsh script"; fi
fish_script="$("$F" completion fish)"
if [[ "$fish_script" == *"-a estimate"* && "$fish_script" == *"__fish_seen_subcommand_from estimate' -l model"* ]]; then
  passed=$((passed + 1)); echo "ok   fish: subcommands and their options"
else failed=$((failed + 1)); echo "FAIL fish script"; fi
if [[ "$fish_script" == *"__fish_seen_subcommand_from estimate' -l model -x -a '"*" llama-3.1-8b "* ]]; then
  passed=$((passed + 1)); echo "ok   fish: --model completes the presets"
else failed=$((failed + 1)); echo "FAIL fish: --model values"; fi
"$F" completion tcsh >/dev/null 2>&1 && { failed=$((failed + 1)); echo "FAIL: tcsh accepted"; } || { passed=$((passed + 1)); echo "ok   tcsh refused"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
