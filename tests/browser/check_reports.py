#!/usr/bin/env python3
"""The HTML reports in a real browser: headless Chromium (Debian's package) opens each report that `frenzy report`
writes, runs its scripts, and the test reads the rendered DOM: every chart drawn (<body data-rendered="ok">), no
error or console.error (<body data-errors="0">), and the marks the data call for, counted against the --json
document the report was made from:
  estimate: one stacked bar segment per stage and kind of memory (6 kinds), one uncertainty bar per stage, the
            usable-memory rule, one bar per share of the step;
  plan:     one point per plan, the frontier line;
  simulate: in each policy's Gantt chart one row per job that ran and one bar per run; the queue, utilisation and
            completion-time charts drawn.
A screenshot of each page is saved in OUT (the README's picture of a plan report is one).

usage: check_reports.py CHROMIUM FRENZY_CLI REPO OUT"""
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--virtual-time-budget=20000"]


class Dom(html.parser.HTMLParser):
    """The elements of a page as (tag, attributes, parent index) with their children's count per tag."""

    def __init__(self):
        super().__init__()
        self.nodes, self.stack, self.texts = [], [], {}

    def handle_data(self, data):
        if self.stack:
            self.texts[self.stack[-1]] = self.texts.get(self.stack[-1], "") + data

    def handle_starttag(self, tag, attrs):
        parent = self.stack[-1] if self.stack else -1
        self.nodes.append({"tag": tag, "attrs": dict(attrs), "parent": parent, "children": []})
        idx = len(self.nodes) - 1
        if parent >= 0:
            self.nodes[parent]["children"].append(idx)
        if tag not in ("path", "br", "meta", "img", "input", "line", "rect", "circle"):
            self.stack.append(idx)

    def handle_startendtag(self, tag, attrs):
        parent = self.stack[-1] if self.stack else -1
        self.nodes.append({"tag": tag, "attrs": dict(attrs), "parent": parent, "children": []})
        if parent >= 0:
            self.nodes[parent]["children"].append(len(self.nodes) - 1)

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, -1, -1):
            if self.nodes[self.stack[k]]["tag"] == tag:
                del self.stack[k:]
                return

    def within(self, ancestor):
        """Indices of every node under `ancestor`, in document order."""
        out, todo = [], list(self.nodes[ancestor]["children"])
        while todo:
            i = todo.pop()
            out.append(i)
            todo.extend(self.nodes[i]["children"])
        return sorted(out)

    def charts(self, name):
        """The chart containers <div data-chart=NAME>, in page order."""
        return [i for i, n in enumerate(self.nodes) if n["tag"] == "div" and n["attrs"].get("data-chart") == name]

    def marks(self, chart, mark):
        """The drawn items (paths; lines for rules) of the mark named `mark` inside `chart`."""
        total = 0
        for i in self.within(chart):
            n = self.nodes[i]
            if n["tag"] == "g" and f"{mark}_marks" in n["attrs"].get("class", "").split():
                total += sum(1 for c in n["children"] if self.nodes[c]["tag"] in ("path", "line"))
        return total

    def axis_values(self, chart, axis):
        """The number of values of the discrete scale of `axis` ("Y"), from Vega's aria-label."""
        for i in self.within(chart):
            label = self.nodes[i]["attrs"].get("aria-label", "")
            m = re.match(rf"{axis}-axis titled .* for a discrete scale with (\d+) values", label)
            if m:
                return int(m.group(1))
        return None

    def text(self, i):
        """The text inside node i (its own and its descendants')."""
        return "".join(self.texts.get(k, "") for k in [i] + sorted(self.within(i))).strip()

    def body(self):
        return next(n["attrs"] for n in self.nodes if n["tag"] == "body")


def render(chromium, page, out_png, height, url=False):
    """The DOM of `page` (a file, or with url=True an address) after its scripts ran, and its screenshot."""
    with tempfile.TemporaryDirectory() as profile:
        flags = CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]
        url = page if url else "file://" + os.path.abspath(page)
        # one launch: the DOM after the scripts ran on stdout, the screenshot into out_png
        dom = subprocess.run([chromium, *flags, f"--window-size=1280,{height}", f"--screenshot={out_png}", "--dump-dom",
                              url], capture_output=True, text=True, timeout=120)
        if dom.returncode != 0 or not os.path.exists(out_png):
            raise RuntimeError(f"chromium {page}: exit {dom.returncode}: {dom.stderr[-2000:]}")
    d = Dom()
    d.feed(dom.stdout)
    return d


