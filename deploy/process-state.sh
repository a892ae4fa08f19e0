# process_state PID [PROC]: the state letter of process PID as the kernel reports it in
# PROC/PID/stat (PROC is /proc unless given): R running, S sleeping, D in an uninterruptible
# wait, T stopped by a signal (SIGSTOP), t stopped by a debugger, Z exited; empty when there
# is no such process.  Sourced by scripts/serve.sh and deploy/systemd/health-loop.sh: a
# replica in state T answers nothing until someone sends SIGCONT, so the health check kills
# it at once instead of waiting for its checks to time out; a busy replica is R or S and is
# judged by its answers as before.
process_state() {
  local stat
  read -r stat 2>/dev/null <"${2:-/proc}/$1/stat" || return 0
  # The command name (field 2, in parentheses) may itself hold spaces and parentheses: the
  # state is the first field after its last ')'.
  stat=${stat##*) }
  echo "${stat%% *}"
}
