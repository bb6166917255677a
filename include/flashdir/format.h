// flashdir on-media format, version 1. Mirrored in prose in doc/format.md.
//
// A cache directory holds three things:
//   superblock   two 4 KiB slots, each a complete Superblock; writers alternate slots and
//                readers take the valid slot with the highest sequence, so a torn update
//                never loses the previous one.
//   nand.img     the simulated chip: an ImageHeader, a block table, the OOB area of every
//                page, then the page data (4 KiB aligned, sparse until written).
//   catalog/     a RocksDB database (file ids, validation attributes, superblock copy).
//
// Rules for every record here:
//   - fields are little-endian and encoded one by one (endian.h), never memcpy'd structs;
//   - checksums are XXH3-64 over the encoded record with the checksum field zeroed;
//   - enum values are permanent: add new ones, never renumber or reuse;
//   - a record that fails its magic, version, size or checksum test is refused with a message
//     that names the record and the test.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <span>
#include <vector>

#include "flashdir/geometry.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir::format {

inline constexpr std::uint32_t kFormatVersion = 1;

std::uint64_t xxh3(ConstByteSpan bytes);

// ---------------------------------------------------------------------------------------------
// Policies chosen at format time (stored in the superblock).

enum class MappingScheme : std::uint8_t { cftl = 1, dftl = 2, page = 3 };
enum class GcPolicy : std::uint8_t { dual_greedy = 1, greedy = 2, cost_benefit = 3 };
enum class RamPolicy : std::uint8_t { tree = 1, aps = 2, static_split = 3, stack = 4 };

// Stored on media: a failure here means a change would make every existing cache unreadable.
static_assert(static_cast<int>(MappingScheme::cftl) == 1 && static_cast<int>(MappingScheme::dftl) == 2 &&
              static_cast<int>(MappingScheme::page) == 3);
static_assert(static_cast<int>(GcPolicy::dual_greedy) == 1 && static_cast<int>(GcPolicy::greedy) == 2 &&
              static_cast<int>(GcPolicy::cost_benefit) == 3);
static_assert(static_cast<int>(RamPolicy::tree) == 1 && static_cast<int>(RamPolicy::aps) == 2 &&
              static_cast<int>(RamPolicy::static_split) == 3 && static_cast<int>(RamPolicy::stack) == 4);

// Where the cache's data slots start in the logical space (doc/cache.md "Slots and
// replacement"): right after the metadata pages (caches formatted before the choice existed
// wrote 0 there), or at the next logical-block boundary, so that a file cached into consecutive
// slots can fill CFTL's logical blocks whole (doc/ftl.md "CFTL").
enum class SlotAlignment : std::uint8_t { after_metadata = 0, logical_block = 1 };
static_assert(static_cast<int>(SlotAlignment::after_metadata) == 0 &&
              static_cast<int>(SlotAlignment::logical_block) == 1);

const char* mapping_scheme_name(MappingScheme scheme);
const char* gc_policy_name(GcPolicy policy);
const char* ram_policy_name(RamPolicy policy);
// The inverse of the names above; the message lists the accepted names.
Result<MappingScheme> parse_mapping_scheme(std::string_view name);
Result<GcPolicy> parse_gc_policy(std::string_view name);

