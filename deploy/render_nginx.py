"""Render deploy/nginx.conf.template for a list of replicas.

scripts/serve.sh calls this for its run directory; a systemd installation (deploy/systemd/,
docs/deploy.md) calls it once to write the file nginx reads.  Every placeholder of the
template is filled; one left over is an error.

    python deploy/render_nginx.py --run-dir /var/lib/sdwec-proxy --listen 0.0.0.0 --port 8080 \
        --max-upload-mib 200 127.0.0.1:8601 127.0.0.1:8602 > /etc/sdwec/nginx.conf
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import socket
import stat
import sys
from pathlib import Path

COOKIE = "sdwec_replica"
#: Sent with every answer of the proxy (``add_header ... always``; docs/deploy.md).
SECURITY_HEADERS = (
    ("X-Frame-Options", "DENY"),
    ("Content-Security-Policy", "frame-ancestors 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)
#: Seconds an idle kept-alive connection to a replica is reused: under uvicorn's 5 s (Streamlit
#: runs uvicorn with its default ``timeout_keep_alive``), so that nginx drops an idle
#: connection before the replica closes it.  Past that, a request could be written into a
#: connection the replica was closing and get a 502.
KEEPALIVE_SECONDS = 4
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.template"
ERRORS = Path(__file__).resolve().parent / "errors"
ROOT = Path(__file__).resolve().parent.parent
#: Where a location that serves files from disk points when no folder is usable: one that
#: does not exist (in the run directory), so that every request goes to a replica.
NOWHERE = "not-served-by-nginx"
#: A Plotly.js token (``dashboard.plotly_bundle.Bundle.token``) as nginx's configuration may
#: carry it in a quoted string.
PLOTLY_VERSION = re.compile(r"[0-9A-Za-z.+-]+")


def _warn(message):
    print(f"render_nginx.py: {message}", file=sys.stderr)


def _open_to_workers(path):
    """Whether nginx's workers can read the file ``path``, or every file under the folder
    ``path``: started as root they run as ``nobody``, so the path must be open to every
    user; otherwise as this user."""
    def ok(entry, mode):
        if os.geteuid() != 0:
            return os.access(entry, os.R_OK | (os.X_OK if stat.S_ISDIR(mode) else 0))
        return bool(mode & (stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH))

    target = Path(path).resolve()
    try:
        # Searchable all the way down from /, then every folder and file inside.
        if not all(ok(part, part.stat().st_mode) for part in [target, *target.parents]):
            return False
        for base, dirs, files in os.walk(target):
            for name in dirs + files:
                entry = os.path.join(base, name)
                if not ok(entry, os.stat(entry).st_mode):
                    return False
    except OSError:
        return False
    return True


def _compat(what):
    """The app's ``dashboard._compat`` (where the installed packages' files are found), or
    ``None``, said on standard error: the replicas then serve ``what``."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        from dashboard import _compat
    except ImportError as exc:
        _warn(f"the replicas serve {what} ({exc})")
        return None
    return _compat


def plotly_js():
    """``(file, token)``: the Plotly.js the charts load (``dashboard.plotly_bundle.chosen``:
    the basic bundle shipped in dashboard/vendor/ or the plotly package's full one;
    dashboard/charts.py serves a copy of it as ``./app/static/plotly.min.js?v=<token>``), or
    ``None``, said on standard error."""
    if _compat("Plotly.js") is None:
        return None
    from dashboard import plotly_bundle

    bundle = plotly_bundle.chosen()
    if bundle is None or not PLOTLY_VERSION.fullmatch(bundle.token):
        _warn("the replicas serve Plotly.js: no plotly package with Plotly.js installed here")
        return None
    if not _open_to_workers(bundle.path):
        _warn(f"the replicas serve Plotly.js: nginx's workers could not read {bundle.path}")
        return None
    return bundle.path, bundle.token


def frontend_root():
    """The folder nginx serves ``/static/...`` from (the installed Streamlit's built frontend,
    found by ``dashboard._compat.frontend_folder``), or ``None``, said on standard error:
    the app's code or Streamlit missing here, the frontend's layout changed, or files
    nginx's workers could not read (they would answer 403 instead of asking a replica)."""
    compat = _compat("Streamlit's frontend files")
    folder = compat.frontend_folder() if compat is not None else None
    if folder is not None and not _open_to_workers(Path(folder) / "static"):
        _warn(f"the replicas serve Streamlit's frontend files: nginx's workers could not "
              f"read every file under {folder}/static")
        return None
    return folder


