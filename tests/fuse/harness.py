"""Shared pieces of the FUSE tests: skip where FUSE is missing, mount a flashdir daemon and
always take it down again (fusermount3 -u, then -uz, then kill), and small helpers.

Every test script is run by meson (tests/meson.build) with FLASHDIR set to the daemon binary.
Exit code 77 tells meson the test was skipped.
"""
import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77


def require_fuse():
    """Exits 77 unless /dev/fuse and fusermount3 exist and this process may mount."""
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
        print("skipped: /dev/fuse or fusermount3 missing")
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("skipped: the FUSE tests mount with allow_other and switch users; run them as root")
        sys.exit(SKIP)


def flashdir_binary():
    binary = os.environ.get("FLASHDIR")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit("FLASHDIR must name the flashdir binary")
    return binary


def is_mounted(path):
    path = os.path.realpath(path)
    with open("/proc/self/mounts") as mounts:
        return any(line.split()[1] == path for line in mounts)


def unmount(path):
    """Unmounts `path` whatever state it is in: fusermount3 -u, then lazily (-uz)."""
    for args in (["fusermount3", "-u", path], ["fusermount3", "-uz", path]):
        if not is_mounted(path):
            return
        subprocess.run(args, stderr=subprocess.DEVNULL, check=False)
        for _ in range(50):
            if not is_mounted(path):
                return
            time.sleep(0.02)


def daemon_pid(cache_dir):
    """The pid in the cache's lock line ("PID PROGRAM STATE")."""
    try:
        with open(os.path.join(cache_dir, "daemon.lock")) as f:
            return int((f.read().split() or ["0"])[0])
    except (OSError, ValueError):
        return 0


def is_alive(pid):
    """False once `pid` has exited, also while it waits as a zombie for init to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_gone(pid, seconds=10.0):
    """True once process `pid` has exited (the daemon flushes and closes after unmount)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not is_alive(pid):
            return True
        time.sleep(0.02)
    return False


class SanitizerReport(Exception):
    pass


class DaemonDied(Exception):
    """The daemon ended while its mount was still up: every operation got ENOTCONN."""


def read_log(cache_dir):
    try:
        with open(os.path.join(cache_dir, "daemon.log"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stats(mnt):
    """The mount's statistics (.flashdir/stats.json)."""
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)


def check_log(cache_dir):
    """The daemon runs detached: a sanitizer report lands in its log, and fails the test here."""
    log = read_log(cache_dir)
    for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
        if marker in log:
            raise SanitizerReport(f"{cache_dir}/daemon.log: {log[log.index(marker):][:2000]}")


class Mount:
    """A running flashdir mount of `backing` at `mountpoint`; stop() (also on any exception,
    via the context manager) unmounts and makes sure the daemon is gone."""

    def __init__(self, backing, mountpoint, cache_dir, options="", extra_env=None, prefix=(), size="64M"):
        self.backing, self.mountpoint, self.cache_dir = backing, mountpoint, cache_dir
        self.pid = 0
        opts = f"cache={cache_dir},size={size}" + (f",{options}" if options else "")
        env = dict(os.environ, **(extra_env or {}))
        result = subprocess.run([*prefix, flashdir_binary(), backing, mountpoint, "-o", opts],
                                env=env, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"flashdir failed ({result.returncode}): {result.stderr.strip()}")
        self.startup_log = result.stderr  # what the daemon said before its log moved to CACHE/daemon.log
        self.pid = daemon_pid(cache_dir)
        if not is_mounted(mountpoint):
            self.stop()
            raise RuntimeError("flashdir returned 0 but nothing is mounted")

    def stop(self):
        # A mount still up whose daemon is gone means the daemon died (a crash, an abort, a
        # sanitizer stop): its stderr, CACHE/daemon.log, says why, so it goes into the test's output.
        died = bool(self.pid) and is_mounted(self.mountpoint) and not is_alive(self.pid)
        unmount(self.mountpoint)
        if self.pid and not wait_gone(self.pid):
            os.kill(self.pid, signal.SIGKILL)
            wait_gone(self.pid)
        self.pid = 0
        if died:
            log = read_log(self.cache_dir)
            print(f"flashdir daemon died with {self.mountpoint} mounted; {self.cache_dir}/daemon.log:\n{log[-20000:]}",
                  flush=True)
            raise DaemonDied(f"the flashdir daemon of {self.mountpoint} died during the test (its log is printed above)")
        check_log(self.cache_dir)

    def kill9(self):
        """A power cut for the daemon: SIGKILL, then clear the dead mount."""
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            wait_gone(self.pid)
        unmount(self.mountpoint)
        self.pid = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


@contextlib.contextmanager
def scratch(prefix, under=None):
    """A temporary directory readable by other users (the tests run some steps as nobody), in
    `under` (the system's temporary directory if None), removed at the end after anything
    mounted below it is unmounted."""
    top = tempfile.mkdtemp(prefix=f"flashdir-{prefix}-", dir=under)
    os.chmod(top, 0o755)
    try:
        yield top
    finally:
        with open("/proc/self/mounts") as mounts:
            for line in mounts:
                point = line.split()[1]
                if point.startswith(top + "/"):
                    unmount(point)
        shutil.rmtree(top, ignore_errors=True)


class Checker:
    """Collects failures instead of stopping at the first, and prints them all."""

    def __init__(self, name):
        self.name, self.failures, self.checks = name, [], 0

    def check(self, condition, message):
        self.checks += 1
        if not condition:
            self.failures.append(message)
            print(f"FAIL: {message}", flush=True)

    def finish(self):
        print(f"{self.name}: {self.checks - len(self.failures)}/{self.checks} checks passed")
        return 1 if self.failures else 0


_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]

RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
NOBODY_UID, NOBODY_GID = 65534, 65534


@contextlib.contextmanager
def tmpfs(path, size):
    """A tmpfs of `size` (bytes, or with a K/M/G suffix) mounted at the existing directory `path`:
    a small file system that fills; unmounted at the end (lazily if still busy)."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", path], check=True)
    try:
        yield path
    finally:
        if subprocess.run(["umount", path], stderr=subprocess.DEVNULL, check=False).returncode != 0:
            subprocess.run(["umount", "-l", path], check=False)


def run_parts(name, parts):
    """Runs each `part(check, top)` over one scratch directory holding a backing directory `b`
    (with a file `hello`) and a mount point `m`, checking after each that nothing is left mounted."""
    require_fuse()
    check = Checker(f"fuse {name}")
    with scratch(name) as top:
        os.mkdir(f"{top}/b")
        os.mkdir(f"{top}/m")
        with open(f"{top}/b/hello", "w") as f:
            f.write("hello")
        for part in parts:
            print(f"-- {part.__name__}", flush=True)
            part(check, top)
            check.check(not is_mounted(f"{top}/m"), f"{part.__name__} left nothing mounted")
    return check.finish()


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def fallocate(fd, mode, offset, length):
    """fallocate(2) with its mode (Python's os module has only posix_fallocate)."""
    if _libc.fallocate(fd, mode, offset, length) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def renameat2(old, new, flags):
    """renameat2(2) with its flags (RENAME_NOREPLACE, RENAME_EXCHANGE)."""
    if _libc.renameat2(-100, old.encode(), -100, new.encode(), flags) != 0:  # AT_FDCWD
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def as_user(function, uid=NOBODY_UID, gid=NOBODY_GID):
    """Runs function() in a child process as `uid`:`gid` (no supplementary groups, umask 022)
    and returns what it returned (JSON-able), or "errno NAME" if it raised an OSError."""
    import errno
    import json
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os.umask(0o022)
            try:
                result = function()
            except OSError as e:
                result = f"errno {errno.errorcode.get(e.errno, e.errno)}"
            os.write(write_end, json.dumps(result).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks) or b"null")


class ForegroundMount:
    """A FUSE daemon started in the foreground as a child process (`argv` mounts `mountpoint`):
    waits up to 10 s for the mount; stop() unmounts (fusermount3 -u, then -uz), waits for the
    daemon to end and kills one that does not. With `pid_file` the daemon's pid is written there
    (a runner's shell trap waits for the daemons its work directory names, bench/lib.sh)."""
    name = "daemon"

    def __init__(self, argv, mountpoint, pid_file=None):
        self.mountpoint = mountpoint
        self.process = subprocess.Popen(argv)
        self.pid = self.process.pid
        if pid_file:
            with open(pid_file, "w") as f:
                f.write(f"{self.pid}\n")
        deadline = time.monotonic() + 10
        while not is_mounted(mountpoint):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not mount {mountpoint} (exit {self.process.returncode})")
            time.sleep(0.02)

    def running(self):
        """Whether the daemon still runs and its mount is there."""
        return self.process.poll() is None and is_mounted(self.mountpoint)

    def stop(self):
        """Unmounts, waits for the daemon (killed if it lingers 10 s)."""
        unmount(self.mountpoint)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


class FuseBacking(ForegroundMount):
    """A FUSE file system to back a flashdir mount, as sshfs or an object-store mount would:
    tests/fuse/renumbering_passthrough.cc (it numbers inodes in lookup order, as sshfs does)
    mounted over `slow` at `point`, in the foreground; stop() (or the context manager) unmounts it."""
    name = "the renumbering passthrough"

    def __init__(self, slow, point):
        super().__init__([os.environ["RENUMBERING_PASSTHROUGH"], slow, point, "-f", "-o", "allow_other"], point)