class Checks:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def eq(self, what, got, want):
        ok = got == want
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {got}" + ("" if ok else f" (expected {want})"))
        self.passed += ok
        self.failed += not ok


def frenzy(cli, *args):
    r = subprocess.run([cli, *args], capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 4):
        raise RuntimeError(f"frenzy {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def page_checks(c, d, name):
    body = d.body()
    c.eq(f"{name}: every chart drawn (body data-rendered)", body.get("data-rendered"), "ok")
    c.eq(f"{name}: errors and console errors (body data-errors)", body.get("data-errors"), "0")


def check_estimate(c, chromium, cli, repo, out):
    args = ["estimate", "--model", "llama-3.1-70b", "--seq-len", "4096", "--micro-batch", "1", "--tp", "4", "--pp", "4",
            "--recompute", "selective", "--sharding", "optimizer", "--global-batch", "64", "--gpus", "64xh100-80g"]
    doc = json.loads(frenzy(cli, *args, "--json"))
    page = os.path.join(out, "estimate.html")
    frenzy(cli, *args, "--html", page)
    d = render(chromium, page, os.path.join(out, "estimate.png"), 1400)
    page_checks(c, d, "estimate")
    [mem] = d.charts("memory")
    stages = len(doc["stages"])
    c.eq("estimate: memory bar segments (stages x 6 kinds)", d.marks(mem, "memory"), stages * 6)
    c.eq("estimate: uncertainty bars (one per stage)", d.marks(mem, "band"), stages)
    c.eq("estimate: usable-memory rule", d.marks(mem, "capacity"), 1)
    [step] = d.charts("step")
    c.eq("estimate: step-time shares", d.marks(step, "step"), len(doc["step_parts"]))


def check_plan(c, chromium, cli, repo, out):
    args = ["plan", "--job", f"{repo}/examples/jobs/plan-llama-2-7b.json", "--cluster",
            f"{repo}/examples/clusters/three-type.json", "--price", "example", "--objective", "cost"]
    doc = json.loads(frenzy(cli, *args, "--json"))
    saved = os.path.join(out, "plan.json")
    with open(saved, "w") as f:
        json.dump(doc, f)
    page = os.path.join(out, "plan.html")
    frenzy(cli, "report", saved, "-o", page)  # the saved --json document, as a user would
    d = render(chromium, page, os.path.join(out, "plan.png"), 1300)
    page_checks(c, d, "plan")
    [chart] = d.charts("plans")
    c.eq("plan: one point per plan", d.marks(chart, "plans"), len(doc["plans"]))
    c.eq("plan: the frontier line", d.marks(chart, "frontier"), 1)
    rows = sum(1 for n in d.nodes if n["tag"] == "tr") - 1 - (1 + len(doc["infeasible"]) if doc["infeasible"] else 0)
    c.eq("plan: table rows", rows, len(doc["plans"]))


def check_simulate(c, chromium, cli, repo, out):
    args = ["simulate", "--cluster", f"{repo}/examples/clusters/three-type-small.json", "--trace",
            f"{repo}/examples/traces/small.csv", "--policy", "all", "--quiet"]
    doc = json.loads(frenzy(cli, *args, "--json", "--runs"))
    page = os.path.join(out, "simulate.html")
    frenzy(cli, *args, "--html", page)
    d = render(chromium, page, os.path.join(out, "simulate.png"), 2400)
    page_checks(c, d, "simulate")
    gantts = d.charts("runs")
    c.eq("simulate: one Gantt chart per policy", len(gantts), len(doc))
    for chart, pol in zip(gantts, doc):
        ran = [j for j in pol["job_runs"] if j["runs"]]
        c.eq(f"simulate {pol['policy']}: Gantt rows (one per job that ran)", d.axis_values(chart, "Y"), len(ran))
        c.eq(f"simulate {pol['policy']}: Gantt bars (one per run)", d.marks(chart, "runs"), sum(len(j["runs"]) for j in ran))
    for name in ("queue", "utilization", "jct"):
        [chart] = d.charts(name)
        c.eq(f"simulate: {name} lines (one per policy)", d.marks(chart, name), len(doc))


def main():
    chromium, cli, repo, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    c = Checks()
    for check in (check_estimate, check_plan, check_simulate):
        try:
            check(c, chromium, cli, repo, out)
        except Exception as e:  # a failed render is a failed check, and the others still run
            print(f"FAIL {check.__name__}: {e}")
            c.failed += 1
    print(f"screenshots in {out}")
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
