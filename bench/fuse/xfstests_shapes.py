"""The shapes of two xfstests workloads, scaled down, run on a directory; prints the wall time.

  069  generic/069 (src/append_writer): six processes, each appending 4-byte integers with
       O_APPEND to a file of its own (1, 20, 300, 40000, 3000000/SCALE and 12345 of them),
       then every file read back and checked (append_reader).
  074  generic/074 (src/fstest): its five fstest runs, each child writing its files in blocks
       (1 KiB, 8 KiB through mmap, then three children with 512-byte blocks every other block,
       by pwrite, by mmap, and by mmap on O_SYNC descriptors), closing them, reading every block
       back and checking it, ten loops; the 30 MiB and 10 MiB files divided by SCALE.

  python3 xfstests_shapes.py DIR 069|074 [SCALE (10)]
"""
import mmap
import multiprocessing
import os
import sys
import time


def append_writer(root, iterations):
    fd = os.open(f"{root}/testfile.{os.getpid()}", os.O_CREAT | os.O_RDWR | os.O_APPEND, 0o600)
    for i in range(iterations):
        os.write(fd, i.to_bytes(4, "little"))
    os.close(fd)


def generic_069(root, scale):
    counts = (1, 20, 300, 40000, 3000000 // scale, 12345)
    writers = [multiprocessing.Process(target=append_writer, args=(root, n)) for n in counts]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
        if writer.exitcode != 0:
            sys.exit("an append writer failed")
    for name in os.listdir(root):
        with open(f"{root}/{name}", "rb") as f:
            data = f.read()
        if data != b"".join(i.to_bytes(4, "little") for i in range(len(data) // 4)):
            sys.exit(f"{name}: the appended integers are not 0, 1, 2, ...")
        os.unlink(f"{root}/{name}")


def block(loop, child, fnum, offset, size):
    return bytes([(loop + child + fnum + offset // size) % 256]) * size


def fstest_child(base, child, files, loops, file_size, block_size, step, use_mmap, sync):
    directory = f"{base}/child{child}"
    os.mkdir(directory)
    for loop in range(loops):
        for fnum in range(files):
            flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | (os.O_SYNC if sync else 0)
            fd = os.open(f"{directory}/file{fnum}", flags, 0o644)
            if use_mmap:
                os.ftruncate(fd, file_size)
                with mmap.mmap(fd, file_size) as mapped:
                    for offset in range(0, file_size, step):
                        mapped[offset:offset + block_size] = block(loop, child, fnum, offset, block_size)
            else:
                for offset in range(0, file_size, step):
                    os.pwrite(fd, block(loop, child, fnum, offset, block_size), offset)
            os.close(fd)
        for fnum in range(files):
            fd = os.open(f"{directory}/file{fnum}", os.O_RDONLY)
            for offset in range(0, file_size, step):
                if os.pread(fd, block_size, offset) != block(loop, child, fnum, offset, block_size):
                    sys.exit(f"child {child} file {fnum}: corruption at {offset}")
            os.close(fd)
    for fnum in range(files):
        os.unlink(f"{directory}/file{fnum}")
    os.rmdir(directory)


def fstest(root, children, files, loops, file_size, block_size, holes=False, use_mmap=False, sync=False):
    step = block_size * (2 if holes else 1)
    file_size -= file_size % step
    base = f"{root}/fstest"
    os.mkdir(base)
    workers = [multiprocessing.Process(target=fstest_child,
                                       args=(base, c, files, loops, file_size, block_size, step, use_mmap, sync))
               for c in range(children)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        if worker.exitcode != 0:
            sys.exit("an fstest child failed")
    os.rmdir(base)


def generic_074(root, scale):
    mib = 1 << 20
    fstest(root, 1, 1, 10, mib, 1024)
    fstest(root, 1, 1, 10, 10 * mib // scale, 8192, use_mmap=True)
    fstest(root, 3, 5, 10, 30 * mib // scale, 512, holes=True)
    fstest(root, 3, 5, 10, 30 * mib // scale, 512, holes=True, use_mmap=True)
    fstest(root, 3, 5, 10, 10 * mib // scale, 512, holes=True, use_mmap=True, sync=True)


def main():
    root, which = sys.argv[1], sys.argv[2]
    scale = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    start = time.monotonic()
    {"069": generic_069, "074": generic_074}[which](root, scale)
    print(f"{time.monotonic() - start:.2f}")


if __name__ == "__main__":
    main()
