#!/usr/bin/env bash
# Serve the dashboard to a class: N Streamlit replicas behind nginx, in the foreground.
#
#   bash scripts/serve.sh --replicas 2 --port 8080
#
# Starts N `python -m dashboard.launch run app.py` processes (Streamlit; dashboard/launch.py
# says why the launcher) on loopback (as scripts/dashboard.sh starts one, with
# deploy/streamlit.toml's production settings on top of .streamlit/config.toml), waits for
# each one's /_stcore/health, then starts Debian's nginx (installed with apt when
# missing) in front of them with websocket upgrade and one replica per browser (a cookie
# naming the replica that holds the browser's session), from deploy/nginx.conf.template
# rendered into a run directory.  Every replica shares one pool cache ($SDWEC_CACHE_DIR), so
# a pool is trained once.  Then it supervises: a replica that exits, stops answering its
# health check or grows past --max-memory is killed and started again; nginx is started
# again when it dies.  If serve.sh itself is killed, everything it started goes with it
# (the kernel's parent-death signal and a watchdog); a second serve.sh on the same port or
# run directory refuses to start.  Ctrl-C or SIGTERM stops everything.  For a class, run it
# under a supervisor that starts it again (deploy/systemd/sdwec-serve.service).
# Details: docs/deploy.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

usage() {
  cat <<'EOF'
Usage: bash scripts/serve.sh [options]

  --replicas N          Streamlit processes on this machine (default 2; 0 with --upstream)
  --port P              port nginx listens on (default 8080)
  --listen ADDR         address nginx listens on (default 0.0.0.0: the whole network)
  --replica-address A   address the replicas listen on (default 127.0.0.1)
  --replica-port Q      first replica's port, the others follow (default: free ports)
  --upstream HOST:PORT  a replica on another machine, added to nginx's list (repeatable)
  --no-proxy            start only the replicas (an application machine; see docs/deploy.md)
  --run-dir DIR         where the nginx config, pid files and logs go (default: a new
                        /tmp/sdwec-serve.XXXXXX)
  --health-timeout S    seconds a replica has to answer /_stcore/health (default 2)
  --health-misses N     missed health checks in a row before a replica is killed and
                        started again (default 2; checks run every second)
  --max-memory MIB      a replica whose resident memory passes this is killed and started
                        again (default 3072; 0: no limit)
  -h, --help            this text

Environment: SDWEC_CACHE_DIR (the shared pool cache, default ~/.cache/sdwec),
SDWEC_PYTHON (an interpreter with requirements.txt installed; default: .venv, created and
filled like scripts/dashboard.sh does), NGINX (the nginx binary), MALLOC_ARENA_MAX (2),
SDWEC_SERVE_LOCK_DIR (where the per-port lock files go; default $XDG_RUNTIME_DIR/sdwec-serve,
else /run/user/UID/sdwec-serve, else /tmp/sdwec-serve-locks-UID).

Exit status: 0 stopped, 1 failed to start, 2 bad arguments, 3 the port or the run directory
is already served by another serve.sh (nothing was started).
EOF
}

replicas=2 port=8080 listen=0.0.0.0 replica_address=127.0.0.1 replica_port="" run_dir=""
proxy=1 health_timeout=2 health_misses=2 max_memory=3072
upstreams=()
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas|--port|--listen|--replica-address|--replica-port|--upstream|--run-dir|\
    --health-timeout|--health-misses|--max-memory)
      [ $# -ge 2 ] || { echo "serve.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;&
    --replicas) replicas=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --listen) listen=$2; shift 2 ;;
    --replica-address) replica_address=$2; shift 2 ;;
    --replica-port) replica_port=$2; shift 2 ;;
    --upstream) upstreams+=("$2"); shift 2 ;;
    --no-proxy) proxy=0; shift ;;
    --run-dir) run_dir=$2; shift 2 ;;
    --health-timeout) health_timeout=$2; shift 2 ;;
    --health-misses) health_misses=$2; shift 2 ;;
    --max-memory) max_memory=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "serve.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for value in "$replicas" "$port" ${replica_port:+"$replica_port"} "$health_timeout" \
    "$health_misses" "$max_memory"; do
  [[ $value =~ ^[0-9]+$ ]] || { echo "serve.sh: $value is not a whole number" >&2; exit 2; }
