"""mode=writeback with writeback_delay=SECONDS: a close(2) returns with the data durable in the
cache, and the backing file gets it within the delay, not before; reads through the mount see it
at once; a file whose times are set, or that gains a second name, reaches the backing first; a
kill -9 inside the delay loses nothing the close returned; an unmount writes everything back.
"""
import json
import os
import time

import harness

DELAY = 3.0


def stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)["cache"]


def write_file(path, payload):
    with open(path, "wb") as f:
        f.write(payload)


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def close_returns_before_the_backing_has_it(check, top):
    backing, mnt, cache = f"{top}/b1", f"{top}/m", f"{top}/cache1"
    os.mkdir(backing)
    payload = os.urandom(200 * 1024 + 77)
    with harness.Mount(backing, mnt, cache, f"mode=writeback,writeback_delay={DELAY:g}") as mount:
        write_file(f"{mnt}/a", payload)
        closed = time.monotonic()
        early = harness.read_all(f"{backing}/a")
        waited = time.monotonic() - closed
        check.check(len(early) == len(payload), f"delay: the backing file has the size at the close ({len(early)})")
        check.check(early != payload or waited >= DELAY, "delay: the backing file does not have the bytes at the close")
        check.check(harness.read_all(f"{mnt}/a") == payload, "delay: a read through the mount sees the bytes at once")
        arrived = wait_for(lambda: harness.read_all(f"{backing}/a") == payload, 30)
        elapsed = time.monotonic() - closed
        check.check(arrived, "delay: the backing file gets the bytes")
        check.check(elapsed >= DELAY - 0.2, f"delay: not before the delay ({elapsed:.2f} s after the close)")
        check.check(wait_for(lambda: stats(mnt)["delayed_write_backs"] >= 1 and stats(mnt)["dirty_pages"] == 0, 10),
                    f"delay: the stats count the write-back ({stats(mnt)['delayed_write_backs']}), nothing dirty")
        check.check(mount.pid > 0, "delay: mounted")


def times_and_second_names_wait_for_nothing(check, top):
    backing, mnt, cache = f"{top}/b2", f"{top}/m", f"{top}/cache2"
    os.mkdir(backing)
    payload = os.urandom(64 * 1024 + 5)
    with harness.Mount(backing, mnt, cache, f"mode=writeback,writeback_delay={DELAY:g}"):
        # Times set after the close stay: the file went back before they were set.
        write_file(f"{mnt}/t", payload)
        os.utime(f"{mnt}/t", (1_000_000_000, 1_000_000_000))
        check.check(harness.read_all(f"{backing}/t") == payload, "delay: setting times writes the file back first")
        time.sleep(DELAY + 1)
        check.check(os.stat(f"{backing}/t").st_mtime == 1_000_000_000,
                    f"delay: the times set stay after the delay (mtime {os.stat(f'{backing}/t').st_mtime})")
        # A second name is read around the cache: the file goes back before that open reads it.
        write_file(f"{mnt}/l", payload)
        os.link(f"{mnt}/l", f"{mnt}/l2")
        check.check(harness.read_all(f"{mnt}/l2") == payload, "delay: the second name reads the new bytes")
        check.check(harness.read_all(f"{backing}/l") == payload, "delay: the open of the second name wrote it back")
        # An unmount writes back what waits.
        write_file(f"{mnt}/u", payload)
    check.check(harness.read_all(f"{backing}/u") == payload, "delay: an unmount writes back what waits for its delay")


def kill9_inside_the_delay(check, top):
    backing, mnt, cache = f"{top}/b3", f"{top}/m", f"{top}/cache3"
    os.mkdir(backing)
    payload = os.urandom(300 * 1024 + 9)
    mount = harness.Mount(backing, mnt, cache, "mode=writeback,writeback_delay=600")
    try:
        write_file(f"{mnt}/k", payload)
        mount.kill9()
    finally:
        mount.stop()
    check.check(harness.read_all(f"{backing}/k") != payload, "delay: the kill came before the write-back")
    with harness.Mount(backing, mnt, cache, "mode=writeback,writeback_delay=600"):
        check.check(harness.read_all(f"{backing}/k") == payload, "delay: the restart wrote back what the close returned")
        check.check(harness.read_all(f"{mnt}/k") == payload, "delay: the remount reads it")


def main():
    return harness.run_parts("write-back-delay", (close_returns_before_the_backing_has_it,
                                                  times_and_second_names_wait_for_nothing, kill9_inside_the_delay))


if __name__ == "__main__":
    raise SystemExit(main())
