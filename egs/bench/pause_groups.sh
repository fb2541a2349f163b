# Sourced by the benchmark scripts: stop process groups (training runs) while something is timed,
# and continue them afterwards, whatever happens (the caller's EXIT trap calls resume_groups).
#   source egs/bench/pause_groups.sh; trap resume_groups EXIT; pause_groups PGID ...
paused_groups=()
resume_groups() {
  local group
  for group in "${paused_groups[@]+"${paused_groups[@]}"}"; do kill -CONT -- "-$group" 2>/dev/null || true; done
}
pause_groups() {  # pause_groups PGID ...: stop each group, then let the machine settle
  local group
  [ $# -gt 0 ] || return 0
  for group in "$@"; do paused_groups+=("$group"); kill -STOP -- "-$group"; done
  sleep 2
}
