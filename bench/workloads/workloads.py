"""The parts of bench/workloads/run.sh that parse and compute (run.sh says what is measured).

  workloads.py postmark DIR FILES TRANSACTIONS SEED     runs postmark in DIR; prints
      transactions/s over its transaction phase, and the run's wall seconds
  workloads.py dbench OUTPUT                           prints dbench's MB/s
  workloads.py sysbench OUTPUT                         prints reads/s and writes/s
  workloads.py flashdir-io STATS_JSON                  prints a mount's data bytes (read +
      written through its files) and its cache state
  workloads.py flashdir-summary STATS_JSON             prints a line on a mount's counters
  workloads.py table SAMPLES PLOT_DATA [BACKING_NAME [PNG]]   prints the Markdown table of the
      medians and ratios, writes the ratios for plot.gp (tab-separated, a header line);
      BACKING_NAME labels the target backing (the store the others stand on: "backing", or
      "slowstore"), PNG is the plot the table links to (results.png)

Each workload's output is checked: a failed call it reports (postmark's and dbench's error
lines, sysbench's FATAL, a checksum mismatch) or a figure missing stops the runner with the
output, rather than a figure made of a failed run.
"""
import collections
import json
import re
import statistics
import subprocess
import sys
import time


def fail(message, output=""):
    sys.exit(f"workloads.py: {message}\n{output}")


