#!/usr/bin/env python3
"""sshfs over a localhost ssh server with a delay between them, as a slow store (issue 19).

SshfsMount(backing, mountpoint, delay_us=1000) mounts `backing` at `mountpoint` with sshfs,
through a TCP delay proxy, from a private sshd:

- sshd (`sshd -f CONFIG -D`, a child) listens on a free port of 127.0.0.1, with its own host
  key, config and authorized key generated into a state directory beside the mountpoint
  (MOUNTPOINT.sshfs); password and keyboard-interactive logins are off, sftp is internal-sftp.
  /etc/ssh and root's ~/.ssh are not touched. sshd needs its privilege-separation directory
  /run/sshd: made if missing (mode 0755, as the package does) and removed again if it was.
- the proxy (this file run as `sshfs_store.py proxy ...`, a child process, so that it has a
  Python interpreter of its own) listens on another free port and forwards each connection to
  sshd, holding every chunk read for half of `delay_us` before it writes it on, in each
  direction, in order (one reader and one writer thread per direction; time.sleep, whose
  resolution is microseconds, where asyncio's epoll timeouts round up to milliseconds). The
  kernel here has no netem, hence a proxy.
- sshfs (`sshfs -f`, a child) connects to the proxy with the generated key
  (StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null, BatchMode=yes), its other options
  its defaults unless `options` adds some.

stop() unmounts (fusermount3 -u, then -uz), waits for sshfs (killed if it lingers), ends the
proxy and sshd and removes the state directory; the constructor does the same when any step
fails. counts(): sshfs counts no calls; the proxy counts the chunks and bytes it carried each
way (written to a file at SIGUSR1), in the shape of slowstore's counts: total_calls is the
chunks sent towards sshd (each holds one or more sftp requests), calls the four counters.

ensure_installed() installs openssh-server and sshfs (apt-get, as root, `apt-get update` once
if the first try fails). Whatever cannot be set up raises StoreSkipped("why"), which the
runners print as "skipped: why" before exiting 0.
"""
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fuse"))
from harness import is_mounted, unmount  # noqa: E402

CHUNK = 256 << 10
WINDOW = 64  # chunks in flight per direction: 16 MiB, far more than sshfs keeps outstanding


class StoreSkipped(Exception):
    """The store cannot be set up here; the message says why."""


def _sshd_binary():
    return shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd", "/sbin/sshd") if os.access(p, os.X_OK)), None)


