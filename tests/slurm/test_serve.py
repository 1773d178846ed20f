#!/usr/bin/env python3
"""Integration tests of `frenzy serve` against a real Slurm 22.05 started here (tests/slurm/slurm_cluster.py):
two 8 x A100 nodes, one 8 x V100, one 4 x T4 (typed GPU GRES on placeholder files). Jobs run short shell commands
instead of training. Every process started is stopped by PID at the end, pass or fail.

Usage: test_serve.py --frenzy PATH/TO/frenzy [--only NAME,...] [--report FILE]
Exit 0 = all passed, 1 = a check failed, 77 = cannot run here (not root, Slurm missing).
"""
import argparse
import concurrent.futures
from http.client import HTTPException
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import slurm_cluster  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema"))
import schema_registry  # noqa: E402  (docs/schema's JSON Schemas, with their $refs; python3-jsonschema)

SCHEMAS = schema_registry.Schemas()


def conforms(kind, doc):
    """Asserts that an answer is valid under docs/schema/KIND.schema.json (jsonschema.ValidationError says where
    not); returns it."""
    return SCHEMAS.validate(kind, doc)

GRES_MAP = "a100=a100-80g,v100=v100-32g,t4=t4"
# The test cluster's configuration, in catalog types: what /v1/cluster must read back.
EXPECTED_TYPES = {"a100-80g": 16, "v100-32g": 8, "t4": 4}
EXPECTED_NODES = {"a100-1": ("a100-80g", "a100", 8), "a100-2": ("a100-80g", "a100", 8),
                  "v100-1": ("v100-32g", "v100", 8), "t4-1": ("t4", "t4", 4)}


def small_job(name, tokens=2e6, limits=None):
    j = {"name": name, "model": {"preset": "gpt2"},
         "training": {"seq_len": 1024, "micro_batch": 1, "global_batch": 8, "total_tokens": tokens,
                      "precision": "fp16-mixed"}}
    if limits:
        j["limits"] = limits
    return j


class Serve:
    """One `frenzy serve` process on the test cluster."""

    def __init__(self, frenzy, cluster, workdir, port, token_file=None):
        self.frenzy, self.cluster, self.workdir, self.port = frenzy, cluster, workdir, port
        self.token_file = token_file
        self.extra = []  # more `frenzy serve` options (test_serve_mixed: --mixed)
        self.url = f"http://127.0.0.1:{port}"
        self.state = os.path.join(workdir, "state.db")
        self.proc = None
        # Jobs named long-* sleep 40 s on their first attempt (a marker file remembers), mid-* 6 s, others 1 s.
        self.run_command = (
            f'case "$FRENZY_JOB_NAME" in '
            f'long*) if [ -e {workdir}/ran-$FRENZY_JOB_NAME ]; then sleep 1; else touch {workdir}/ran-$FRENZY_JOB_NAME; sleep 40; fi;; '
            f'mid*) sleep 6;; *) sleep 1;; esac')

    def start(self):
        argv = [self.frenzy, "serve", "--slurm", "--state", self.state, "--listen", f"127.0.0.1:{self.port}",
                "--gres-map", GRES_MAP, "--run-command", self.run_command, "--tick", "0.5", "--slurm-timeout", "10"]
        if self.token_file:
            argv += ["--token-file", self.token_file]
        argv += self.extra
        self.log = open(os.path.join(self.workdir, "serve.log"), "a")
        self.proc = subprocess.Popen(argv, env=self.cluster.env, stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 60
        while time.time() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"frenzy serve exited with {self.proc.returncode}; see {self.workdir}/serve.log")
            try:
                if http("GET", self.url + "/healthz", token=self.token())[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("frenzy serve did not come up")

    def token(self):
        return open(self.token_file).read().strip() if self.token_file else None

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def get(self, path):
        return http("GET", self.url + path, token=self.token())

    def post(self, body, raw=None):
        return http("POST", self.url + "/v1/jobs", body=raw if raw is not None else json.dumps(body).encode(), token=self.token())

    def job(self, jid):
        st, j = self.get(f"/v1/jobs/{jid}")
        assert st == 200, (st, j)
        return conforms("serve-job", j)

    def wait(self, jids, states, timeout, what):
        end = time.time() + timeout
        last = {}
        while time.time() < end:
            _, lst = self.get("/v1/jobs")
            last = {j["id"]: j["state"] for j in lst["jobs"] if j["id"] in jids}
            if len(last) == len(jids) and all(s in states for s in last.values()):
                conforms("serve-jobs", lst)
                return last
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}: {last}")


