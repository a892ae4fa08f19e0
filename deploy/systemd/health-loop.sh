#!/usr/bin/env bash
# Health check of one replica, for systemd (sdwec-health@.service):
#
#   bash deploy/systemd/health-loop.sh HOST PORT
#
# Every second GET http://HOST:PORT/_stcore/health with SDWEC_HEALTH_TIMEOUT seconds (2) to
# answer.  After SDWEC_HEALTH_MISSES (2) misses in a row it runs SDWEC_RESTART_COMMAND (the
# unit sets `systemctl kill --signal=SIGKILL sdwec-replica@PORT.service`).  Misses count only
# once the replica has answered since its last (re)start, or 180 s after it: a starting
# replica is not killed for being slow to import.  When SDWEC_PID_COMMAND is set (the unit:
# the replica's MainPID from systemctl), a replica whose process is stopped (state T, kill
# -STOP: it would answer nothing until SIGCONT) is restarted at the first check, without
# waiting for its checks to time out; the same rule as scripts/serve.sh's.
set -uo pipefail
source "$(dirname "$0")/../process-state.sh"
host=${1:?usage: health-loop.sh HOST PORT} port=${2:?usage: health-loop.sh HOST PORT}
timeout_s=${SDWEC_HEALTH_TIMEOUT:-2} max_misses=${SDWEC_HEALTH_MISSES:-2}
restart=${SDWEC_RESTART_COMMAND:?SDWEC_RESTART_COMMAND is not set}
pid_command=${SDWEC_PID_COMMAND:-}
probe='exec 3<>"/dev/tcp/$1/$2" || exit 0
printf "GET /_stcore/health HTTP/1.0\r\nHost: %s:%s\r\n\r\n" "$1" "$2" >&3
read -r _ code _ <&3 && echo "$code"'
misses=0 seen=0 since=$SECONDS
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
while :; do
  round_start=$(now_us)
  pid=""
  [ -n "$pid_command" ] && pid=$(bash -c "$pid_command" 2>/dev/null)
  if [[ $pid =~ ^[1-9][0-9]*$ ]] && [ "$(process_state "$pid")" = T ]; then
    echo "replica $host:$port: stopped (pid $pid in state T: SIGSTOP), answers nothing: $restart"
    bash -c "$restart"
    misses=0 seen=0 since=$SECONDS
    sleep 1
    continue
  fi
  code=$(timeout "$timeout_s" bash -c "$probe" _ "$host" "$port" 2>/dev/null)
  if [ "$code" = 200 ]; then
    misses=0 seen=1
  elif [ "$seen" = 1 ] || [ $((SECONDS - since)) -ge 180 ]; then
    misses=$((misses + 1))
    echo "replica $host:$port: no healthy answer (${code:-none within $timeout_s s}), $misses in a row"
    if [ "$misses" -ge "$max_misses" ]; then
      echo "replica $host:$port: $misses health checks missed: $restart"
      bash -c "$restart"
      misses=0 seen=0 since=$SECONDS
    fi
  fi
  # A check a second, start to start (at least 0.05 s apart), as serve.sh's: a check that
  # waited for a silent replica does not add a whole second before the next.
  rest=$((1000000 - ($(now_us) - round_start)))
  [ "$rest" -ge 50000 ] || rest=50000
  sleep "$((rest / 1000000)).$(printf %06d $((rest % 1000000)))"
done
