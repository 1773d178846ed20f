#!/usr/bin/env python3
"""`frenzy serve` before Slurm answers (issue 55): the port is bound at once, the live page is served, every other
route answers 503 with the reason, and --slurm-wait gives up after its limit. Slurm is absent: PATH holds only an
`sinfo` that fails, as on a machine where Slurm is not installed or its controller is down. The server is a real
process on 127.0.0.1, stopped by its PID.

usage: serve_waiting_test.py FRENZY_CLI"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    """(status, body) of a GET; connection errors as (None, reason)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, ConnectionError) as e:
        return None, str(e)


def main():
    cli = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        with open(os.path.join(bindir, "sinfo"), "w") as f:
            f.write("#!/bin/sh\necho 'sinfo: error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n")
        os.chmod(os.path.join(bindir, "sinfo"), 0o755)
        env = dict(os.environ, PATH=bindir + ":/usr/bin:/bin")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen([cli, "serve", "--slurm", "--state", os.path.join(tmp, "jobs.db"),
                                 "--listen", f"127.0.0.1:{port}"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            status = None
            deadline = time.time() + 30
            while time.time() < deadline and status is None:
                status, body = get(base + "/healthz")
                if status is None:
                    time.sleep(0.2)
            if status != 503 or "waiting for Slurm" not in body or "Unable to contact" not in body:
                failures.append(f"/healthz while Slurm is absent: {status} {body!r} (expected 503 naming the reason)")
            status, body = get(base + "/")
            if status != 200 or "<html" not in body.lower():
                failures.append(f"/ while Slurm is absent: {status} (expected the live page)")
            status, body = get(base + "/v1/jobs")
            try:
                err = json.loads(body).get("error", "")
            except ValueError:
                err = ""
            if status != 503 or not err.startswith("waiting for Slurm"):
                failures.append(f"/v1/jobs while Slurm is absent: {status} {body!r} (expected 503 with the reason)")
            time.sleep(2.5)  # the log is rate-limited: one line per reason, then one a minute
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                _, err_text = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err_text = proc.communicate()
                failures.append("serve did not stop on SIGTERM within 20 s")
        lines = [l for l in err_text.splitlines() if "waiting for Slurm" in l]
        if len(lines) != 1:
            failures.append(f"{len(lines)} 'waiting for Slurm' log lines in about 3 s (expected 1): {lines[:5]}")
        # --slurm-wait: gives up after its limit with a non-zero exit naming Slurm's answer
        t0 = time.time()
        r = subprocess.run([cli, "serve", "--slurm", "--state", os.path.join(tmp, "jobs2.db"),
                            "--listen", f"127.0.0.1:{free_port()}", "--slurm-wait", "2"], env=env,
                           capture_output=True, text=True, timeout=60)
        took = time.time() - t0
        if r.returncode == 0 or "Unable to contact" not in r.stderr or not (1.5 <= took <= 30):
            failures.append(f"--slurm-wait 2: exit {r.returncode} after {took:.1f} s, stderr {r.stderr[-300:]!r}")
        r = subprocess.run([cli, "serve", "--slurm", "--state", os.path.join(tmp, "jobs3.db"), "--slurm-wait", "-1"],
                           env=env, capture_output=True, text=True, timeout=30)
        if r.returncode != 2 or "--slurm-wait" not in r.stderr:
            failures.append(f"--slurm-wait -1: exit {r.returncode}, stderr {r.stderr!r} (expected 2 naming the option)")
    for f in failures:
        print("FAIL:", f)
    print(f"serve before Slurm: {6 - len(failures)} of 6 checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