def ensure_installed():
    """Installs what is missing (openssh-server, sshfs) with apt-get; StoreSkipped if it cannot."""
    def missing():
        return [package for package, present in (("openssh-server", _sshd_binary() and shutil.which("ssh-keygen")),
                                                 ("sshfs", shutil.which("sshfs"))) if not present]
    needed = missing()
    if not needed:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise StoreSkipped(f"{', '.join(needed)} missing, and no apt-get as root to install them")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for update in (False, True):
        if update:
            subprocess.run(["apt-get", "update"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
        result = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *needed], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        if result.returncode == 0 and not missing():
            return
    raise StoreSkipped(f"apt-get install {' '.join(needed)} failed: {result.stderr.strip()[-300:]}")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_banner(port, deadline, process, what):
    """Waits until `port` answers with an SSH banner (sshd, or sshd through the proxy)."""
    while True:
        if process.poll() is not None:
            raise StoreSkipped(f"{what} exited ({process.returncode}) before it answered on port {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                if s.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise StoreSkipped(f"{what} did not answer on 127.0.0.1:{port} within 10 s")
        time.sleep(0.05)


class SshfsMount:
    name = "sshfs"
    calls_label = "chunks the proxy sent to sshd"

    def __init__(self, backing, mountpoint, delay_us=1000, options=""):
        self.mountpoint = os.path.abspath(mountpoint)
        self.state = f"{self.mountpoint}.sshfs"
        self.processes = {}  # name -> Popen, in start order
        self.made_run_sshd = False
        self.counts_path = f"{self.state}/proxy.counts.json"
        try:
            self._start(os.path.abspath(backing), delay_us, options)
        except BaseException:
            self.stop()
            raise
        self.pid = self.processes["sshfs"].pid

    def _spawn(self, name, argv, **kwargs):
        process = subprocess.Popen(argv, **kwargs)
        self.processes[name] = process
        # Beside the mountpoint, for bench/slowstore/run.sh's trap (remove_bench_work) if this
        # process is killed before its stop(): it kills what still runs with the work directory
        # in its command line.
        with open(f"{self.mountpoint}.{name}.pid", "w") as f:
            f.write(f"{process.pid}\n")
        return process

    def _start(self, backing, delay_us, options):
        ensure_installed()
        sshd = _sshd_binary()
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
        except OSError as error:
            raise StoreSkipped(f"no loopback network here: {error}")
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state, mode=0o700)
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "flashdir-bench", "-f",
                            f"{self.state}/{key}"], check=True, stdout=subprocess.DEVNULL)
        shutil.copyfile(f"{self.state}/client_key.pub", f"{self.state}/authorized_keys")
        if not os.path.isdir("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755)
            self.made_run_sshd = True
        sshd_port = _free_port()
        config = f"{self.state}/sshd_config"
        with open(config, "w") as f:
            f.write("\n".join([
                f"Port {sshd_port}", "ListenAddress 127.0.0.1", f"HostKey {self.state}/host_key",
                f"AuthorizedKeysFile {self.state}/authorized_keys", f"PidFile {self.state}/sshd.pidfile",
                "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PubkeyAuthentication yes",
                "PermitRootLogin prohibit-password", "UsePAM no", "StrictModes no", "UseDNS no",
                "PrintMotd no", "LogLevel ERROR", "Subsystem sftp internal-sftp", ""]))
        test = subprocess.run([sshd, "-t", "-f", config], capture_output=True, text=True, check=False)
        if test.returncode != 0:
            raise StoreSkipped(f"sshd rejects its config: {test.stderr.strip()[-300:]}")
        deadline = time.monotonic() + 10
        self._spawn("sshd", [sshd, "-f", config, "-D", "-e"], stderr=open(f"{self.state}/sshd.log", "w"))
        _wait_banner(sshd_port, deadline, self.processes["sshd"], "sshd")
        proxy_port = _free_port()
        self._spawn("proxy", [sys.executable, os.path.abspath(__file__), "proxy", str(proxy_port), str(sshd_port),
                              str(delay_us / 2), self.counts_path])
        _wait_banner(proxy_port, deadline + 5, self.processes["proxy"], "the delay proxy")
        opts = ",".join(filter(None, [
            f"port={proxy_port}", f"IdentityFile={self.state}/client_key", "StrictHostKeyChecking=no",
            "UserKnownHostsFile=/dev/null", "BatchMode=yes", "LogLevel=ERROR", options]))
        self._spawn("sshfs", ["sshfs", "-f", f"root@127.0.0.1:{backing}", self.mountpoint, "-o", opts],
                    stdout=subprocess.DEVNULL, stderr=open(f"{self.state}/sshfs.log", "w"))
        while not is_mounted(self.mountpoint):
            if self.processes["sshfs"].poll() is not None or time.monotonic() > deadline + 10:
                with open(f"{self.state}/sshfs.log") as f:
                    why = f.read().strip()[-300:]
                raise StoreSkipped(f"sshfs did not mount {self.mountpoint} "
                                   f"(exit {self.processes['sshfs'].poll()}): {why}")
            time.sleep(0.02)

    def counts(self):
        """What the proxy carried so far: chunks and bytes each way (it writes them at SIGUSR1)."""
        if os.path.exists(self.counts_path):
            os.unlink(self.counts_path)
        os.kill(self.processes["proxy"].pid, signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.counts_path):
            if time.monotonic() > deadline:
                raise RuntimeError("the delay proxy wrote no counts after SIGUSR1")
            time.sleep(0.005)
        with open(self.counts_path) as f:
            counters = json.load(f)
        return {"total_calls": counters["chunks to sshd"], "calls": counters}

    def stop(self):
        """Unmounts, ends sshfs, the proxy and sshd, removes the state directory; returns the
        proxy's last counts (None if it is gone)."""
        last = None
        try:
            if "proxy" in self.processes and self.processes["proxy"].poll() is None:
                last = self.counts()
        except (OSError, RuntimeError, ValueError):
            pass
        unmount(self.mountpoint)
        for name in ("sshfs", "proxy", "sshd"):
            process = self.processes.get(name)
            if process is None:
                continue
            if name != "sshfs" and process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            try:
                os.unlink(f"{self.mountpoint}.{name}.pid")
            except OSError:
                pass
        self.processes = {}
        shutil.rmtree(self.state, ignore_errors=True)
        if self.made_run_sshd:
            try:
                os.rmdir("/run/sshd")
            except OSError:
                pass
            self.made_run_sshd = False
        return last

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


# The delay proxy (a process of its own: `sshfs_store.py proxy LISTEN_PORT TARGET_PORT ONE_WAY_US COUNTS`).

def _pump(source, sink, delay, counters, key):
    """Forwards `source` to `sink`, each chunk held until `delay` seconds after it was read."""
    held = queue.Queue(WINDOW)

    def read():
        try:
            while True:
                data = source.recv(CHUNK)
                held.put((time.monotonic() + delay, data))
                if not data:
                    return
        except OSError:
            held.put((0, b""))

    def write():
        try:
            while True:
                due, data = held.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not data:
                    break
                sink.sendall(data)
                counters[f"chunks {key}"] += 1
                counters[f"bytes {key}"] += len(data)
        except OSError:
            pass
        for s in (sink, source):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    for target in (read, write):
        threading.Thread(target=target, daemon=True).start()


def proxy_main(listen_port, target_port, one_way_us, counts_path):
    delay = one_way_us / 1e6
    counters = {"chunks to sshd": 0, "bytes to sshd": 0, "chunks from sshd": 0, "bytes from sshd": 0}

    def dump(*_):
        with open(counts_path + ".tmp", "w") as f:
            json.dump(dict(counters), f)
        os.rename(counts_path + ".tmp", counts_path)

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(16)
    while True:
        client, _ = server.accept()
        try:
            upstream = socket.create_connection(("127.0.0.1", target_port))
        except OSError:
            client.close()
            continue
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _pump(client, upstream, delay, counters, "to sshd")
        _pump(upstream, client, delay, counters, "from sshd")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "proxy":
        proxy_main(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    else:
        sys.exit("usage: sshfs_store.py proxy LISTEN_PORT TARGET_PORT ONE_WAY_US COUNTS_FILE (SshfsMount runs it)")
