"""flashdir as an installed Linux tool (issue 20): `meson install` into a scratch DESTDIR puts
flashdir and flashdir-sim in bin, mkfs.flashdir and fsck.flashdir in sbin and the four man
pages in share/man; the installed tools run; and with the installed bin first in PATH,
`mount -t fuse.flashdir` and an fstab line (with _netdev, nofail, noauto, x-systemd.*) mount a
backing directory through fuse3's mount.fuse helper, as mount(8) and systemd would.

mount(8) runs its helpers with a PATH of its own (/usr/local/bin first): for the mounts the
installed daemon is linked into /usr/local/bin for the test's length, where an installation
with meson's default prefix puts it; a flashdir already there is left alone and those checks are
skipped, saying so.
"""
import contextlib
import os
import subprocess
import sys

import harness

PREFIX = "usr/local"


def run(command, env=None):
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env)


def installed_tree(check, top):
    build = os.environ["FLASHDIR_BUILD_ROOT"]
    dest = f"{top}/dest"
    result = run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"])
    check.check(result.returncode == 0, f"meson install: {result.stderr.strip()[-2000:]}")
    root = f"{dest}/{PREFIX}"
    for path in ("bin/flashdir", "bin/flashdir-sim", "sbin/mkfs.flashdir", "sbin/fsck.flashdir",
                 "share/man/man8/flashdir.8", "share/man/man8/mkfs.flashdir.8", "share/man/man8/fsck.flashdir.8",
                 "share/man/man1/flashdir-sim.1"):
        check.check(os.path.exists(f"{root}/{path}"), f"installed: {path}")
    for tool, flag in (("bin/flashdir", "--version"), ("sbin/mkfs.flashdir", "-V"), ("sbin/fsck.flashdir", "-V"),
                       ("bin/flashdir-sim", "--version")):
        result = run([f"{root}/{tool}", flag])
        check.check(result.returncode == 0 and "0." in result.stdout, f"installed {tool} {flag}: {result.stdout.strip()}")
    with open(f"{root}/share/man/man8/flashdir.8") as page:
        text = page.read()
    check.check("consistency=" in text and "fuse.flashdir" in text, "flashdir(8) holds the --help options and the mount(8) forms")
    return root


@contextlib.contextmanager
def daemon_in_mount_path(root):
    """Yields True with /usr/local/bin/flashdir linked to the installed daemon, removed after;
    False if something else is there already."""
    link = "/usr/local/bin/flashdir"
    if os.path.lexists(link):
        print(f"SKIP: {link} exists; mount(8) would run it, not the tree under test", flush=True)
        yield False
        return
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(f"{root}/bin/flashdir", link)
    try:
        yield True
    finally:
        os.unlink(link)


def mounted_by_mount8(check, top, command, what):
    mnt = f"{top}/m"
    result = run(command)
    try:
        check.check(result.returncode == 0 and harness.is_mounted(mnt), f"{what}: mounted ({result.stderr.strip()})")
        if harness.is_mounted(mnt):
            check.check(harness.read_all(f"{mnt}/hello") == b"hello", f"{what}: a backing file reads through the mount")
            with open("/proc/self/mounts") as mounts:
                types = [line.split()[2] for line in mounts if line.split()[1] == mnt]
            check.check(types == ["fuse.flashdir"], f"{what}: the mount's type is fuse.flashdir: {types}")
            check.check(os.path.exists(f"{mnt}/.flashdir/stats"), f"{what}: the stats are there")
    finally:
        pid = harness.daemon_pid(f"{top}/cache") if os.path.exists(f"{top}/cache/daemon.lock") else 0
        harness.unmount(mnt)
        if pid:
            harness.wait_gone(pid)


def mount_and_fstab(check, top):
    root = installed_tree(check, top)
    options = f"cache={top}/cache,size=16M"
    with daemon_in_mount_path(root) as linked:
        if not linked:
            return
        mounted_by_mount8(check, top, ["mount", "-t", "fuse.flashdir", f"{top}/b", f"{top}/m", "-o", options],
                          "mount -t fuse.flashdir")
        fstab = f"{top}/fstab"
        with open(fstab, "w") as f:
            f.write(f"{top}/b {top}/m fuse.flashdir {options},_netdev,nofail,noauto,x-systemd.automount,"
                    f"x-systemd.idle-timeout=60 0 0\n")
        mounted_by_mount8(check, top, ["mount", "-T", fstab, f"{top}/m"], "fstab line")
    result = run([f"{root}/sbin/fsck.flashdir", "-n", f"{top}/cache"])
    check.check(result.returncode == 0, f"the installed fsck.flashdir finds the cache clean: {result.stdout.strip()[-500:]}")


def main():
    if not os.environ.get("FLASHDIR_BUILD_ROOT"):
        sys.exit("FLASHDIR_BUILD_ROOT must name the meson build directory")
    return harness.run_parts("install", [mount_and_fstab])


if __name__ == "__main__":
    sys.exit(main())
