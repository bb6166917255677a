#include "line_reader.h"

#include <cstring>
#include <fmt/format.h>

#include "text_fields.h"

namespace flashdir::sim::detail {
namespace {

constexpr std::size_t kBufferBytes = (std::size_t{1} << 20) + LineReader::kMaxLineBytes;

Status too_long(std::uint64_t line_number, std::string_view line) {
  return Status::invalid_argument(fmt::format("line {} is longer than {} bytes (is this a text trace?): '{}'",
                                              line_number, LineReader::kMaxLineBytes, excerpt(line)));
}

}  // namespace

LineReader::LineReader(std::istream& in) : in_(in), buffer_(std::make_unique_for_overwrite<char[]>(kBufferBytes)) {}

std::optional<std::string_view> LineReader::next() {
  if (!status_.is_ok()) return std::nullopt;
  while (true) {
    const char* start = buffer_.get() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    std::size_t length = 0;
    if (newline != nullptr) {
      length = static_cast<std::size_t>(newline - start);
      begin_ += length + 1;
    } else if (end_ - begin_ > kMaxLineBytes) {
      status_ = too_long(line_number_ + 1, std::string_view(start, end_ - begin_));
      return std::nullopt;
    } else if (refill()) {
      continue;
    } else if (!status_.is_ok() || begin_ == end_) {
      return std::nullopt;
    } else {
      length = end_ - begin_;  // the last line has no terminator
      begin_ = end_;
    }
    ++line_number_;
    std::string_view line(start, length);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (length > kMaxLineBytes) {
      status_ = too_long(line_number_, line);
      return std::nullopt;
    }
    return line;
  }
}

bool LineReader::refill() {
  if (at_end_) return false;
  const std::size_t unread = end_ - begin_;
  std::memmove(buffer_.get(), buffer_.get() + begin_, unread);
  begin_ = 0;
  end_ = unread;
  in_.read(buffer_.get() + end_, static_cast<std::streamsize>(kBufferBytes - end_));
  const auto got = static_cast<std::size_t>(in_.gcount());
  end_ += got;
  if (in_.bad()) {
    status_ = Status::io_error(fmt::format("reading line {} failed", line_number_ + 1));
    return false;
  }
  if (in_.eof() || got == 0) at_end_ = true;
  return got > 0;
}

}  // namespace flashdir::sim::detail

