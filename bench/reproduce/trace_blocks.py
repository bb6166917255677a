#!/usr/bin/env python3
"""What a DiskSim trace offers CFTL's block mapping, logical block by logical block.

A logical block is 128 pages of 4 KiB: a 512 KiB-aligned chunk of one trace device, which
flashdir-sim's default compaction (chunk-pages=block) keeps aligned. For each trace prints how
many logical blocks its requests touch, write, write fully, write whole in order (page 0 to 127
by one write or by writes each starting where the last one to the block ended: an upper bound
on the blocks the replay itself can lay out whole), and read at least half a block's worth of
pages in all (the read-hot threshold, before the detector's aging).

    bench/reproduce/trace_blocks.py bench/traces/*.trace bench/traces/*.ascii
"""
import sys
from collections import defaultdict

PAGE_BYTES = 4096
PAGES_PER_BLOCK = 128
READ_HOT_PAGES = PAGES_PER_BLOCK // 2


def count(path):
    touched = set()
    written = defaultdict(set)  # logical block -> offsets written
    next_in_order = {}  # logical block -> the offset an in-order whole write continues at
    whole_in_order = set()
    pages_read = defaultdict(int)
    for line in open(path):
        fields = line.split()
        if len(fields) < 5:
            continue
        device, sector, sectors, is_read = int(fields[1]), int(fields[2]), int(fields[3]), fields[4] == "1"
        page = sector * 512 // PAGE_BYTES
        last = (sector * 512 + sectors * 512 - 1) // PAGE_BYTES
        while page <= last:
            block = (device, page // PAGES_PER_BLOCK)
            offset = page % PAGES_PER_BLOCK
            pages = min(PAGES_PER_BLOCK - offset, last - page + 1)
            touched.add(block)
            if is_read:
                pages_read[block] += pages
            else:
                written[block].update(range(offset, offset + pages))
                in_order = offset == 0 or next_in_order.get(block) == offset
                next_in_order[block] = offset + pages if in_order else None
                if in_order and offset + pages == PAGES_PER_BLOCK:
                    whole_in_order.add(block)
            page += pages
    fully = sum(1 for offsets in written.values() if len(offsets) == PAGES_PER_BLOCK)
    read_hot = sum(1 for n in pages_read.values() if n >= READ_HOT_PAGES)
    print(f"{path}: logical blocks touched {len(touched)}, written {len(written)}, fully written {fully}, "
          f"written whole in order {len(whole_in_order)}, with >= {READ_HOT_PAGES} pages read {read_hot}")


for trace in sys.argv[1:]:
    count(trace)