def _resolved(server):
    """``HOST:PORT`` with the host as nginx will report it in ``$upstream_addr``."""
    host, _, port = server.rpartition(":")
    host = host.strip("[]")
    try:
        ipaddress.ip_address(host)
        address = host
    except ValueError:
        address = socket.gethostbyname(host)  # nginx resolves the name once, at its start
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def upstreams(servers, fail_timeout="5s"):
    """The ``upstream`` blocks: ``sdwec_any`` (browsers without a cookie), ``sdwec_rK``
    (replica K, then the others as backups) and ``sdwec_onlyK`` (replica K alone), each
    keeping idle connections for :data:`KEEPALIVE_SECONDS`.

    A server that fails once gets no requests for ``fail_timeout``; backups never count
    failures (``max_fails=0``), so when every replica had one slow answer at once (a busy
    machine) requests still go somewhere instead of "no live upstreams" (502).  In
    ``sdwec_any`` the backups are the replicas again, as that last resort.
    """
    check = f"max_fails=1 fail_timeout={fail_timeout}"
    blocks = ["    upstream sdwec_any {", "        zone sdwec_any 64k;", "        least_conn;"]
    blocks += [f"        server {s} {check};" for s in servers]
    if len(servers) > 1:
        blocks += [f"        server {s} backup max_fails=0;" for s in servers]
    idle = f"        keepalive_timeout {KEEPALIVE_SECONDS}s;"
    blocks += ["        keepalive 16;", idle, "    }"]
    for k, server in enumerate(servers, 1):
        blocks += [f"    upstream sdwec_r{k} {{", f"        zone sdwec_r{k} 64k;",
                   f"        server {server} {check};"]
        blocks += [f"        server {other} backup max_fails=0;"
                   for other in servers if other != server]
        blocks += ["        keepalive 8;", idle, "    }"]
        blocks += [f"    upstream sdwec_only{k} {{", f"        server {server};",
                   "        keepalive 4;", idle, "    }"]
    return "\n".join(blocks)


def _quoted(text):
    """``text`` inside nginx's single quotes (no variables: a dollar sign is refused)."""
    if "$" in text:
        raise ValueError("an error page may not contain '$' (nginx would read a variable)")
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _usable(folder, found_here, what):
    """``folder`` resolved, or ``None`` when there is none or nginx would read it otherwise
    than it is written (refused when given, said when found here)."""
    if folder is None:
        return None
    folder = Path(folder).resolve()
    if re.search(r'["$\\\s;{}#]', str(folder)):
        if not found_here:
            raise ValueError(f"nginx cannot be given the folder {str(folder)!r} as it is "
                             f"written")
        _warn(f"the replicas serve {what}: nginx cannot be given the folder "
              f"{str(folder)!r} as it is written")
        return None
    return folder


def _root_line(folder, run_dir):
    if folder is None:
        return (f"            root {Path(run_dir) / NOWHERE};  # none found when rendered: "
                f"every file goes to a replica")
    return f"            root {folder};"


def _milliseconds(text):
    """An nginx time with one unit (``10s``, ``1500ms``, ``1m``; bare: seconds) in ms."""
    match = re.fullmatch(r"(\d+)(ms|s|m)?", str(text).strip())
    if match is None:
        raise ValueError(f"{text!r} is not a time nginx reads here (e.g. 10s or 1500ms)")
    return int(match[1]) * {"ms": 1, "s": 1000, "m": 60_000, None: 1000}[match[2]]


