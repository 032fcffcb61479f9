#!/usr/bin/env python3
"""Soak `toolgate serve` under mixed load while it is killed with SIGKILL and restarted.

Load (several client threads, over /v1/calls as a client would): reads, writes that need an
approval (asked, decided by an operator, retried: the identical call runs once), calls of a
federated stdio MCP server, catalog listings. A killer thread sends SIGKILL to the server at
random intervals and starts it again on the same port, workspace and data dir.

Afterwards it checks what the product promises:
- every acknowledged call (an envelope with ok:true) has its outcome record in the audit log,
  and every acknowledged write its attempt record too;
- `toolgate audit verify` passes (exit 0);
- no MCP child process is left behind (each child's argv carries a marker);
- the server's RSS stayed under the cap.

Usage: soak.py --bin target/debug/toolgate --seconds 60 [--kill-every 3-8] [--rss-cap-mib 400]
Prints a JSON summary on stdout and exits 1 if any check fails.
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_token(bin_path, workspace, principal, role, operator):
    args = [bin_path, "--workspace", workspace, "token", "create", "--config-entry", "--principal", principal, "--role", role]
    if operator:
        args.append("--operator")
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    entry = done.stderr[done.stderr.index("[[server.tokens]]"):]
    return done.stdout.strip(), entry


class Server:
    """The product under test: one `toolgate serve` process at a time."""

    def __init__(self, bin_path, workspace, config, port, log):
        self.bin, self.workspace, self.config, self.port = bin_path, workspace, config, port
        self.log = log
        self.proc = None
        self.lock = threading.Lock()
        self.max_rss_kib = 0
        self.starts = 0

    def start(self):
        with self.lock:
            self.proc = subprocess.Popen(
                [self.bin, "--workspace", self.workspace, "--config", self.config,
                 "serve", "--listen", f"127.0.0.1:{self.port}"],
                stdout=subprocess.DEVNULL, stderr=self.log, stdin=subprocess.DEVNULL)
            self.starts += 1
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/health", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    raise SystemExit(f"toolgate serve exited at start with {self.proc.returncode}")
                time.sleep(0.1)
        raise SystemExit("toolgate serve did not answer /v1/health within 60 s")

    def kill(self):
        with self.lock:
            if self.proc and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()

    def stop(self):
        with self.lock:
            if self.proc and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    return self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    return "hung"
            return self.proc.returncode if self.proc else None

    def sample_rss(self):
        with self.lock:
            pid = self.proc.pid if self.proc and self.proc.poll() is None else None
        if pid is None:
            return
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        self.max_rss_kib = max(self.max_rss_kib, int(line.split()[1]))
        except OSError:
            pass


class Client:
    def __init__(self, port, token):
        self.base = f"http://127.0.0.1:{port}"
        self.token = token

    def request(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            try:
                return e.code, json.loads(e.read() or b"null")
            except ValueError:
                return e.code, None

    def call(self, tool, arguments):
        return self.request("POST", "/v1/calls", {"tool": tool, "arguments": arguments, "session": "soak"})


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.acked = []  # (call_id, kind)
        self.counts = {}

    def add(self, key):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def ack(self, call_id, kind):
        with self.lock:
            self.acked.append((call_id, kind))


def worker(stop, agent, operator, stats, rng):
    while not stop.is_set():
        op = rng.choice(["read", "read", "mcp", "mcp", "write", "list"])
        stats.add(f"{op}.attempted")
        try:
            if op == "read":
                status, env = agent.call("read_file", {"path": "seed.txt"})
            elif op == "mcp":
                status, env = agent.call("mcp__echo__echo", {"text": f"soak {uuid.uuid4().hex}"})
            elif op == "list":
                status, env = agent.request("GET", "/v1/tools")
                if status == 200:
                    stats.add("list.ok")
                continue
            else:
                args = {"path": f"out/{uuid.uuid4().hex}.txt", "content": "soak\n"}
                status, env = agent.call("write_file", args)
                code = (env or {}).get("error", {}).get("code") if isinstance(env, dict) else None
                if code == "approval_required":
                    approval = env["error"]["details"]["approval_id"]
                    st, _ = operator.request("POST", f"/v1/approvals/{approval}/decision",
                                             {"approve": True, "reason": "soak"})
                    if st != 200:
                        stats.add("write.decision_failed")
                        continue
                    status, env = agent.call("write_file", args)
        except (OSError, ValueError):
            stats.add(f"{op}.connection_error")
            time.sleep(0.05)
            continue
        if status == 200 and isinstance(env, dict) and env.get("ok"):
            stats.add(f"{op}.acknowledged")
            stats.ack(env["call_id"], op)
        else:
            code = env.get("error", {}).get("code") if isinstance(env, dict) and "error" in env else status
            stats.add(f"{op}.not_ok.{code}")


def audit_records(data_dir):
    """call_id → set of record kinds, from every line of the audit log that parses."""
    found = {}
    path = os.path.join(data_dir, "logs", "tool-audit.jsonl")
    with open(path, "rb") as f:
        for raw in f:
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict) and "call_id" in rec:
                found.setdefault(rec["call_id"], set()).add(rec.get("kind"))
    return found


def children_left(marker):
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    left.append(int(pid))
        except OSError:
            pass
    return left


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--kill-every", default="3-8", help="seconds between SIGKILLs, MIN-MAX")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rss-cap-mib", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261204)
    opts = ap.parse_args()
    lo, hi = (float(x) for x in opts.kill_every.split("-"))
    rng = random.Random(opts.seed)

    root = tempfile.mkdtemp(prefix="toolgate-soak-")
    # The audit key and anchors of this throwaway log: beside the workspace, never the
    # user's own key dir.
    os.environ["TOOLGATE_KEY_DIR"] = os.path.join(root, "keys")
    workspace = os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, "out"))
    with open(os.path.join(workspace, "seed.txt"), "w") as f:
        f.write("seed\n")
    marker = f"soak-marker-{uuid.uuid4().hex}"
    agent_token, agent_entry = make_token(opts.bin, workspace, "soak-agent", "agent", False)
    op_token, op_entry = make_token(opts.bin, workspace, "soak-operator", "default", True)
    config = os.path.join(root, "toolgate.toml")
    with open(config, "w") as f:
        f.write(f"""