done
if [ "$replicas" -eq 0 ] && { [ "$proxy" = 0 ] || [ ${#upstreams[@]} -eq 0 ]; }; then
  echo "serve.sh: nothing to serve: --replicas 0 needs --upstream (and the proxy)" >&2
  exit 2
fi
if [ "$health_misses" -lt 1 ] || [ "$health_timeout" -lt 1 ]; then
  echo "serve.sh: --health-misses and --health-timeout must be at least 1" >&2
  exit 2
fi

loopback() { case "$1" in 0.0.0.0|"") echo 127.0.0.1 ;; ::|"[::]") echo "::1" ;; *) echo "$1" ;; esac; }

# --------------------------------------------------------------------------- one at a time
# Two serve.sh on one port would both listen (nginx's reuseport lets the second bind) and
# split the class between two sets of replicas; two on one run directory would overwrite
# each other's pid files.  So serve.sh holds a flock on a file named after its port (fd 8)
# and one in its run directory (fd 9) as long as it runs.  Its watchdog inherits both, so a
# killed serve.sh's locks are free only once what it started is gone.
# is_serve_sh PID: whether PID is a running serve.sh (not a reused pid).
is_serve_sh() { [ -n "$1" ] && grep -qa 'serve\.sh' "/proc/$1/cmdline" 2>/dev/null; }
command -v flock >/dev/null || { echo "serve.sh: flock is missing: install util-linux" >&2; exit 1; }
lock_port=$port
[ "$proxy" = 1 ] || lock_port=-  # no proxy: no port of its own
# take_lock FD FILE WHAT: an exclusive flock on FILE through FD, then this serve.sh's line
# written into FILE; or exit 3 saying who has it.
take_lock() {
  local fd=$1 file=$2 what=$3 holder="" holder_dir="" holder_port="" since=""
  if flock -n "$fd"; then
    echo "$$ ${run_dir:--} $lock_port $(date -Is)" >"$file"
    return 0
  fi
  for _ in 1 2 3 4 5; do  # the holder writes its line just after it locks
    read -r holder holder_dir holder_port since 2>/dev/null <"$file" || true
    [ -n "$holder" ] && break
    sleep 0.2
  done
  if [ -n "$holder" ] && ! is_serve_sh "$holder"; then
    # Killed: its watchdog is stopping what it started, and lets go of the lock after that.
    echo "serve.sh: the serve.sh that had $what (pid $holder, run directory $holder_dir)" \
      "was killed; waiting for its watchdog to stop what it started" >&2
    if flock -w 20 "$fd"; then
      echo "$$ ${run_dir:--} $lock_port $(date -Is)" >"$file"
      return 0
    fi
    echo "serve.sh: $what is still held, 20 s after serve.sh pid $holder died, by what it" \
      "started (see $holder_dir/watchdog.log; \`fuser -v $file\` lists them). Stop those" \
      "processes, or use another --port / --run-dir. Nothing was started." >&2
    exit 3
  fi
  echo "serve.sh: $what is taken: serve.sh pid ${holder:-?} serves port ${holder_port:-?}" \
    "from the run directory ${holder_dir:-?} (since ${since:-?}). Nothing was started." >&2
  echo "  Stop that one first (Ctrl-C in its terminal, or: kill ${holder:-PID}; under" \
    "systemd: systemctl stop sdwec-serve), or give this one another --port and --run-dir." >&2
  echo "  What it serves: ${holder_dir:-its run directory}/serve.txt" >&2
  exit 3
}

if [ "$proxy" = 1 ]; then
  lock_dir=${SDWEC_SERVE_LOCK_DIR:-}
  if [ -z "$lock_dir" ]; then
    for candidate in "${XDG_RUNTIME_DIR:-}" "/run/user/$(id -u)"; do
      if [ -n "$candidate" ] && [ -d "$candidate" ] && [ -w "$candidate" ]; then
        lock_dir=$candidate/sdwec-serve
        break
      fi
    done
    lock_dir=${lock_dir:-/tmp/sdwec-serve-locks-$(id -u)}
  fi
  mkdir -p -m 700 "$lock_dir" 2>/dev/null || true
  # Someone else's folder (a shared /tmp) could hand out or steal the lock.
  if [ -L "$lock_dir" ] || [ ! -d "$lock_dir" ] || [ ! -O "$lock_dir" ]; then
    echo "serve.sh: $lock_dir (for the port's lock) is not a folder of yours: set" \
      "SDWEC_SERVE_LOCK_DIR to one that is" >&2
    exit 1
  fi
  port_lock=$lock_dir/port-$port.lock
  exec 8<>"$port_lock"
  take_lock 8 "$port_lock" "port $port"
  # Taken: anything still listening there is not a serve.sh of this user (another user's,
  # an older serve.sh's orphans, another program).
  if timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$(loopback "$listen")" "$port" 2>/dev/null
  then
    echo "serve.sh: another program already listens on port $port (not a serve.sh of this" \
      "user). Nothing was started. See which with: ss -ltnp 'sport = :$port'; stop it, or" \
      "choose another --port." >&2
    exit 3
  fi
