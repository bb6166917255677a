// Lines of a text stream, read in large chunks and handed out as views: istream's getline
// copies every line into a string, which dominates the cost of loading a large trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string_view>

#include "flashdir/status.h"

namespace flashdir::sim::detail {

class LineReader {
 public:
  // A line longer than this is an error rather than a reason to buffer a whole binary file.
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;

  explicit LineReader(std::istream& in);

  // The next line without its "\n" or "\r\n"; nullopt at the end of the input or on an error
  // (then status() says which). The view is valid until the next call. A last line without a
  // terminator is still a line.
  std::optional<std::string_view> next();
  // 1-based number of the line last returned.
  std::uint64_t line_number() const { return line_number_; }
  Status status() const { return status_; }

 private:
  // Moves the unread bytes to the front and appends what the stream has; false at the end.
  bool refill();

  std::istream& in_;
  // Not zeroed: only the bytes read are ever looked at, and zeroing a megabyte costs more than
  // parsing a small trace.
  std::unique_ptr<char[]> buffer_;
  std::size_t begin_ = 0;  // first unread byte
  std::size_t end_ = 0;    // one past the last byte read from the stream
  bool at_end_ = false;
  std::uint64_t line_number_ = 0;
  Status status_;
};

}  // namespace flashdir::sim::detail
