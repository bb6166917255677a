#include "flashdir/cache/options.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace flashdir::cache {

std::string_view write_mode_name(WriteMode mode) {
  switch (mode) {
    case WriteMode::write_through: return "writethrough";
    case WriteMode::write_back: return "writeback";
    case WriteMode::write_around: return "writearound";
  }
  return "?";
}

Result<WriteMode> parse_write_mode(std::string_view text) {
  for (WriteMode mode : {WriteMode::write_through, WriteMode::write_back, WriteMode::write_around})
    if (text == write_mode_name(mode)) return mode;
  return Status::invalid_argument(
      fmt::format("unknown write mode '{}' (writethrough, writeback or writearound)", text));
}

std::string_view metadata_scheme_name(MetadataScheme scheme) {
  switch (scheme) {
    case MetadataScheme::lufuw: return "lufuw";
    case MetadataScheme::write_update: return "write-update";
    case MetadataScheme::update_write_update: return "update-write-update";
  }
  return "?";
}

Result<MetadataScheme> parse_metadata_scheme(std::string_view text) {
  for (MetadataScheme scheme :
       {MetadataScheme::lufuw, MetadataScheme::write_update, MetadataScheme::update_write_update})
    if (text == metadata_scheme_name(scheme)) return scheme;
  return Status::invalid_argument(
      fmt::format("unknown metadata scheme '{}' (lufuw, write-update or update-write-update)", text));
}

Result<MetadataScheme> recorded_metadata_scheme(std::string_view options_json) {
  const auto json = nlohmann::json::parse(options_json, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("metadata") || !json["metadata"].is_string())
    return Status::corruption("the catalog's engine options are not readable JSON with a metadata scheme");
  auto scheme = parse_metadata_scheme(json["metadata"].get<std::string>());
  if (!scheme.is_ok()) return Status::corruption(fmt::format("the catalog's engine options: {}", scheme.status().message()));
  return scheme;
}

Status EngineOptions::validate() const {
  if (promote_after_misses == 0) return Status::invalid_argument("promote_after_misses must be at least 1");
  if (promote_after_misses > 1 && promotion_table_entries == 0)
    return Status::invalid_argument("promotion_table_entries must be positive when promote_after_misses > 1");
  if (dirty_high_watermark_percent == 0 || dirty_high_watermark_percent > 100)
    return Status::invalid_argument("dirty_high_watermark_percent must be in 1..100");
  if (dirty_low_watermark_percent >= dirty_high_watermark_percent)
    return Status::invalid_argument("dirty_low_watermark_percent must be below dirty_high_watermark_percent");
  if (flush_batch_pages == 0) return Status::invalid_argument("flush_batch_pages must be positive");
  if (read_ahead_pages > 1024) return Status::invalid_argument("read_ahead_pages is at most 1024");
  if (miss_read_pages < 64 || miss_read_pages > 1024) return Status::invalid_argument("miss_read_pages must be in 64..1024");
  if (commit_interval_ms > 3'600'000) return Status::invalid_argument("commit_interval_ms is at most an hour (3600000)");
  if (write_back_piece_bytes == 0) return Status::invalid_argument("write_back_piece_bytes must be positive");
  if (write_back_drain_batch_bytes == 0) return Status::invalid_argument("write_back_drain_batch_bytes must be positive");
  if (write_back_drain_sync_bytes == 0) return Status::invalid_argument("write_back_drain_sync_bytes must be positive");
  if (write_back_delay_ms > 3'600'000) return Status::invalid_argument("write_back_delay_ms is at most an hour (3600000)");
  return Status::ok();
}

std::string EngineOptions::to_json() const {
  nlohmann::json json = {
      {"write_mode", write_mode_name(write_mode)},
      {"metadata", metadata_scheme_name(metadata)},
      {"read_ahead_pages", read_ahead_pages},
      {"miss_read_pages", miss_read_pages},
      {"read_sequential_cutoff_bytes", read_sequential_cutoff_bytes},
      {"write_sequential_cutoff_bytes", write_sequential_cutoff_bytes},
      {"promote_after_misses", promote_after_misses},
      {"promotion_table_entries", promotion_table_entries},
      {"dirty_high_watermark_percent", dirty_high_watermark_percent},
      {"dirty_low_watermark_percent", dirty_low_watermark_percent},
      {"flush_batch_pages", flush_batch_pages},
      {"write_back_stream_bytes", write_back_stream_bytes},
      {"write_back_piece_bytes", write_back_piece_bytes},
      {"write_back_drain_batch_bytes", write_back_drain_batch_bytes},
      {"write_back_drain_sync_bytes", write_back_drain_sync_bytes},
      {"write_back_delay_ms", write_back_delay_ms},
      {"store_writes_behind", store_writes_behind},
      {"commit_interval_ms", commit_interval_ms},
      {"commit_pending_bytes", commit_pending_bytes},
      {"identity", identity ? identity_rule_name(*identity) : "auto"},
  };
  return json.dump();
}

}  // namespace flashdir::cache