// 128 random bits naming one formatted cache; the image header repeats it so a superblock
// is never paired with another cache's image.
struct Uuid {
  std::array<std::uint8_t, 16> bytes{};
  static Uuid random();           // from getrandom(2)
  std::string to_string() const;  // 8-4-4-4-12 hex
  bool operator==(const Uuid&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Superblock.
//
//   offset size field
//        0    8 magic "FLASHDIR"
//        8    4 format version
//       12    4 encoded size (kSuperblockEncodedSize)
//       16    8 checksum
//       24   16 uuid
//       40    4 page size (bytes)          44  4 OOB size (bytes)
//       48    4 pages per block            52  4 reserved (0)
//       56    8 block count
//       64    1 latency preset             65  3 reserved (0)
//       68    4 read latency (us)          72  4 program latency (us)
//       76    4 erase latency (us)
//       80    1 mapping scheme             81  1 GC policy
//       82    1 RAM policy                 83  1 static mapping share (percent)
//       84    2 over-provisioning (per mille)
//       86    1 clean-shutdown flag (0 or 1)
//       87    1 slot alignment (SlotAlignment; 0 before it existed)
//       88    8 device RAM budget (bytes)
//       96    8 sequence (bumped by every write of the superblock)
//      104    8 creation time (Unix seconds)
//      112    8 file id limit: every file id the catalog has given out is below it
//      120      end; the rest of the 4 KiB slot is zero

inline constexpr std::uint64_t kSuperblockMagic = 0x5249444853414C46ULL;  // "FLASHDIR" in LE
inline constexpr std::size_t kSuperblockEncodedSize = 120;
inline constexpr std::size_t kSuperblockSlotSize = 4096;
inline constexpr int kSuperblockSlots = 2;
static_assert(kSuperblockEncodedSize <= kSuperblockSlotSize);

struct Superblock {
  Uuid uuid;
  Geometry geometry;
  LatencyProfile latency;
  MappingScheme mapping_scheme = MappingScheme::cftl;
  GcPolicy gc_policy = GcPolicy::dual_greedy;
  RamPolicy ram_policy = RamPolicy::stack;
  std::uint8_t static_mapping_percent = 50;
  std::uint16_t overprovision_permille = 70;
  bool clean_shutdown = true;
  SlotAlignment slot_alignment = SlotAlignment::logical_block;
  std::uint64_t ram_budget_bytes = 64ULL << 20;
  std::uint64_t sequence = 0;
  std::uint64_t created_unix_s = 0;
  // The durable high-water mark of file ids (the engine raises it before the catalog gives an id
  // out): a catalog that lost records can never hand out an id the cache's metadata pages
  // still name. 0 until the engine first opens the cache.
  std::uint64_t file_id_limit = 0;

  bool operator==(const Superblock&) const = default;
};

// Writes one slot (kSuperblockSlotSize bytes).
void encode_superblock(const Superblock& sb, ByteSpan slot);
// Refuses bad magic, version, size, checksum, geometry or enum values.
Result<Superblock> decode_superblock(ConstByteSpan slot);

// ---------------------------------------------------------------------------------------------
// Image header: the first 4 KiB of nand.img. The regions after it are laid out by
// image_layout() from the geometry alone; the header repeats the offsets so a header that
// disagrees with its own geometry is caught.
//
//   offset size field
//        0    8 magic "FDNANDIM"
//        8    4 format version
//       12    4 encoded size (kImageHeaderEncodedSize)
//       16    8 checksum
//       24   16 uuid (equals the superblock's)
//       40    4 page size     44 4 OOB size     48 4 pages per block     52 4 reserved (0)
//       56    8 block count
//       64    8 block table offset
//       72    8 OOB area offset
//       80    8 data area offset
//       88    8 file size
//       96      end
//
// Block table: one 8-byte entry per block: u32 erase count, u32 next programmable page.
// The table is the state of the simulated silicon (which pages hold charge), written before
// the pages it describes, so it never claims less than what the pages hold.
// OOB area: oob_size bytes per page in page order. Data area: page_size bytes per page.

inline constexpr std::uint64_t kImageMagic = 0x4D49444E414E4446ULL;  // "FDNANDIM" in LE
inline constexpr std::size_t kImageHeaderEncodedSize = 96;
inline constexpr std::size_t kImageHeaderSize = 4096;
inline constexpr std::size_t kBlockTableEntrySize = 8;
static_assert(kImageHeaderEncodedSize <= kImageHeaderSize);

struct ImageLayout {
  std::uint64_t block_table_offset = 0;
  std::uint64_t oob_offset = 0;
  std::uint64_t data_offset = 0;
  std::uint64_t file_size = 0;
  bool operator==(const ImageLayout&) const = default;
};

ImageLayout image_layout(const Geometry& geometry);

struct ImageHeader {
  Uuid uuid;
  Geometry geometry;
  ImageLayout layout;
};

void encode_image_header(const ImageHeader& header, ByteSpan out);  // kImageHeaderSize bytes
Result<ImageHeader> decode_image_header(ConstByteSpan in);

struct BlockTableEntry {
  std::uint32_t erase_count = 0;
  std::uint32_t next_page = 0;
};

void encode_block_table_entry(const BlockTableEntry& entry, ByteSpan out);
BlockTableEntry decode_block_table_entry(ConstByteSpan in);

// ---------------------------------------------------------------------------------------------
// OOB record: the first 48 bytes of every programmed page's OOB area; the rest is zero.
// An erased page's OOB reads as all 0xFF.
//
//   offset size field
//        0    1 kind (PageKind)
//        1    1 record version (1)
//        2    2 flags (reserved, 0)
//        4    4 aux (kind-specific: e.g. the index of a checkpoint page in its checkpoint)
//        8    8 logical number: LPN for data, translation-page number for translation pages
//       16    8 program sequence: the order pages were programmed on the chip
//       24    8 data version: the sequence of the host write whose data this is; a GC copy
//               keeps the version of what it moves, so recovery can tell old from new
//       32    8 XXH3-64 of the page data
//       40    8 checksum of this record (bytes 0..47 with this field zeroed)

enum class PageKind : std::uint8_t { data = 1, translation = 2, checkpoint = 3 };
static_assert(static_cast<int>(PageKind::data) == 1 && static_cast<int>(PageKind::translation) == 2 &&
              static_cast<int>(PageKind::checkpoint) == 3);
const char* page_kind_name(PageKind kind);

inline constexpr std::size_t kOobRecordSize = 48;
static_assert(kOobRecordSize <= Geometry::kDefaultOobSizeBytes);
inline constexpr std::uint8_t kOobRecordVersion = 1;

struct OobRecord {
  PageKind kind = PageKind::data;
  std::uint32_t aux = 0;
  std::uint64_t logical_number = 0;
  std::uint64_t sequence = 0;
  std::uint64_t version = 0;
  std::uint64_t data_hash = 0;

  bool operator==(const OobRecord&) const = default;
};

// Fills the whole OOB area (`out`, at least kOobRecordSize bytes).
void encode_oob(const OobRecord& record, ByteSpan out);
// Refuses an erased area, an unknown kind or version, and a checksum mismatch.
Result<OobRecord> decode_oob(ConstByteSpan in);
// True if every byte is 0xFF: the OOB of a page that was never programmed.
bool is_erased(ConstByteSpan bytes);

// ---------------------------------------------------------------------------------------------
// Cache metadata page (LUFUW, papers/lufuw.txt; doc/cache.md). The cache's logical pages
// [0, M) are its M metadata pages; metadata page p holds the entries of slots
// [p * E, p * E + count) where E = metadata_entries_per_page(page size). A page always fills
// a whole cache page; the bytes after its entries are zero.
//
//   offset size field
//        0    8 magic "FDCACHMD"
//        8    4 format version
//       12    4 encoded size (header + entries; the rest of the page is zero)
//       16    8 checksum: XXH3-64 of the whole page with this field zeroed
//       24    8 metadata page number (its LPN)
//       32    8 sequence (bumped by every metadata page write of the cache)
//       40    4 entry count (at most E)
//       44    1 scheme (MetadataSchemeCode)
//       45    1 flags: bit 0 clean shutdown (only the newest page's counts)
//       46    1 window length (0..63)
//       47    1 reserved (0)
//       48  252 window: 63 u32 metadata page numbers with unfinished writes, oldest first;
//               unused ones zero
//      300    4 reserved (0)
//      304      entries, 16 bytes each:
//                 0 8 file id    8 6 page number in the file    14 1 flags    15 1 reserved (0)
//               flags: bit 0 VALID, bit 1 DIRTY, bit 2 WRITING; an entry without VALID is
//               all zero.

inline constexpr std::uint64_t kMetadataPageMagic = 0x444D484341434446ULL;  // "FDCACHMD" in LE
inline constexpr std::size_t kMetadataPageHeaderSize = 304;
inline constexpr std::size_t kMetadataEntrySize = 16;
inline constexpr std::size_t kMetadataWindowCapacity = 63;
inline constexpr std::uint64_t kMetadataMaxPageNumber = (std::uint64_t{1} << 48) - 1;

enum class MetadataSchemeCode : std::uint8_t { lufuw = 1, write_update = 2, update_write_update = 3 };
static_assert(static_cast<int>(MetadataSchemeCode::lufuw) == 1 &&
              static_cast<int>(MetadataSchemeCode::write_update) == 2 &&
              static_cast<int>(MetadataSchemeCode::update_write_update) == 3);

namespace metadata_flag {
inline constexpr std::uint8_t kValid = 1;
inline constexpr std::uint8_t kDirty = 2;
inline constexpr std::uint8_t kWriting = 4;
inline constexpr std::uint8_t kKnown = kValid | kDirty | kWriting;
}  // namespace metadata_flag

struct MetadataEntry {
  std::uint64_t file_id = 0;
  std::uint64_t page_no = 0;  // at most kMetadataMaxPageNumber
  std::uint8_t flags = 0;     // metadata_flag bits
  bool valid() const { return (flags & metadata_flag::kValid) != 0; }
  bool dirty() const { return (flags & metadata_flag::kDirty) != 0; }
  bool writing() const { return (flags & metadata_flag::kWriting) != 0; }
  bool operator==(const MetadataEntry&) const = default;
};

struct MetadataPageHeader {
  std::uint64_t page_number = 0;
  std::uint64_t sequence = 0;
  MetadataSchemeCode scheme = MetadataSchemeCode::lufuw;
  bool clean_shutdown = false;
  std::vector<std::uint32_t> window;  // at most kMetadataWindowCapacity, oldest first
  bool operator==(const MetadataPageHeader&) const = default;
};

struct MetadataPage {
  MetadataPageHeader header;
  std::vector<MetadataEntry> entries;
};

// Entries one metadata page of `page_size_bytes` holds (237 for 4 KiB); 0 if it holds none.
std::size_t metadata_entries_per_page(std::uint32_t page_size_bytes);
// Writes a whole page (`page`: a cache page). Preconditions, asserted: at most
// metadata_entries_per_page entries and kMetadataWindowCapacity window numbers, page numbers
// within kMetadataMaxPageNumber, entries without VALID all zero.
void encode_metadata_page(const MetadataPageHeader& header, std::span<const MetadataEntry> entries, ByteSpan page);
// Refuses a page of zeros (never written: not_found) and anything failing magic, version,
// size, checksum, scheme, window length, reserved bytes or entry flags (corruption), with a
// message naming the test. Never reads outside `page`.
Result<MetadataPage> decode_metadata_page(ConstByteSpan page);

}  // namespace flashdir::format
