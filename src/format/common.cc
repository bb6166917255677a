#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <xxhash.h>
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
// The library's runtime dispatch to the widest vector unit the CPU has (AVX2 where present):
// the same hash, a page's worth in about 20% less time than the SSE2 baseline the library is
// built for. Translation pages are hashed on every write and every verified read.
#include <xxh_x86dispatch.h>  // redefines XXH3_64bits as XXH3_64bits_dispatch
#endif

#include "flashdir/format.h"

namespace flashdir::format {

std::uint64_t xxh3(ConstByteSpan bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

const char* mapping_scheme_name(MappingScheme scheme) {
  switch (scheme) {
    case MappingScheme::cftl: return "cftl";
    case MappingScheme::dftl: return "dftl";
    case MappingScheme::page: return "page";
  }
  return "unknown";
}

const char* gc_policy_name(GcPolicy policy) {
  switch (policy) {
    case GcPolicy::dual_greedy: return "dual-greedy";
    case GcPolicy::greedy: return "greedy";
    case GcPolicy::cost_benefit: return "cost-benefit";
  }
  return "unknown";
}

const char* ram_policy_name(RamPolicy policy) {
  switch (policy) {
    case RamPolicy::tree: return "tree";
    case RamPolicy::aps: return "aps";
    case RamPolicy::static_split: return "static";
    case RamPolicy::stack: return "stack";
  }
  return "unknown";
}

Result<MappingScheme> parse_mapping_scheme(std::string_view name) {
  for (auto scheme : {MappingScheme::cftl, MappingScheme::dftl, MappingScheme::page}) {
    if (name == mapping_scheme_name(scheme)) return scheme;
  }
  return Status::invalid_argument(fmt::format("unknown mapping scheme '{}' (expected cftl, dftl or page)", name));
}

Result<GcPolicy> parse_gc_policy(std::string_view name) {
  for (auto policy : {GcPolicy::dual_greedy, GcPolicy::greedy, GcPolicy::cost_benefit}) {
    if (name == gc_policy_name(policy)) return policy;
  }
  return Status::invalid_argument(
      fmt::format("unknown GC policy '{}' (expected dual-greedy, greedy or cost-benefit)", name));
}

const char* page_kind_name(PageKind kind) {
  switch (kind) {
    case PageKind::data: return "data";
    case PageKind::translation: return "translation";
    case PageKind::checkpoint: return "checkpoint";
  }
  return "unknown";
}

Uuid Uuid::random() {
  Uuid uuid;
  std::size_t filled = 0;
  while (filled < uuid.bytes.size()) {
    const ssize_t n = getrandom(uuid.bytes.data() + filled, uuid.bytes.size() - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    // getrandom(2) only fails on bad arguments or before the entropy pool is initialised at
    // boot; neither can happen to a process that is running normally.
    if (n <= 0) std::abort();
    filled += static_cast<std::size_t>(n);
  }
  uuid.bytes[6] = static_cast<std::uint8_t>((uuid.bytes[6] & 0x0F) | 0x40);  // RFC 4122 v4
  uuid.bytes[8] = static_cast<std::uint8_t>((uuid.bytes[8] & 0x3F) | 0x80);
  return uuid;
}

std::string Uuid::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", bytes[i]);
  }
  return out;
}

}  // namespace flashdir::format
