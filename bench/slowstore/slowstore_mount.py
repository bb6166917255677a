"""A running slowstore mount, for the test and the runner: started in the foreground as a child
process, so that stop() can unmount it (fusermount3 -u, then -uz), wait for the daemon to end
and read the call counts it wrote at unmount; a daemon that does not end is killed. counts()
asks the running daemon for its counts so far (SIGUSR1). It is built on the FUSE tests'
ForegroundMount (tests/fuse/harness.py), as PassthroughHpMount (libfuse's passthrough_hp, for
bench/fio and writes.py) is.

The runners measure against either store (`--store slowstore|sshfs`): add_store_arguments and
mount_store are what they share; sshfs_store.py has the other store."""
import json
import os
import signal
import sys
import time

# The FUSE tests' mount helpers: is_mounted, and unmount (fusermount3 -u, then -uz).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fuse"))
from harness import ForegroundMount, is_mounted, require_fuse, unmount  # noqa: E402
from sshfs_store import SshfsMount, StoreSkipped  # noqa: E402,F401  (StoreSkipped: for the runners)


def prepare_runner(program):
    """For a benchmark runner: exits unless FUSE works and FLASHDIR and SLOWSTORE name the
    binaries; a SIGTERM then unwinds like Ctrl-C, through the runner's unmounts."""
    require_fuse()
    for variable in ("FLASHDIR", "SLOWSTORE"):
        if not os.access(os.environ.get(variable, ""), os.X_OK):
            sys.exit(f"{program}: {variable} must name the binary (bench/slowstore/run.sh sets it)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def add_store_arguments(parser):
    """The runners' options for the store they measure against."""
    parser.add_argument("--store", choices=("slowstore", "sshfs"), default="slowstore",
                        help="the slow store: slowstore (--latency-us per call) or sshfs over a localhost sshd "
                             "behind a TCP delay proxy (--delay-us per round trip)")
    parser.add_argument("--latency-us", type=int, default=1000, help="slowstore: the wait of every call")
    parser.add_argument("--bandwidth-mbps", type=int, default=0, help="slowstore's line, Mbit/s (0: no limit)")
    parser.add_argument("--delay-us", type=int, default=1000,
                        help="sshfs: the proxy's round trip between sshfs and sshd (half of it each way)")
    parser.add_argument("--sshfs-options", default="", help="sshfs: more -o options for sshfs")


def describe_store(args, slowstore_options=""):
    """One line saying which store and how slow, for the results' header."""
    if args.store == "sshfs":
        return (f"sshfs over a localhost sshd behind a TCP delay proxy, {args.delay_us} µs round trip"
                f"{', -o ' + args.sshfs_options if args.sshfs_options else ''}")
    return (f"slowstore latency {args.latency_us} µs per call, bandwidth {args.bandwidth_mbps or 'unlimited'}"
            f"{' Mbit/s' if args.bandwidth_mbps else ''}{', ' + slowstore_options if slowstore_options else ''}")


def mount_store(args, backing, mountpoint, slowstore_options=""):
    """The store of `args.store` mounted at `mountpoint`: a SlowstoreMount or an SshfsMount (which
    raises StoreSkipped where it cannot be set up)."""
    if args.store == "sshfs":
        return SshfsMount(backing, mountpoint, args.delay_us, args.sshfs_options)
    options = f"latency_us={args.latency_us},bandwidth_mbps={args.bandwidth_mbps}"
    if slowstore_options:
        options += "," + slowstore_options
    return SlowstoreMount(os.environ["SLOWSTORE"], backing, mountpoint, options)


class PassthroughHpMount(ForegroundMount):
    """libfuse's passthrough_hp (its defaults; bench/lib.sh builds it) of `source`: what a FUSE
    layer that caches nothing costs, for the runners' reference."""
    name = "passthrough_hp"

    def __init__(self, binary, source, mountpoint, pid_file=None):
        # It takes absolute paths: it changes into the source before it looks at the mount point.
        super().__init__([binary, "--foreground", os.path.abspath(source), os.path.abspath(mountpoint)],
                         mountpoint, pid_file)


class SlowstoreMount(ForegroundMount):
    name = "slowstore"
    calls_label = "slowstore calls"

    def __init__(self, binary, backing, mountpoint, options="", pid_file=None):
        self.counts_path = f"{mountpoint}.counts.json"
        if os.path.exists(self.counts_path):
            os.unlink(self.counts_path)
        opts = f"counts={self.counts_path}" + (f",{options}" if options else "")
        super().__init__([binary, backing, mountpoint, "-f", "-o", opts], mountpoint, pid_file)

    def counts(self):
        """The calls made so far, per kind (the daemon writes them at SIGUSR1)."""
        if os.path.exists(self.counts_path):
            os.unlink(self.counts_path)
        os.kill(self.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.counts_path):
            if time.monotonic() > deadline:
                raise RuntimeError("slowstore wrote no counts after SIGUSR1")
            time.sleep(0.005)
        with open(self.counts_path) as f:
            return json.load(f)

    def stop(self):
        """Unmounts, waits for the daemon; returns its call counts (None if it wrote none)."""
        super().stop()
        try:
            with open(self.counts_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None