fi

if [ -z "$run_dir" ]; then
  run_dir=$(mktemp -d /tmp/sdwec-serve.XXXXXX)
fi
mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
exec 9<>"$run_dir/serve.lock"
take_lock 9 "$run_dir/serve.lock" "the run directory $run_dir"
[ "$proxy" = 0 ] || cp "$run_dir/serve.lock" "$port_lock"  # now with the run directory
# Every process of this run carries it (a training worker too, in its own session), so that
# the watchdog, and anyone, can find them all.
export SDWEC_SERVE_RUN_DIR=$run_dir

# --------------------------------------------------------------------------- setup
if [ -n "${SDWEC_PYTHON:-}" ]; then
  PY=$SDWEC_PYTHON
else
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
  PY=$ROOT/.venv/bin/python
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# /usr/sbin is not on an ordinary user's PATH on Debian.
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
if [ "$proxy" = 1 ] && [ ! -x "$NGINX" ]; then
  echo "nginx is missing: installing Debian's package with apt"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
fi

# One cache for every replica (an absolute path: the replicas' working folder is the
# checkout); sdwec.pool holds a flock lock per entry, so concurrent replicas train a pool once.
cache_dir=${SDWEC_CACHE_DIR:-~/.cache/sdwec}
mkdir -p "$cache_dir"
export SDWEC_CACHE_DIR
SDWEC_CACHE_DIR=$(cd "$cache_dir" && pwd)
# Two malloc arenas instead of glibc's 8 per core, as scripts/dashboard.sh (results/load.md).
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
# One cookie secret for all replicas (signed cookies stay valid if a session moves); from
# the environment, not a flag, so it does not show in `ps`.
if [ -z "${STREAMLIT_SERVER_COOKIE_SECRET:-}" ]; then
  STREAMLIT_SERVER_COOKIE_SECRET=$("$PY" -c "import secrets; print(secrets.token_hex(32))")
fi
export STREAMLIT_SERVER_COOKIE_SECRET

ports=()
if [ "$replicas" -gt 0 ]; then
  if [ -n "$replica_port" ]; then
    for ((i = 0; i < replicas; i++)); do ports+=($((replica_port + i))); done
  else
    read -r -a ports <<<"$("$PY" - "$replicas" "$replica_address" <<'EOF'
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind((sys.argv[2], 0))
    held.append(s)  # held open until all are chosen, so no port is given twice
print(" ".join(str(s.getsockname()[1]) for s in held))
EOF
)"
  fi
fi

# The served settings as flags (deploy/streamlit.toml), one a line, after the upload limit
# nginx enforces: server.maxUploadSize as Streamlit resolves it (its config files, then the
# environment, then the flags).
mapfile -t served < <("$PY" - "$ROOT" <<'EOF'
import os, pathlib, sys, tomllib
root = pathlib.Path(sys.argv[1])
served = tomllib.loads((root / "deploy" / "streamlit.toml").read_text())
size = 200  # Streamlit's default
for path in (pathlib.Path.home() / ".streamlit" / "config.toml",
             root / ".streamlit" / "config.toml"):
    if path.exists():
        size = tomllib.loads(path.read_text()).get("server", {}).get("maxUploadSize", size)
size = os.environ.get("STREAMLIT_SERVER_MAX_UPLOAD_SIZE", size)
size = served.get("server", {}).get("maxUploadSize", size)
print(int(size))
for section, options in served.items():
    for key, value in options.items():
        print(f"--{section}.{key}={str(value).lower() if isinstance(value, bool) else value}")
EOF
)
max_upload_mib=${served[0]:-}
[[ $max_upload_mib =~ ^[0-9]+$ ]] || { echo "serve.sh: cannot read deploy/streamlit.toml" >&2; exit 1; }
streamlit_flags=("${served[@]:1}")