[roles.agent]
tools = ["read_file", "write_file", "mcp__echo__echo"]
read = "allow"
write = "ask"
dangerous = "deny"
rules = [{{ tool = "mcp__echo__echo", decision = "allow" }}]

[[mcp.servers]]
name = "echo"
command = "{sys.executable if os.path.isabs(sys.executable) else 'python3'}"
args = ["{os.path.join(HERE, 'echo_mcp.py')}", "{marker}"]

{agent_entry}
{op_entry}
""")
    port = free_port()
    log = open(os.path.join(root, "serve.log"), "ab")
    server = Server(opts.bin, workspace, config, port, log)
    server.start()

    stats = Stats()
    stop = threading.Event()
    agent, operator = Client(port, agent_token), Client(port, op_token)
    threads = [threading.Thread(target=worker, args=(stop, agent, operator, stats, random.Random(rng.random())))
               for _ in range(opts.clients)]
    for t in threads:
        t.start()

    kills = 0
    end = time.time() + opts.seconds
    next_kill = time.time() + rng.uniform(lo, hi)
    while time.time() < end:
        server.sample_rss()
        time.sleep(0.2)
        if time.time() >= next_kill and time.time() < end - 1:
            server.kill()
            kills += 1
            server.start()
            next_kill = time.time() + rng.uniform(lo, hi)
    stop.set()
    for t in threads:
        t.join()
    stop_status = server.stop()
    log.close()

    time.sleep(1)
    left = children_left(marker)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    data_dir = os.path.join(workspace, ".toolgate")
    verify = subprocess.run([opts.bin, "--workspace", workspace, "--config", config, "audit", "verify"],
                            capture_output=True, text=True)
    records = audit_records(data_dir)
    missing = [cid for cid, _ in stats.acked if "outcome" not in records.get(cid, set())]
    missing_attempt = [cid for cid, kind in stats.acked
                       if kind == "write" and "attempt" not in records.get(cid, set())]
    with open(os.path.join(root, "serve.log"), "rb") as f:
        panics = f.read().count(b"panicked")

    summary = {
        "seconds": opts.seconds,
        "clients": opts.clients,
        "kills": kills,
        "starts": server.starts,
        "counts": dict(sorted(stats.counts.items())),
        "acknowledged": len(stats.acked),
        "missing_outcome_records": len(missing),
        "missing_attempt_records": len(missing_attempt),
        "audit_verify_exit": verify.returncode,
        "audit_verify": (verify.stdout + verify.stderr).strip().splitlines()[-1:] or [""],
        "mcp_children_left": len(left),
        "max_rss_mib": round(server.max_rss_kib / 1024, 1),
        "rss_cap_mib": opts.rss_cap_mib,
        "final_stop": stop_status,
        "panics": panics,
        "dir": root,
    }
    failures = []
    if missing or missing_attempt:
        failures.append(f"acknowledged calls without records: {missing[:5]} {missing_attempt[:5]}")
    if verify.returncode != 0:
        failures.append(f"audit verify exited {verify.returncode}: {verify.stdout}{verify.stderr}")
    if left:
        failures.append(f"{len(left)} MCP children left behind")
    if server.max_rss_kib > opts.rss_cap_mib * 1024:
        failures.append(f"RSS {summary['max_rss_mib']} MiB over the cap")
    if panics:
        failures.append(f"{panics} panics in the server log")
    if stop_status != 0:
        failures.append(f"the final SIGTERM stop ended with {stop_status}")
    for kind in ("read", "write", "mcp"):
        if stats.counts.get(f"{kind}.acknowledged", 0) == 0:
            failures.append(f"no {kind} call was acknowledged: the load did not exercise it")
    summary["failures"] = failures
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
    if not failures:
        subprocess.run(["rm", "-rf", root])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