def postmark(directory, files, transactions, seed):
    """Postmark's own figure is transactions over the seconds of its transaction phase, in
    whole seconds from time(): a phase of 0.3 s reads as 1 s. The phase is timed here instead,
    from the moment postmark prints "Performing transactions" to its "Done" (stdout unbuffered
    through stdbuf, read as it comes)."""
    config = (f"set location {directory}\nset seed {seed}\nset number {files}\n"
              f"set transactions {transactions}\nset size 512 16384\nset read 4096\nset write 4096\n"
              f"set subdirectories 10\nrun\nquit\n")
    started = time.monotonic()
    process = subprocess.Popen(["stdbuf", "-o0", "postmark"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    process.stdin.write(config.encode())
    process.stdin.close()
    output = b""
    phase_start = phase_end = None
    while True:
        chunk = process.stdout.read1(4096)
        if not chunk:
            break
        now = time.monotonic()
        output += chunk
        if phase_start is None and b"Performing transactions" in output:
            phase_start = now
        if phase_start is not None and phase_end is None and \
                b"Done" in output[output.index(b"Performing transactions"):]:
            phase_end = now
    process.wait()
    wall = time.monotonic() - started
    text = output.decode(errors="replace")
    if process.returncode != 0 or phase_end is None or re.search(r"error|fail|cannot|can't", text, re.I):
        fail(f"postmark in {directory} failed (exit {process.returncode})", text)
    reported = re.search(r"(\d+) seconds of transactions", text)
    if not reported:
        fail("postmark printed no transaction time", text)
    print(f"{transactions / (phase_end - phase_start):.1f} {wall:.2f}")


def dbench(path):
    text = open(path, errors="replace").read()
    # dbench prints a failed call as "ERROR", "failed" or "Unexpected"; a run prints "Throughput".
    # "failed to create barrier semaphore" is its own start-up (a SysV semaphore the system
    # refused: the clients then start without waiting for each other), not a failed call.
    calls = re.sub(r"^failed to create barrier semaphore\s*$", "", text, flags=re.M)
    if re.search(r"error|failed|unexpected|incorrect", calls, re.I):
        fail("dbench reported failed calls", text)
    match = re.search(r"^Throughput ([0-9.]+) MB/sec", text, re.M)
    if not match:
        fail("dbench printed no throughput", text)
    if float(match.group(1)) <= 0:
        fail("dbench measured 0 MB/s: its warm-up took the whole run (a longer -t)", text)
    print(match.group(1))


def sysbench(path):
    text = open(path, errors="replace").read()
    if re.search(r"FATAL|mismatch|error", text, re.I):
        fail("sysbench reported an error", text)
    reads = re.search(r"reads/s:\s+([0-9.]+)", text)
    writes = re.search(r"writes/s:\s+([0-9.]+)", text)
    if not reads or not writes or "Using checksums validation" not in text:
        fail("sysbench printed no rates (or ran without validation)", text)
    print(reads.group(1), writes.group(1))


def flashdir_summary(path):
    stats = json.load(open(path))
    cache, data, requests = stats["cache"], stats["data"], stats["requests"]
    passed = data["pass_through_read_bytes"] + data["pass_through_written_bytes"]
    print(f"{sum(requests.values()):,} requests, hit ratio {cache['hit_ratio']:.3f}, "
          f"{cache['cached_pages']:,} pages cached, {cache['dirty_pages']:,} dirty, "
          f"{cache['written_back_pages']:,} written back, {cache['backing_errors']:,} backing errors, "
          f"{passed:,} bytes passed through, {data['errors']:,} error replies (ENOENT included), "
          f"cache {stats['cache_health']['state']}")


def flashdir_io(path):
    stats = json.load(open(path))
    data = stats["data"]
    print(data["read_bytes"] + data["written_bytes"], stats["cache_health"]["state"])


TARGET_NAMES = {"writethrough": "flashdir writethrough", "writeback": "flashdir writeback",
                "writeback_delay": "flashdir writeback, writeback_delay=1",
                "passthrough_hp": "passthrough_hp", "passthrough_hp_nocache": "passthrough_hp --nocache",
                "backing": "backing"}
FLASHDIR_TARGETS = ("writethrough", "writeback", "writeback_delay")


def table(samples_path, plot_path, backing_name="backing", png="results.png"):
    """SAMPLES lines: point|target|value|daemon_cpu_seconds (- for the backing directory)."""
    runs = collections.defaultdict(list)
    cpu = collections.defaultdict(list)
    points, targets = [], []
    for line in open(samples_path):
        point, target, value, cpu_seconds = line.strip().split("|")
        if point not in points:
            points.append(point)
        if target not in targets:
            targets.append(target)
        runs[point, target].append(float(value))
        if cpu_seconds != "-":
            cpu[point, target].append(float(cpu_seconds))
    flashdirs = [t for t in targets if t in FLASHDIR_TARGETS]
    others = [t for t in targets if t in ("passthrough_hp", "passthrough_hp_nocache", "backing")]
    pairs = [(f, o) for o in others for f in flashdirs]

    # A ratio is the median of the rounds' ratios: the targets of one round ran back to back,
    # so a slow moment of the machine weighs on both sides of each.
    def ratio(point, f, o):
        ratios = [a / b for a, b in zip(runs[point, f], runs[point, o]) if b > 0]
        return statistics.median(ratios) if ratios else float("nan")  # the other side measured 0

    short = {"writethrough": "wt", "writeback": "wb", "writeback_delay": "wb+delay", "passthrough_hp": "passthrough_hp",
             "passthrough_hp_nocache": "passthrough_hp --nocache", "backing": backing_name}
    names = dict(TARGET_NAMES, backing=backing_name)
    head = ["workload, figure"] + [names[t] for t in targets] + [f"{short[f]} / {short[o]}" for f, o in pairs]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    with open(plot_path, "w") as plot:
        plot.write("\t".join(["point"] + [f"{short[f]} / {short[o]}" for f, o in pairs]) + "\n")
        for point in points:
            cells = [point] + [f"{statistics.median(runs[point, t]):,.1f}" for t in targets]
            cells += [f"{ratio(point, f, o):.2f}".replace("nan", "n/a") for f, o in pairs]
            print("| " + " | ".join(cells) + " |")
            plot.write("\t".join([point] + [f"{ratio(point, f, o):.4f}" for f, o in pairs]) + "\n")
    print()
    print("Figures: medians of the rounds." + (" Ratios: medians of the rounds' ratios (wt, wb, wb+delay: flashdir "
          "writethrough, writeback, writeback with writeback_delay=1); round by round:" if pairs else ""))
    for point in points if pairs else []:
        print(f"- {point}: " + "; ".join(
            f"{short[f]} / {short[o]} " + ", ".join(f"{a / b:.2f}" for a, b in zip(runs[point, f], runs[point, o]) if b > 0)
            for f, o in pairs))
    daemons = [t for t in targets if t != "backing"]
    if daemons:
        # One figure per workload run (sysbench rndrw's reads and writes come from one run).
        runs_of = {}
        for point in points:
            runs_of.setdefault(point.split(",")[0], point)
        print()
        print("Daemon CPU seconds per run (user + system, median over the rounds): " + "; ".join(
            f"{name}: " + ", ".join(f"{short[t]} {statistics.median(cpu[point, t]):.2f}" for t in daemons if cpu[point, t])
            for name, point in runs_of.items()) + ".")
    if pairs:
        print()
        print(f"![ratios]({png})")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "postmark":
        postmark(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif command == "dbench":
        dbench(args[0])
    elif command == "sysbench":
        sysbench(args[0])
    elif command == "flashdir-summary":
        flashdir_summary(args[0])
    elif command == "flashdir-io":
        flashdir_io(args[0])
    elif command == "table":
        table(*args[:4])
    else:
        fail(f"unknown command {command}")


if __name__ == "__main__":
    main()