# --------------------------------------------------------------------------- processes
replica_pids=() restarts=()
declare -A draining  # process group of a dead nginx's orphaned workers -> when to kill it
nginx_pid="" sleeper="" stopping="" watchdog_pid="" nginx_restarts=0
echo $$ >"$run_dir/serve.pid"

# The kernel signals each replica and nginx the moment serve.sh dies, however it dies
# (setpriv --pdeathsig: PR_SET_PDEATHSIG, kept across exec): a replica gets SIGKILL, nginx's
# master SIGTERM, on which it stops its own workers (a SIGKILL would orphan them, still
# listening).  The watchdog below is the second line, and the only one without setpriv.
with_kill=() with_term=()
if setpriv --help 2>/dev/null | grep -q -- --pdeathsig; then
  with_kill=(setpriv --pdeathsig KILL --) with_term=(setpriv --pdeathsig TERM --)
fi

start_replica() {  # $1: index (0-based)
  local i=$1 log="$run_dir/replica-$(($1 + 1)).log"
  # setsid: each replica leads its own process group, which stop() kills as a whole.
  # dashboard.launch: `python -m streamlit` with a page's slider moves kept after it fails
  # over to another replica, and the upload policy and the app's modules in place before it
  # listens, so nginx sends a restarted replica no page before it is ready (dashboard/launch.py).
  # 8>&- 9>&-: the locks are serve.sh's and its watchdog's, not the replicas'.
  setsid "${with_kill[@]}" "$PY" -m dashboard.launch run app.py \
    --server.address "$replica_address" --server.port "${ports[$i]}" "${streamlit_flags[@]}" \
    >>"$log" 2>&1 </dev/null 8>&- 9>&- &
  replica_pids[$i]=$!
  echo "${replica_pids[$i]}" >"$run_dir/replica-$((i + 1)).pid"
}

# If serve.sh itself is killed (SIGKILL: no trap runs), its children must not live on
# unsupervised.  A watchdog in its own session polls its parent twice a second; once serve.sh
# is gone it kills every process group serve.sh started (the pid files: each replica and
# nginx lead their own group, so nginx's workers go with their master), then every other
# process that carries this run's SDWEC_SERVE_RUN_DIR (a replica's training worker runs in a
# session of its own): SIGTERM, SIGKILL 3 s later.  It holds serve.sh's locks (fds 8 and 9,
# inherited) until then, so a new serve.sh on the port starts only after it.
start_watchdog() {
  setsid "$PY" - "$$" "$run_dir" >>"$run_dir/watchdog.log" 2>&1 </dev/null <<'EOF' &
import glob, os, signal, sys, time
parent, run_dir = int(sys.argv[1]), sys.argv[2]
for sig in (signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
while os.getppid() == parent:
    time.sleep(0.5)
marker = b"\0SDWEC_SERVE_RUN_DIR=" + os.fsencode(run_dir) + b"\0"


def marked():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker in b"\0" + f.read() + b"\0":
                        found.append(int(entry))
            except OSError:  # gone, or not ours
                pass
    return found


groups = []
for path in (glob.glob(os.path.join(run_dir, "replica-*.pid"))
             + glob.glob(os.path.join(run_dir, "nginx*.pid"))):
    try:
        groups.append(int(open(path).read().split()[0]))
    except (OSError, ValueError, IndexError):
        pass
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
time.sleep(0.2)  # the groups' processes gone, so that only the others are listed
others = marked()
for signum, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 0.0)):
    for pid in marked():
        try:
            os.kill(pid, signum)
        except OSError:
            pass
    deadline = time.monotonic() + wait
    while marked() and time.monotonic() < deadline:
        time.sleep(0.1)
print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} serve.sh (pid {parent}) is gone: "
      f"killed process groups {groups} and the other processes of this run {others}",
      flush=True)
EOF
  watchdog_pid=$!
}

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
# process_state PID: R, S, D, T (stopped by a signal), ... (deploy/process-state.sh).
source "$ROOT/deploy/process-state.sh"

# HTTP status of GET $1:$2$3 over bash's /dev/tcp (no curl needed); empty if there is no
# answer within $4 seconds (a stopped process still accepts connections: only a time limit
# on the whole exchange tells it is not answering).
probe='exec 3<>"/dev/tcp/$1/$2" || exit 0
printf "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n" "$3" "$1" "$2" >&3
read -r _ code _ <&3 && echo "$code"'
http_status() {
  timeout "${4:-5}" bash -c "$probe" _ "$1" "$2" "$3" 2>/dev/null || true
}