def _positive(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
    return value


def render(servers, run_dir, listen, port, max_upload_mib, http_timeout="10s",
           upload_rate=2, uploads_at_once=32, workers="auto", template=TEMPLATE, *,
           uploads_per_client=2, uploads_per_address=16, body_timeout=45, frontend="auto",
           plotly="auto"):
    """The configuration text for nginx in front of ``servers`` (``HOST:PORT`` each).

    ``http_timeout``: how long a page request waits for a replica (also between two reads
    of its answer) before it goes to the next.  Uploads at once: ``uploads_per_client`` per
    browser, ``uploads_per_address`` per network address, ``uploads_at_once`` in all;
    ``body_timeout``: seconds an upload may send nothing before it is cut.  ``frontend``:
    the Streamlit build folder nginx serves ``/static/`` from (``"auto"``:
    :func:`frontend_root`; ``None``: none, every frontend file goes to a replica);
    ``plotly``: ``(file, token)`` of the Plotly.js nginx serves to the charts as
    ``plotly.min.js?v=<token>`` (``"auto"``: :func:`plotly_js`; ``None``: a replica serves
    it).
    """
    if not servers:
        raise ValueError("no replica to send requests to")
    for name in ("upload_rate", "uploads_at_once", "uploads_per_client",
                 "uploads_per_address", "body_timeout"):
        _positive(name, locals()[name])
    if not uploads_per_client <= uploads_per_address <= uploads_at_once:
        raise ValueError(
            f"the upload slots must nest: per browser ({uploads_per_client}) <= per address "
            f"({uploads_per_address}) <= in all ({uploads_at_once})")
    wait = _milliseconds(http_timeout)
    if wait < 1:
        raise ValueError("the HTTP timeout must be longer than 0")
    host = f"[{listen}]" if ":" in listen else listen
    numbered = list(enumerate(servers, 1))
    frontend = _usable(frontend_root() if frontend == "auto" else frontend,
                       frontend == "auto", "Streamlit's frontend files")
    js_file, js_token = (plotly_js() if plotly == "auto" else plotly) or (None, None)
    js_folder = _usable(None if js_file is None else Path(js_file).parent, plotly == "auto",
                        "Plotly.js")
    if js_folder is not None and not PLOTLY_VERSION.fullmatch(str(js_token)):
        raise ValueError(f"{js_token!r} is not a Plotly.js token")
    if js_folder is not None and not re.fullmatch(r"[\w.+-]+", Path(js_file).name):
        raise ValueError(f"nginx cannot be given the file name {Path(js_file).name!r}")
    values = {
        "RUN_DIR": str(run_dir), "LISTEN": f"{host}:{port}", "WORKERS": str(workers),
        "PAGE_414": _quoted((ERRORS / "414.html").read_text()), "COOKIE": COOKIE,
        # Streamlit's cap on an upload request: maxUploadSize MiB of file + 1 MiB of framing.
        "MAX_BODY_BYTES": str((int(max_upload_mib) + 1) * 2**20),
        "MAX_BODY_TEXT": f"{(int(max_upload_mib) + 1) * 2**20:,}",
        "HTTP_TIMEOUT": http_timeout, "UPLOAD_RATE": str(upload_rate),
        # Time for a second full attempt after one that timed out, and the connects.
        "RETRY_TIMEOUT": f"{2 * wait + 5000}ms",
        "UPLOADS_AT_ONCE": str(uploads_at_once),
        "UPLOADS_PER_CLIENT": str(uploads_per_client),
        "UPLOADS_PER_ADDRESS": str(uploads_per_address),
        "BODY_TIMEOUT": f"{body_timeout}s",
        "UPSTREAMS": upstreams(servers),
        "FRONTEND_ROOT": _root_line(frontend, run_dir),
        "PLOTLY_ROOT": _root_line(js_folder, run_dir),
        "PLOTLY_VERSION": ("        # none usable when rendered: every version goes to a replica"
                           if js_folder is None else f'        "{js_token}" /{Path(js_file).name};'),
        "SECURITY_HEADERS": "\n".join(f'            add_header {name} "{value}" always;'
                                       for name, value in SECURITY_HEADERS),
        "GROUP_MAP": "\n".join(f'        "{k}" sdwec_r{k};' for k, _ in numbered),
        "SESSION_MAP": "\n".join(f'        "{k}" sdwec_only{k};' for k, _ in numbered),
        "KNOWN_MAP": "\n".join(f'        "{k}" 1;' for k, _ in numbered),
        "REPLICA_NAMES": "\n".join(
            f'        "~(^|, ){re.escape(_resolved(s))}$" "{k}";' for k, s in numbered),
    }
    text = Path(template).read_text()
    for name, value in values.items():
        text = text.replace(f"@{name}@", value)
    leftover = re.findall(r"@[A-Z_]+@", text)
    if leftover:
        raise ValueError(f"{template} has fields render_nginx.py does not fill: {leftover}")
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("servers", nargs="+", metavar="HOST:PORT", help="the replicas, in order")
    parser.add_argument("--run-dir", required=True,
                        help="where nginx keeps its pid file, logs and temp folders")
    parser.add_argument("--listen", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--max-upload-mib", type=int, required=True,
                        help="Streamlit's server.maxUploadSize")
    parser.add_argument("--http-timeout", default="10s",
                        help="a replica that has not answered a page request within this is "
                             "skipped (nginx time, e.g. 10s or 1500ms)")
    parser.add_argument("--upload-rate", type=int, default=2, help="uploads/s per session")
    parser.add_argument("--uploads-per-client", type=int, default=2,
                        help="uploads in flight from one browser")
    parser.add_argument("--uploads-per-address", type=int, default=16,
                        help="uploads in flight from one network address")
    parser.add_argument("--uploads-at-once", type=int, default=32,
                        help="uploads in flight through the whole proxy")
    parser.add_argument("--body-timeout", type=int, default=45,
                        help="seconds an upload may send nothing before it is cut")
    parser.add_argument("--out", help="write here (default: standard output)")
    args = parser.parse_args(argv)
    try:
        text = render(args.servers, args.run_dir, args.listen, args.port, args.max_upload_mib,
                      args.http_timeout, args.upload_rate, args.uploads_at_once,
                      uploads_per_client=args.uploads_per_client,
                      uploads_per_address=args.uploads_per_address,
                      body_timeout=args.body_timeout)
    except (ValueError, OSError) as exc:
        print(f"render_nginx.py: {exc}", file=sys.stderr)
        return 1
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