def http(method, url, body=None, token=None, headers=None, timeout=60):
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    h.update(headers or {})
    req = urllib.request.Request(url, data=body, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            data = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        data = e.read()
        status = e.code
    try:
        return status, json.loads(data) if data else None
    except ValueError:
        return status, data.decode(errors="replace")


def metrics(serve):
    st, text = serve.get("/metrics")
    assert st == 200
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        k, v = line.rsplit(" ", 1)
        out[k] = float(v)
    return out


def slurm_jobs(cluster):
    return json.loads(cluster.run(["squeue", "--json"]).stdout)["jobs"]


def tags_by_frenzy_id(cluster):
    """frenzy id -> list of (tag, slurm job id, state) of every Slurm job carrying our tag."""
    out = {}
    for j in slurm_jobs(cluster):
        m = re.fullmatch(r"frenzy:(\d+):(\d+)", j.get("comment") or "")
        if m:
            out.setdefault(int(m.group(1)), []).append((j["comment"], j["job_id"], j["job_state"]))
    return out


def show_job(cluster, slurm_id):
    line = cluster.run(["scontrol", "show", "job", "-o", str(slurm_id)]).stdout
    return dict(re.findall(r"(\S+?)=(\S*)", line))


# ---------------------------------------------------------------------------------------------------- the tests


def test_inventory(ctx):
    st, c = ctx.serve.get("/v1/cluster")
    assert st == 200, c
    conforms("serve-cluster", c)
    got_types = {t["gpu"]: t["gpus"] for t in c["types"]}
    assert got_types == EXPECTED_TYPES, got_types
    got_nodes = {n["name"]: (n["gpu"], n["gres_type"], n["gpus"]) for n in c["nodes"]}
    assert got_nodes == EXPECTED_NODES, got_nodes
    assert all(n["up"] and n["slurm_state"] == "idle" for n in c["nodes"]), c["nodes"]
    assert all(t["free"] == t["gpus"] for t in c["types"]), c["types"]
    ctx.report["inventory"] = got_types


def check_placement(ctx, jid):
    j = ctx.serve.job(jid)
    plan, alloc, sid = j["plan"], j["allocation"], j["slurm_job_id"]
    assert plan and alloc and sid, j
    sj = show_job(ctx.cluster, sid)
    nodes = slurm_cluster_expand(sj["NodeList"])
    assert nodes == sorted(n for n, _ in alloc), (nodes, alloc)
    assert int(sj["NumNodes"]) == plan["nodes"] == len(alloc), (sj["NumNodes"], plan["nodes"], alloc)
    gres_type = EXPECTED_NODES[alloc[0][0]][1]
    assert all(EXPECTED_NODES[n][0] == plan["gpu"] for n, _ in alloc), (plan["gpu"], alloc)
    per_node = {g for _, g in alloc}
    if len(per_node) == 1:
        assert sj["TresPerNode"] == f"gres:gpu:{gres_type}:{alloc[0][1]}", sj["TresPerNode"]
    else:
        assert sj["TresPerJob"] == f"gres:gpu:{gres_type}:{plan['gpus']}", sj["TresPerJob"]
    assert sum(g for _, g in alloc) == plan["gpus"]
    return j, sj


def slurm_cluster_expand(s):
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", s):
        m = re.fullmatch(r"(.*)\[(.*)\]", part)
        if not m:
            out.append(part)
            continue
        for r in m.group(2).split(","):
            a, _, b = r.partition("-")
            for k in range(int(a), int(b or a) + 1):
                out.append(f"{m.group(1)}{str(k).zfill(len(a))}")
    return sorted(out)


def test_placement(ctx):
    s = ctx.serve
    placed = {}
    for name, lim in [("mid-a100", {"gpu_types": ["a100-80g"]}), ("mid-v100", {"gpu_types": ["v100-32g"]}),
                      ("mid-any", None), ("mid-wide", {"gpu_types": ["a100-80g"], "max_gpus": 16})]:
        st, r = s.post(small_job(name, tokens=5e8, limits=lim))
        assert st == 201, (st, r)
        placed[name] = conforms("serve-submit", r)["id"]
    s.wait(set(placed.values()), {"running", "completed"}, 60, "placement jobs running")
    for name, jid in placed.items():
        j, sj = check_placement(ctx, jid)
        if name == "mid-v100":
            assert j["plan"]["gpu"] == "v100-32g"
        if name == "mid-a100":
            assert j["plan"]["gpu"] == "a100-80g"
        ctx.report.setdefault("placement", {})[name] = {"plan": f'{j["plan"]["gpus"]} x {j["plan"]["gpu"]} on {j["plan"]["nodes"]} node(s)',
                                                          "slurm": f'{sj["NodeList"]} {sj.get("TresPerNode", "")}{sj.get("TresPerJob", "")}'}
    s.wait(set(placed.values()), {"completed"}, 60, "placement jobs completed")


def test_too_large(ctx):
    st, r = ctx.serve.post({"name": "huge", "model": {"preset": "llama-3.1-405b"},
                            "training": {"seq_len": 8192, "micro_batch": 1, "global_batch": 64, "total_tokens": 1e9,
                                         "precision": "fp16-mixed"}})
    assert st == 422, (st, r)
    conforms("serve-error", r)
    got = {x["gpu"] for x in r["infeasible"]}
    assert got == set(EXPECTED_TYPES), r
    # each type says what memory it lacks: "needs N x 80 GiB ..." where a count would fit, or "does not fit on 15 GiB
    # cards ... (up to 65536 GPUs)" where none does (T4 runs unfused attention: the 8k x 8k scores alone fill it)
    assert all("needs" in x["reason"] or "does not fit on" in x["reason"] for x in r["infeasible"]), r
    assert all("GiB" in x["reason"] for x in r["infeasible"]), r
    ctx.report["too_large_reasons"] = r["infeasible"]


def test_drained_avoided(ctx):
    c, s = ctx.cluster, ctx.serve
    c.run(["scontrol", "update", "NodeName=a100-1", "State=DRAIN", "Reason=frenzy-test"])
    try:
        time.sleep(1.5)  # two ticks
        st, cl = s.get("/v1/cluster")
        assert not [n for n in conforms("serve-cluster", cl)["nodes"] if n["name"] == "a100-1"][0]["up"], cl
        ids = []
        for k in range(2):
            st, r = s.post(small_job(f"mid-drain-{k}", tokens=5e8, limits={"gpu_types": ["a100-80g"], "max_gpus": 4}))
            assert st == 201, r
            ids.append(r["id"])
        s.wait(set(ids), {"running", "completed"}, 60, "jobs on the undrained a100 node")
        for jid in ids:
            j, sj = check_placement(ctx, jid)
            assert [n for n, _ in j["allocation"]] == ["a100-2"], j["allocation"]
        s.wait(set(ids), {"completed"}, 60, "drain jobs completed")
    finally:
        c.run(["scontrol", "update", "NodeName=a100-1", "State=RESUME"])


def test_slurmd_killed(ctx):
    c, s = ctx.cluster, ctx.serve
    st, r = s.post(small_job("long-failover", tokens=5e8, limits={"gpu_types": ["a100-80g"], "max_gpus": 8}))
    assert st == 201, r
    jid = r["id"]
    s.wait({jid}, {"running"}, 60, "long job running")
    j = s.job(jid)
    first_node = j["allocation"][0][0]
    first_slurm = j["slurm_job_id"]
    t0 = time.time()
    c.kill("slurmd-" + first_node)
    try:
        # Slurm marks the node DOWN after SlurmdTimeout; Frenzy requeues the job and places it on the other node.
        end = time.time() + 90
        while time.time() < end:
            j = s.job(jid)
            if j["slurm_job_id"] not in (None, first_slurm) and j["allocation"]:
                break
            time.sleep(0.5)
        assert j["slurm_job_id"] not in (None, first_slurm), j
        assert first_node not in [n for n, _ in j["allocation"]], j["allocation"]
        assert any("requeued" in e["detail"] for e in j["events"]), j["events"]
        s.wait({jid}, {"completed"}, 60, "failed-over job completed")
        assert s.job(jid)["attempt"] == 2
        ctx.report["failover_s"] = round(time.time() - t0, 1)
    finally:
        c.start_slurmd(first_node)
        c.wait_nodes_idle(60)


def test_serve_kill9_burst(ctx):
    c, s = ctx.cluster, ctx.serve
    import threading
    accepted = []
    lock = threading.Lock()
    killed = threading.Event()

    def submit(k):
        try:
            st, r = s.post(small_job(f"burst-k9-{k}"))
        except (OSError, HTTPException):  # IncompleteRead: killed after the headers, before the body
            return  # serve was killed while we asked: not accepted
        if st == 201:
            with lock:
                accepted.append(r["id"])
                if len(accepted) == 30 and not killed.is_set():
                    killed.set()
                    s.kill9()  # mid-burst: some jobs accepted only, some submitted to Slurm, more still arriving

    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        list(ex.map(submit, range(80)))
    assert killed.is_set() and len(accepted) >= 30, len(accepted)
    in_slurm = len(tags_by_frenzy_id(c))
    s.start()
    states = s.wait(set(accepted), {"completed"}, 150, "burst jobs completed after restart")
    tags = tags_by_frenzy_id(c)
    dup = {jid: t for jid, t in tags.items() if jid in accepted and len(t) != 1}
    assert not dup, f"submitted more than once: {dup}"
    assert all(jid in tags for jid in accepted)
    _, lst = s.get("/v1/jobs")
    reconciled = sum(1 for jid in accepted
                     if any("reconciled" in e["detail"] for e in s.job(jid)["events"]))
    ctx.report["kill9"] = {"accepted_before_kill": len(accepted), "in_slurm_at_kill": in_slurm,
                           "completed": len(states), "reconciled_events": reconciled}


def test_ctld_restart(ctx):
    c, s = ctx.cluster, ctx.serve
    ids = []
    for k in range(6):
        st, r = s.post(small_job(f"mid-ctld-{k}"))
        assert st == 201, r
        ids.append(r["id"])
    s.wait(set(ids), {"running", "completed"}, 60, "jobs running before the slurmctld restart")
    c.kill("slurmctld", signal.SIGTERM)
    end = time.time() + 25  # a Slurm command retries the controller, then --slurm-timeout (10 s) ends it
    while time.time() < end and metrics(s)["frenzy_slurm_reachable"] != 0:
        time.sleep(0.5)
    assert metrics(s)["frenzy_slurm_reachable"] == 0
    c.start_ctld(clear=False)
    s.wait(set(ids), {"completed"}, 90, "jobs completed after the slurmctld restart")
    assert metrics(s)["frenzy_slurm_reachable"] == 1


def test_burst_200(ctx):
    c, s = ctx.cluster, ctx.serve
    t0 = time.time()
    lat = []

    def submit(k):
        a = time.time()
        st, r = s.post(small_job(f"burst-{k}"))
        lat.append(time.time() - a)
        assert st == 201, r
        return r["id"]

    before = metrics(s)
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        ids = list(ex.map(submit, range(200)))
    accepted_s = time.time() - t0
    assert len(set(ids)) == 200
    s.wait(set(ids), {"completed"}, 240, "200 burst jobs completed")
    total_s = time.time() - t0
    tags = tags_by_frenzy_id(c)
    dup = {jid: t for jid, t in tags.items() if jid in ids and len(t) != 1}
    assert not dup, f"submitted more than once: {dup}"
    m = metrics(s)
    n = m["frenzy_decision_latency_seconds_count"] - before["frenzy_decision_latency_seconds_count"]
    sm = m["frenzy_decision_latency_seconds_sum"] - before["frenzy_decision_latency_seconds_sum"]
    lat.sort()
    ctx.report["burst_200"] = {
        "accept_all_s": round(accepted_s, 2), "all_completed_s": round(total_s, 1),
        "http_submit_p50_ms": round(1000 * lat[len(lat) // 2], 1), "http_submit_p99_ms": round(1000 * lat[int(len(lat) * 0.99)], 1),
        "has_passes": int(n), "has_mean_ms": round(1000 * sm / max(n, 1), 3),
        "has_p50_ms_all_time": round(1000 * m['frenzy_decision_latency_seconds{quantile="0.5"}'], 3),
        "has_p99_ms_all_time": round(1000 * m['frenzy_decision_latency_seconds{quantile="0.99"}'], 3),
        "submit_latency_p50_s_all_time": round(m['frenzy_submit_latency_seconds{quantile="0.5"}'], 2),
        "submit_latency_p99_s_all_time": round(m['frenzy_submit_latency_seconds{quantile="0.99"}'], 2),
    }


def test_bad_requests(ctx):
    s = ctx.serve
    marker = os.path.join(s.workdir, "INJECTED")
    _, before = s.get("/v1/jobs")
    st, r = s.post(None, raw=b"{not json")
    assert st == 400 and "not valid JSON" in conforms("serve-error", r)["error"], (st, r)
    st, r = s.post({"model": {"preset": "gpt2"}, "trainig": {}})
    assert st == 400 and "trainig" in r["error"], (st, r)
    st, r = s.post({"model": {"preset": "no-such-model"}})
    assert st == 400 and "no-such-model" in r["error"], (st, r)
    st, r = s.post(small_job("x", limits={"max_gpus": -2}))
    assert st == 400 and "limits.max_gpus" in conforms("serve-error", r)["error"], (st, r)
    st, r = s.post(small_job("x", limits={"gpu_types": ["a100-81g"]}))
    assert st == 400 and "a100-81g" in r["error"], (st, r)
    st, r = s.post({"model": {"hf_config": "/etc/passwd"}})
    assert st == 400 and "hf_config" in r["error"], (st, r)
    st, r = s.post(None, raw=b'{"name": "' + b"x" * (2 << 20) + b'"}')
    assert st == 413, st
    # issue 28: a name that would end the batch script's comment and start a command is refused by name
    for bad in ("x\ntouch " + marker + " #", "x\rtouch " + marker):
        st, r = s.post(small_job(bad))
        assert st == 400 and r["error"].startswith("name="), (st, r)
    st, r = s.get("/v1/jobs/abc")
    assert st == 400, st
    st, r = s.get("/v1/jobs/999999")
    assert st == 404, st
    conforms("serve-error", r)
    _, after = s.get("/v1/jobs")
    assert before == after, "a refused request changed the job list"
    # shell syntax in a printable name is a label: the job runs on Slurm and nothing in its name runs
    st, r = s.post(small_job(f"q $(touch {marker}) `touch {marker}`; touch {marker} #'\""))
    assert st == 201, (st, r)
    s.wait({r["id"]}, {"completed"}, 60, "the job with shell syntax in its name completed")
    assert not os.path.exists(marker), "text of a job name ran as a command"


def test_cancel(ctx):
    s = ctx.serve
    st, r = s.post(small_job("long-cancel", tokens=5e8, limits={"gpu_types": ["t4"]}))
    assert st == 201
    jid = r["id"]
    s.wait({jid}, {"running"}, 60, "job to cancel running")
    sid = s.job(jid)["slurm_job_id"]
    st, r = http("DELETE", f"{s.url}/v1/jobs/{jid}", token=s.token())
    assert st == 202, (st, r)
    conforms("serve-cancel", r)
    s.wait({jid}, {"cancelled"}, 30, "job cancelled")
    end = time.time() + 20
    while time.time() < end and show_job(ctx.cluster, sid)["JobState"] != "CANCELLED":
        time.sleep(0.5)
    assert show_job(ctx.cluster, sid)["JobState"] == "CANCELLED"


def test_token(ctx):
    s = ctx.serve
    s.stop()
    tok = os.path.join(ctx.work, "token")
    with open(tok, "w") as f:
        f.write("s3cret-token-0123456789\n")
    s.token_file = tok
    s.start()
    _, before = s.get("/v1/jobs")
    for hdr in [{}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": "s3cret-token-0123456789"}]:
        st, _ = http("POST", s.url + "/v1/jobs", body=json.dumps(small_job("tok")).encode(), headers=hdr)
        assert st == 401, (hdr, st)
        st, _ = http("GET", s.url + "/v1/jobs", headers=hdr)
        assert st == 401, (hdr, st)
    assert s.get("/v1/jobs") == (200, before)
    # Off loopback without a token: refused at start-up.
    r = subprocess.run([ctx.frenzy, "serve", "--slurm", "--state", os.path.join(ctx.work, "x.db"), "--listen", "0.0.0.0:1"],
                       env=ctx.cluster.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "requires --token-file" in r.stderr, (r.returncode, r.stderr)


def test_live_page(ctx):
    """The live page at / in headless Chromium, behind the token: the page itself holds no data and is served
    without the token; the endpoints it reads answer only with it; opened as /#token=TOKEN it fills the inventory
    (one row per GPU type of /v1/cluster), shows a running job with its Slurm id and the recent decisions, with no
    error; a screenshot goes to FRENZY_SCREENSHOT_DIR."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser"))
    import check_reports  # noqa: E402  (the browser tests' DOM reader and Chromium flags)
    s = ctx.serve
    tok = s.token()
    assert tok, "test_token runs first and leaves the service behind a token"
    st, r = s.post(small_job("long-live-page", tokens=5e8, limits={"gpu_types": ["t4"]}))
    assert st == 201, (st, r)
    jid = r["id"]
    s.wait({jid}, {"running"}, 60, "the live page's job running")
    with urllib.request.urlopen(s.url + "/", timeout=30) as resp:  # no token: the page, which holds no data
        page = resp.read().decode()
        assert resp.status == 200 and resp.headers.get_content_type() == "text/html", resp.status
    assert "long-live-page" not in page and "<title>frenzy serve</title>" in page
    assert http("GET", s.url + "/v1/decisions")[0] == 401
    st, dec = s.get("/v1/decisions")
    assert st == 200 and any(d.get("decision") == "start" and d.get("job") == jid for d in dec["decisions"]), dec
    conforms("serve-decisions", dec)
    _, cluster = s.get("/v1/cluster")
    conforms("serve-cluster", cluster)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium not found: run scripts/setup.sh"
    out = os.environ.get("FRENZY_SCREENSHOT_DIR", ctx.work)
    os.makedirs(out, exist_ok=True)
    d = check_reports.render(chromium, s.url + "/#token=" + tok, os.path.join(out, "serve-live.png"), 1100, url=True)
    body = d.body()
    assert int(body.get("data-refreshed", "0")) >= 1, body
    assert body.get("data-errors") == "0", body

    def rows(table_id):
        [t] = [i for i, n in enumerate(d.nodes) if n["tag"] == "table" and n["attrs"].get("id") == table_id]
        return [[d.text(c) for c in d.within(r) if d.nodes[c]["tag"] == "td"]
                for r in d.within(t) if d.nodes[r]["tag"] == "tr" and d.nodes[d.nodes[r]["parent"]]["tag"] == "tbody"]
    inv = rows("inventory")
    assert sorted(r[0] for r in inv) == sorted(t["gpu"] for t in cluster["types"]), inv
    running = [r for r in rows("running") if r and r[0] == str(jid)]
    assert running and running[0][1] == "long-live-page" and running[0][3] == str(s.job(jid)["slurm_job_id"]), rows("running")
    assert any(r[1] == "start" and r[2] == str(jid) for r in rows("decisions")), rows("decisions")
    ctx.report["live_page_rows"] = {"inventory": len(inv), "running": len(rows("running"))}
    http("DELETE", f"{s.url}/v1/jobs/{jid}", token=tok)


def test_clients(ctx):
    s = ctx.serve
    spec = os.path.join(ctx.work, "client-job.json")
    with open(spec, "w") as f:
        json.dump(small_job("client-job"), f)
    base = [ctx.frenzy]
    opts = ["--server", s.url] + (["--token-file", s.token_file] if s.token_file else [])
    r = subprocess.run(base + ["submit", spec, "--gpu-types", "t4"] + opts, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    jid = conforms("serve-submit", json.loads(r.stdout))["id"]
    s.wait({jid}, {"completed"}, 60, "client-submitted job completed")
    r = subprocess.run(base + ["status", str(jid)] + opts, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and conforms("serve-job", json.loads(r.stdout))["plan"]["gpu"] == "t4", r.stdout
    r = subprocess.run(base + ["cancel", str(jid)] + opts, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "already completed" in r.stdout, (r.returncode, r.stdout)
    conforms("serve-error", json.loads(r.stdout))


def test_launch_hetjob(ctx):
    """Issue 27: `frenzy launch --mixed` writes a mixed plan as one Slurm heterogeneous job. llama-2-13b on one node of
    4 x T4 and one of 8 x V100 is planned (the test cluster's t4-1 and v100-1; neither type alone holds it with these
    GPUs) as tp4 x pp3 with the first stage on the T4s. Submitted as written, with a stand-in torchrun on PATH that
    records what each node starts: component 0 must land on t4-1 and component 1 on v100-1 (scontrol show job),
    and srun must start node rank 0 with 4 processes on the T4 node and node rank 1 with 8 on the V100 node, both
    told the first node of component 0 as the master and Megatron's layout string."""
    d = os.path.join(ctx.work, "hetjob")
    os.makedirs(os.path.join(d, "bin"), exist_ok=True)
    record = os.path.join(d, "torchrun.log")
    fake = os.path.join(d, "bin", "torchrun")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\necho "node=$SLURMD_NODENAME procid=$SLURM_PROCID args=$*" >> "$FRENZY_HET_RECORD"\n')
    os.chmod(fake, 0o755)
    r = subprocess.run([ctx.frenzy, "launch", "--mixed", "--framework", "megatron", "--model", "llama-2-13b",
                        "--gpus", "8xv100-32g,4xt4", "--seq-len", "2048", "--global-batch", "64", "--total-tokens", "1e9",
                        "--gres-map", "v100-32g=v100,t4=t4", "-o", d, "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = conforms("launch", json.loads(r.stdout))
    groups = doc["mixed_plan"]["groups"]
    assert [(g["gpu"], g["gpus"]) for g in groups] == [("t4", 4), ("v100-32g", 8)], groups
    env = dict(ctx.cluster.env, PATH=os.path.join(d, "bin") + ":" + os.environ["PATH"], FRENZY_HET_RECORD=record)
    sub = subprocess.run(["sbatch", "--parsable", "launch.sbatch"], cwd=d, env=env, capture_output=True, text=True, timeout=30)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    comps = {}
    end = time.time() + 60
    while time.time() < end:
        comps = het_components(ctx.cluster, job)
        if comps and all(st == "COMPLETED" for _, st, _ in comps.values()):
            break
        time.sleep(0.5)
    assert sorted(comps) == [0, 1], f"not one heterogeneous job of two components: {comps}"
    assert comps[0][0] == "t4-1" and "t4:4" in comps[0][2], comps
    assert comps[1][0] == "v100-1" and "v100:8" in comps[1][2], comps
    assert all(st == "COMPLETED" for _, st, _ in comps.values()), comps
    lines = sorted(open(record).read().splitlines())
    assert len(lines) == 2, lines
    starts = {}
    for line in lines:
        node = re.search(r"node=(\S+)", line).group(1)
        args = line.split("args=", 1)[1].split()
        starts[node] = {k: args[args.index(k) + 1] for k in ["--nnodes", "--nproc-per-node", "--node-rank", "--master-addr",
                                                              "--pipeline-model-parallel-layout",
                                                              "--pipeline-model-parallel-size"]}
    assert starts["t4-1"]["--node-rank"] == "0" and starts["t4-1"]["--nproc-per-node"] == "4", starts
    assert starts["v100-1"]["--node-rank"] == "1" and starts["v100-1"]["--nproc-per-node"] == "8", starts
    for s in starts.values():
        assert s["--nnodes"] == "2" and s["--master-addr"] == "t4-1" and s["--pipeline-model-parallel-size"] == "3", s
        assert s["--pipeline-model-parallel-layout"] == "Et*6|t*17|t*17L", s
    ctx.report["launch_hetjob"] = {"components": {k: v[0] for k, v in comps.items()}, "starts": starts}


def het_components(cluster, job):
    """offset -> (NodeList, JobState, TresPerNode) of every component of heterogeneous job `job` (scontrol show job)."""
    out = cluster.run(["scontrol", "-o", "show", "job", str(job)], check=False).stdout
    comps = {}
    for line in out.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if f.get("HetJobId") == str(job):
            comps[int(f["HetJobOffset"])] = (f.get("NodeList"), f.get("JobState"), f.get("TresPerNode", ""))
    return comps


def test_serve_mixed(ctx):
    """Issue 27: `frenzy serve --mixed` runs a job as a pipeline over two GPU types, one Slurm heterogeneous job, and
    follows it across a restart. Both A100 nodes drained, Qwen2.5-14B at seq 4096 fits neither the 8 V100s nor the 4
    T4s alone (frenzy plan --mixed on this cluster: tp4 pp3, stage 0 on the T4s, stages 1-2 on the V100s): HAS starts
    it on the pipeline rather than wait. Component 0 must run on t4-1 with 4 GPUs and component 1 on v100-1 with 8
    (scontrol show job); after `serve` is killed with SIGKILL and started again the job keeps its Slurm id and
    attempt 1, both types' GPUs stay held, and it completes without a second sbatch."""
    c, s = ctx.cluster, ctx.serve
    s.stop()
    s.extra = ["--mixed"]
    s.start()
    for n in ("a100-1", "a100-2"):
        c.run(["scontrol", "update", f"NodeName={n}", "State=DRAIN", "Reason=frenzy-test-mixed"])
    try:
        end = time.time() + 20
        while time.time() < end:
            _, cl = s.get("/v1/cluster")
            if not any(n["up"] for n in cl["nodes"] if n["gpu"] == "a100-80g"):
                break
            time.sleep(0.5)
        job = {"name": "long-mixed", "model": {"preset": "qwen2.5-14b"}, "runtime": {"framework": "megatron"},
               "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 8, "total_tokens": 1e6,
                            "precision": "fp16-mixed"}}
        st, r = s.post(job)
        assert st == 201, (st, r)
        jid = r["id"]
        s.wait({jid}, {"running"}, 60, "the mixed job running")
        j = s.job(jid)
        assert [(g["gpu"], g["gpus"]) for g in j["plan"]["groups"]] == [("t4", 4), ("v100-32g", 8)], j["plan"]
        assert j["allocation"] == [["t4-1", 4], ["v100-1", 8]], j["allocation"]
        slurm_id = j["slurm_job_id"]
        comps = het_components(c, slurm_id)
        assert sorted(comps) == [0, 1], f"not one heterogeneous job of two components: {comps}"
        assert comps[0][0] == "t4-1" and "t4:4" in comps[0][2], comps
        assert comps[1][0] == "v100-1" and "v100:8" in comps[1][2], comps
        s.kill9()
        s.start()
        j = s.job(jid)
        assert j["slurm_job_id"] == slurm_id and j["attempt"] == 1 and j["state"] == "running", j
        m = metrics(s)
        assert m['frenzy_gpus_busy{type="t4"}'] == 4 and m['frenzy_gpus_busy{type="v100-32g"}'] == 8, m
        s.wait({jid}, {"completed"}, 90, "the mixed job completed")
        j = s.job(jid)
        assert j["attempt"] == 1 and j["slurm_job_id"] == slurm_id, j
        assert [t[1] for t in tags_by_frenzy_id(c).get(jid, [])] in ([], [slurm_id, slurm_id + 1]), tags_by_frenzy_id(c)
        ctx.report["serve_mixed"] = {"slurm_job": slurm_id, "components": {k: v[0] for k, v in comps.items()},
                                     "plan": " + ".join(f'{g["gpus"]} x {g["gpu"]}' for g in j["plan"]["groups"])}
    finally:
        for n in ("a100-1", "a100-2"):
            c.run(["scontrol", "update", f"NodeName={n}", "State=RESUME"])
        s.stop()
        s.extra = []
        s.start()


TESTS = [test_inventory, test_bad_requests, test_too_large, test_placement, test_drained_avoided, test_cancel,
         test_slurmd_killed, test_serve_kill9_burst, test_ctld_restart, test_burst_200, test_clients, test_token, test_live_page,
         test_launch_hetjob, test_serve_mixed]


class Ctx:
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frenzy", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--report", default="")
    ap.add_argument("--keep", action="store_true", help="keep the cluster's directory (logs) afterwards")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: slurmd must run as root")
        return 77
    for prog in ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel"]:
        if not shutil.which(prog) and not os.path.exists("/usr/sbin/" + prog):
            print(f"SKIP: {prog} not found")
            return 77
    only = set(filter(None, a.only.split(",")))
    ctx = Ctx()
    ctx.frenzy = os.path.abspath(a.frenzy)
    ctx.report = {}
    ctx.cluster = slurm_cluster.SlurmCluster()
    ctx.work = os.path.join(ctx.cluster.dir, "serve")
    os.makedirs(ctx.work)
    ctx.serve = Serve(ctx.frenzy, ctx.cluster, ctx.work, slurm_cluster._free_port())
    failed = []
    t_all = time.time()
    try:
        ctx.cluster.start()
        ctx.serve.start()
        for t in TESTS:
            if only and t.__name__ not in only and t.__name__.removeprefix("test_") not in only:
                continue
            t0 = time.time()
            try:
                t(ctx)
                print(f"PASS {t.__name__} ({time.time() - t0:.1f} s)", flush=True)
            except Exception:
                failed.append(t.__name__)
                print(f"FAIL {t.__name__} ({time.time() - t0:.1f} s)", flush=True)
                traceback.print_exc()
                if ctx.serve.proc is None or ctx.serve.proc.poll() is not None:
                    try:
                        ctx.serve.start()
                    except Exception:
                        traceback.print_exc()
                        break
    finally:
        ctx.serve.stop()
        if failed or a.keep:
            for f in ["serve.log"]:
                p = os.path.join(ctx.work, f)
                if os.path.exists(p):
                    print(f"---- {f} (tail)")
                    print("".join(open(p).readlines()[-40:]))
        ctx.cluster.stop(keep_dir=a.keep)
    ctx.report["total_s"] = round(time.time() - t_all, 1)
    print(json.dumps(ctx.report, indent=1))
    if a.report:
        with open(a.report, "w") as f:
            json.dump(ctx.report, f, indent=1)
    print("FAILED: " + ", ".join(failed) if failed else "ALL PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