# Resident memory of a process in MiB (0 if it is gone).
rss_mib() {
  local key value _
  while read -r key value _; do
    [ "$key" = VmRSS: ] && { echo $((value / 1024)); return; }
  done 2>/dev/null <"/proc/$1/status" || true
  echo 0
}

kill_group() {  # $1: the pid of a process group's leader; SIGKILL to the group, then reap
  [ -n "$1" ] || return 0
  kill -KILL -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local deadline=$((SECONDS + 3))
  while kill -0 -- "-$1" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
}

stop() {
  [ -n "$stopping" ] && return
  stopping=1
  set +e
  trap - INT TERM HUP
  echo "serve.sh: stopping"
  alive "$watchdog_pid" && kill "$watchdog_pid" 2>/dev/null
  alive "$sleeper" && kill "$sleeper" 2>/dev/null
  if alive "$nginx_pid"; then
    "$NGINX" -p "$run_dir" -c "$run_dir/nginx.conf" -e "$run_dir/nginx-error.log" -s quit \
      2>/dev/null || kill -QUIT "$nginx_pid" 2>/dev/null || true
  fi
  for pid in "${replica_pids[@]}"; do
    alive "$pid" && kill -TERM -- "-$pid" 2>/dev/null
  done
  local deadline=$((SECONDS + 20)) left
  while :; do
    left=0
    for pid in "$nginx_pid" "${replica_pids[@]}"; do alive "$pid" && left=1; done
    [ "$left" = 0 ] || [ "$SECONDS" -ge "$deadline" ] && break
    sleep 0.2
  done
  # Whatever did not stop in time: the whole process group (nginx's workers, a replica's
  # children), then reap.
  for pid in "$nginx_pid" "${replica_pids[@]}" "${!draining[@]}"; do
    [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null
  done
  wait 2>/dev/null || true
  rm -f "$run_dir"/replica-*.pid "$run_dir"/nginx-draining-*.pid "$run_dir"/.health-* \
    "$run_dir/serve.pid"
  echo "serve.sh: stopped; logs stay in $run_dir"
}
trap 'stop; exit 0' INT TERM HUP
trap stop EXIT

start_watchdog
for ((i = 0; i < replicas; i++)); do start_replica "$i"; restarts[$i]=0; done

# Each replica answers /_stcore/health before nginx sends it anyone.
deadline=$((SECONDS + 180))
for ((i = 0; i < replicas; i++)); do
  until [ "$(http_status "$(loopback "$replica_address")" "${ports[$i]}" /_stcore/health)" = 200 ]; do
    if ! alive "${replica_pids[$i]}" || [ "$SECONDS" -ge "$deadline" ]; then
      echo "serve.sh: replica $((i + 1)) did not start; the end of $run_dir/replica-$((i + 1)).log:" >&2
      tail -n 30 "$run_dir/replica-$((i + 1)).log" >&2 || true
      exit 1
    fi
    sleep 0.5
  done
done

start_nginx() {
  setsid "${with_term[@]}" "$NGINX" "${nginx_args[@]}" >>"$run_dir/nginx-error.log" 2>&1 \
    </dev/null 8>&- 9>&- &
  nginx_pid=$!
}

if [ "$proxy" = 1 ]; then
  servers=()
  for ((i = 0; i < replicas; i++)); do
    servers+=("$(loopback "$replica_address"):${ports[$i]}")
  done
  servers+=("${upstreams[@]}")
  mkdir -p "$run_dir/nginx-temp"
  if ! "$PY" "$ROOT/deploy/render_nginx.py" --run-dir "$run_dir" --listen "$listen" \
      --port "$port" --max-upload-mib "$max_upload_mib" --out "$run_dir/nginx.conf" \
      "${servers[@]}"; then
    exit 1
  fi
  nginx_args=(-p "$run_dir" -c "$run_dir/nginx.conf" -e "$run_dir/nginx-error.log")
  if ! "$NGINX" "${nginx_args[@]}" -t -q 2>>"$run_dir/nginx-error.log"; then
    echo "serve.sh: nginx rejected $run_dir/nginx.conf:" >&2
    tail -n 20 "$run_dir/nginx-error.log" >&2
    exit 1
  fi
  start_nginx
  deadline=$((SECONDS + 30))
  until [ -n "$(http_status "$(loopback "$listen")" "$port" /_stcore/health)" ]; do
    if ! alive "$nginx_pid" || [ "$SECONDS" -ge "$deadline" ]; then
      echo "serve.sh: nginx did not start; the end of $run_dir/nginx-error.log:" >&2
      tail -n 20 "$run_dir/nginx-error.log" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
fi

# --------------------------------------------------------------------------- report
{
  if [ "$proxy" = 1 ]; then
    shown=$listen
    [ "$listen" = 0.0.0.0 ] && shown=$(hostname -I 2>/dev/null | cut -d' ' -f1 || true)
    echo "SDWEC Explorer served at http://${shown:-127.0.0.1}:$port/" \
      "(nginx pid $nginx_pid, ${#servers[@]} replica(s))"
  else
    echo "SDWEC Explorer replicas started (no proxy)"
  fi
  echo "  run directory   $run_dir"
  if [ "$proxy" = 1 ]; then
    echo "  nginx           config $run_dir/nginx.conf"
    echo "                  logs   $run_dir/nginx-access.log, $run_dir/nginx-error.log"
    echo "                  upload request limit $(((max_upload_mib + 1) * 1048576)) bytes" \
      "(server.maxUploadSize = $max_upload_mib MiB + 1 MiB of multipart framing)"
  fi
  for ((i = 0; i < replicas; i++)); do
    echo "  replica $((i + 1))       http://$(loopback "$replica_address"):${ports[$i]}" \
      "(pid ${replica_pids[$i]})  log $run_dir/replica-$((i + 1)).log"
  done
  for up in "${upstreams[@]}"; do echo "  remote replica  http://$up"; done
  echo "  pool cache      $SDWEC_CACHE_DIR (shared)"
  echo "  health          every 1 s, ${health_timeout} s to answer; ${health_misses} missed in a row" \
    "or more than $([ "$max_memory" = 0 ] && echo "no" || echo "$max_memory MiB") resident: killed and started again"
  echo "                  $run_dir/health.log (changes), $run_dir/status (now)"
  echo "Stop with Ctrl-C or: kill $$"
} | tee "$run_dir/serve.txt"

# --------------------------------------------------------------------------- supervise
# Every second: nginx started again if it died (its orphaned workers killed first: they
# hold the port); each replica's /_stcore/health asked (all at once, each within
# --health-timeout s); a replica that exited is started again on its port, one that is
# stopped (process state T: kill -STOP; it would answer nothing until a SIGCONT) is killed
# (SIGKILL) and started again at once, one that missed --health-misses checks in a row
# (hung) or passed --max-memory likewise.  A busy replica still answers its health check
# (Streamlit's event loop answers it while scripts run in their own threads), so only a
# stopped or hung one is killed.  A starting replica has 180 s before its misses count.
# Meanwhile nginx's passive checks steer requests around the failing replica.
declare -A last_state misses starting_since
for ((i = 0; i < replicas; i++)); do misses[$i]=0; starting_since[$i]=""; done
exec 4>&1  # the terminal, for health changes written while stdout goes to the status file
# Milliseconds: harness/faults.py (python -m benchmarks.serve --faults) sets these lines beside its sessions' steps.
note() { echo "$(date +%Y-%m-%dT%H:%M:%S.%3N%:z) $*" | tee -a "$run_dir/health.log" >&4; }
restart_replica() {  # $1: index, $2: why
  note "replica $(($1 + 1)) (port ${ports[$1]}, pid ${replica_pids[$1]}): $2; started again"
  kill_group "${replica_pids[$1]}"
  start_replica "$1"
  restarts[$1]=$((restarts[$1] + 1))
  misses[$1]=0
  starting_since[$1]=$SECONDS
}
# Microseconds since the epoch (bash 5; the locale may write the fraction with a comma).
now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$((10#$t))"; }
round_start=$(now_us)
while :; do
  # A round a second, start to start: one that waited for a silent replica's answer (up to
  # --health-timeout) sleeps only what is left of its second (at least 0.05 s), so a hung
  # replica's misses come every --health-timeout s, not every --health-timeout + 1 s.
  rest=$((1000000 - ($(now_us) - round_start)))
  [ "$rest" -ge 50000 ] || rest=50000
  sleep "$((rest / 1000000)).$(printf %06d $((rest % 1000000)))" &
  sleeper=$!
  # Woken by nginx's exit too, so that a new one listens within a fraction of a second.
  wait -n "$sleeper" ${nginx_pid:+"$nginx_pid"} 2>/dev/null || true
  round_start=$(now_us)
  alive "$watchdog_pid" || start_watchdog
  if [ "$proxy" = 1 ] && ! alive "$nginx_pid"; then
    wait "$nginx_pid" 2>/dev/null || true
    old_nginx=$nginx_pid
    # The new master binds the port beside the dead one's orphaned workers (reuseport):
    # no moment without a listener.  Those workers then stop gracefully (SIGQUIT: they
    # stop accepting, finish their requests, keep websockets for worker_shutdown_timeout);
    # whatever is left after 12 s is killed.
    start_nginx
    # Its master binds the port before it forks its workers: once a worker is there, the
    # new listener is, and the old one may close.
    deadline=$((SECONDS + 3))
    while alive "$nginx_pid" && ! pgrep -P "$nginx_pid" >/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
      sleep 0.05
    done
    kill -QUIT -- "-$old_nginx" 2>/dev/null || true
    echo "$old_nginx" >"$run_dir/nginx-draining-$old_nginx.pid"
    draining[$old_nginx]=$((SECONDS + 12))
    nginx_restarts=$((nginx_restarts + 1))
    note "nginx (pid $old_nginx) exited; started again (pid $nginx_pid)"
  fi
  for old in "${!draining[@]}"; do
    if [ "$SECONDS" -ge "${draining[$old]}" ]; then
      kill_group "$old"
      unset "draining[$old]"
      rm -f "$run_dir/nginx-draining-$old.pid"
    fi
  done
  probes=() states=()
  for ((i = 0; i < replicas; i++)); do
    rm -f "$run_dir/.health-$i"
    states[$i]=$(process_state "${replica_pids[$i]}")
    if alive "${replica_pids[$i]}" && [ "${states[$i]}" != T ]; then
      http_status "$(loopback "$replica_address")" "${ports[$i]}" /_stcore/health \
        "$health_timeout" >"$run_dir/.health-$i" &
      probes+=($!)
    fi
  done
  [ ${#probes[@]} -eq 0 ] || wait "${probes[@]}" 2>/dev/null || true
  {
    echo "# $(date -Is)"
    [ "$proxy" = 1 ] && echo "nginx pid $nginx_pid, restarts $nginx_restarts"
    for ((i = 0; i < replicas; i++)); do
      code=$(cat "$run_dir/.health-$i" 2>/dev/null || true)
      rss=$(rss_mib "${replica_pids[$i]}")
      if ! alive "${replica_pids[$i]}"; then
        wait "${replica_pids[$i]}" 2>/dev/null || true
        restart_replica "$i" "exited"
        state="starting"
      elif [ "${states[$i]}" = T ]; then
        restart_replica "$i" "stopped (process state T: SIGSTOP), answers nothing"
        state="starting"
      elif [ "$max_memory" -gt 0 ] && [ "$rss" -gt "$max_memory" ]; then
        restart_replica "$i" "$rss MiB resident, over the $max_memory MiB limit"
        state="starting"
      elif [ "$code" = 200 ]; then
        misses[$i]=0
        starting_since[$i]=""
        state=healthy
      elif [ -n "${starting_since[$i]}" ]; then
        state="starting"
        if [ $((SECONDS - starting_since[$i])) -ge 180 ]; then
          restart_replica "$i" "not answering 180 s after its start"
        fi
      else
        misses[$i]=$((misses[$i] + 1))
        state="unhealthy (${code:-no answer}, ${misses[$i]} in a row)"
        if [ "${misses[$i]}" -ge "$health_misses" ]; then
          restart_replica "$i" "${misses[$i]} health checks missed (${code:-no answer within ${health_timeout} s})"
          state="starting"
        fi
      fi
      echo "replica $((i + 1)) port ${ports[$i]} pid ${replica_pids[$i]}: $state," \
        "$rss MiB, restarts ${restarts[$i]}"
      short=${state%% (*}
      if [ "${last_state[$i]:-healthy}" != "$short" ]; then
        note "replica $((i + 1)) (port ${ports[$i]}): $state"
      fi
      last_state[$i]=$short
    done
  } >"$run_dir/status.new"
  mv "$run_dir/status.new" "$run_dir/status"
done
