"""A private Slurm cluster on localhost for the integration tests of `frenzy serve`.

Starts munged, slurmctld and one `slurmd -N NAME` per node, each on its own port, in a private directory; every
process started is remembered by PID and killed by PID in stop(), pass or fail. Nodes carry typed GPU GRES backed by
placeholder files (Slurm 22.05 warns that they are not character devices and schedules them all the same).
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

# (node name, GRES type, GPUs): two 8 x A100, one 8 x V100, one 4 x T4.
DEFAULT_NODES = [("a100-1", "a100", 8), ("a100-2", "a100", 8), ("v100-1", "v100", 8), ("t4-1", "t4", 4)]


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class SlurmCluster:
    def __init__(self, nodes=DEFAULT_NODES, slurmd_timeout=10):
        self.nodes = nodes
        self.dir = tempfile.mkdtemp(prefix="frenzy-slurm-", dir="/tmp")
        self.procs = {}  # name -> Popen
        self.ctld_port = _free_port()
        self.node_ports = {n: _free_port() for n, _, _ in nodes}
        self.slurmd_timeout = slurmd_timeout
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.munge_socket = os.path.join(self.dir, "munge.socket")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self._write_config()

    def _write_config(self):
        d = self.dir
        for sub in ["state", "spool", "log", "dev"]:
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        lines = [
            "ClusterName=frenzytest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={self.ctld_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool/%n",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log",
            f"SlurmdLogFile={d}/log/slurmd-%n.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "GresTypes=gpu",
            # backfill: slurmctld accepts heterogeneous jobs (launch --mixed) only with it
            "SchedulerType=sched/backfill",
            "SchedulerParameters=sched_interval=2,bf_interval=1",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "JobCompType=jobcomp/none",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "SlurmdParameters=config_overrides",
            "ReturnToService=2",
            f"SlurmdTimeout={self.slurmd_timeout}",
            "SlurmctldTimeout=10",
            "MessageTimeout=5",
            "InactiveLimit=0",
            "KillWait=1",
            "MinJobAge=600",
            "MaxJobCount=100000",
            "JobRequeue=0",
            "HealthCheckInterval=0",
        ]
        gres = ["AutoDetect=off"]
        for name, typ, n in self.nodes:
            lines.append(f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={self.node_ports[name]} "
                         f"CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=4000 "
                         f"Gres=gpu:{typ}:{n} State=UNKNOWN")
            devdir = os.path.join(d, "dev", name)
            os.makedirs(devdir, exist_ok=True)
            for k in range(n):
                open(os.path.join(devdir, f"nvidia{k}"), "w").close()
            gres.append(f"NodeName={name} Name=gpu Type={typ} File={devdir}/nvidia[0-{n - 1}]")
        lines.append("PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "gres.conf"), "w") as f:
            f.write("\n".join(gres) + "\n")

    def _spawn(self, key, argv):
        log = open(os.path.join(self.dir, "log", key + ".out"), "w")
        self.procs[key] = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)

    def start(self, timeout=60):
        key = os.path.join(self.dir, "munge.key")
        subprocess.run(["mungekey", "--create", "--force", "--bits=1024", f"--keyfile={key}"], check=True)
        os.chmod(key, 0o600)
        self._spawn("munged", ["munged", "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--pid-file={self.dir}/munged.pid",
                               f"--log-file={self.dir}/log/munged.log", f"--seed-file={self.dir}/munged.seed"])
        self._wait(lambda: os.path.exists(self.munge_socket), 10, "munged socket")
        self.start_ctld()
        for name, _, _ in self.nodes:
            self.start_slurmd(name)
        self.wait_nodes_idle(timeout)

    def start_ctld(self, clear=True):
        argv = ["slurmctld", "-D", "-f", self.conf]
        if clear:
            argv.append("-c")
        else:
            argv.append("-R")
        self._spawn("slurmctld", argv)
        self._wait(lambda: self.run(["scontrol", "ping"], check=False).returncode == 0 and
                   "UP" in self.run(["scontrol", "ping"], check=False).stdout, 30, "slurmctld up")

    def start_slurmd(self, name):
        self._spawn("slurmd-" + name, ["slurmd", "-D", "-N", name, "-f", self.conf])

    def kill(self, key, sig=signal.SIGKILL):
        p = self.procs.get(key)
        if p and p.poll() is None:
            os.kill(p.pid, sig)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()

    def run(self, argv, check=True):
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"{argv}: rc={r.returncode} {r.stderr}")
        return r

    def node_states(self):
        out = self.run(["sinfo", "-N", "-h", "-o", "%N %t"], check=False).stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def wait_nodes_idle(self, timeout=60):
        want = {n for n, _, _ in self.nodes}
        self._wait(lambda: all(s.rstrip("*") == "idle" for k, s in self.node_states().items()) and
                   set(self.node_states()) == want, timeout, "all nodes idle")

    def _wait(self, pred, timeout, what):
        end = time.time() + timeout
        while time.time() < end:
            try:
                if pred():
                    return
            except Exception:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"timed out waiting for {what}; logs in {self.dir}/log")

    def stop(self, keep_dir=False):
        """Kills every process this cluster started, by PID (slurmd first, then slurmctld, then munged); also the
        job steps (slurmstepd) our slurmd forked, found through their session ids."""
        order = [k for k in self.procs if k.startswith("slurmd-")] + ["slurmctld", "munged"]
        for k in order:
            p = self.procs.get(k)
            if p and p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGTERM)
                    p.wait(timeout=10)
                except (subprocess.TimeoutExpired, ProcessLookupError):
                    try:
                        os.kill(p.pid, signal.SIGKILL)
                        p.wait(timeout=5)
                    except (ProcessLookupError, subprocess.TimeoutExpired):
                        pass
        self._kill_stepds()
        if not keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _kill_stepds(self):
        # slurmstepd processes of this cluster name our private spool dir on their command line or environment;
        # they are children of our slurmd processes (reparented when slurmd died), matched by the private dir.
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read()
            except OSError:
                continue
            if int(pid) != os.getpid() and (b"SLURM_CONF=" + self.conf.encode()) in env:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
