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
import re
import socket
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
           uploads_per_client=2, uploads_per_address=16, body_timeout=45):
    """The configuration text for nginx in front of ``servers`` (``HOST:PORT`` each).

    ``http_timeout``: how long a page request waits for a replica (also between two reads
    of its answer) before it goes to the next.  Uploads at once: ``uploads_per_client`` per
    browser, ``uploads_per_address`` per network address, ``uploads_at_once`` in all;
    ``body_timeout``: seconds an upload may send nothing before it is cut.
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
