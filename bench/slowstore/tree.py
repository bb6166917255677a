"""The tree the slow-store benchmark works on: a git checkout's shape (nested directories of
small source-like files, some 64 KiB files, all committed) and one big file beside it, ignored
by git, for random reads. Made from a seed, so every run works on the same tree."""
import os
import random
import subprocess

KiB = 1 << 10
MiB = 1 << 20
TOP_DIRS = ("src", "include", "tests", "docs", "assets", "tools", "third_party")
SUFFIXES = (".c", ".h", ".cc", ".py", ".md", ".txt", ".json")
BIG_NAME = "big.data"
BLOB_SIZE = 64 * KiB


def _directories(rng, count):
    """`count` relative directory paths, nested up to five levels below the top ones."""
    dirs = list(TOP_DIRS)
    while len(dirs) < count:
        parent = rng.choice(dirs)
        if parent.count("/") < 4:
            dirs.append(f"{parent}/d{len(dirs):03d}")
    return dirs


def _small_size(rng):
    """Source-file sizes: a median near 2 KiB, from 64 bytes to 16 KiB."""
    return int(min(16 * KiB, max(64, rng.lognormvariate(7.5, 1.0))))


def make(root, files, blobs, big_bytes, seed=19):
    """Writes `files` files below `root` (the big file and .gitignore among them), `blobs` of
    them of 64 KiB, and commits all but the big file in a git repository at `root`, packed as a
    clone's would be. Returns the relative paths of the 64 KiB files."""
    rng = random.Random(seed)
    dirs = _directories(rng, max(len(TOP_DIRS), files // 14))
    for d in dirs:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    # Text cut from one random pool: distinct files that compress as source does.
    pool = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz_(){};\n    ") for _ in range(MiB))
    small = files - blobs - 2
    blob_paths = []
    for i in range(small + blobs):
        d = rng.choice(dirs)
        if i < small:
            path, size = f"{d}/f{i:05d}{rng.choice(SUFFIXES)}", _small_size(rng)
        else:
            path, size = f"{d}/blob{i:05d}.bin", BLOB_SIZE
            blob_paths.append(path)
        at = rng.randrange(len(pool) - size)
        with open(os.path.join(root, path), "wb") as f:
            f.write(pool[at:at + size])
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write(f"/{BIG_NAME}\n")
    with open(os.path.join(root, BIG_NAME), "wb") as f:
        for _ in range(0, big_bytes, MiB):
            f.write(rng.randbytes(MiB))
    _age(root)
    _commit(root)
    return blob_paths


def _age(root):
    """Dates every file an hour back: files younger than the index would be "racily clean" to
    git, which then reads them whole at every status."""
    import time
    then = time.time() - 3600
    for dirpath, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (then, then))


def _commit(root):
    git = ["git", "-C", root, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "gc.auto=0"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"], ["repack", "-adq"], ["prune-packed"]):
        subprocess.run(git + args, check=True)
