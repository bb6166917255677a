// Internal to src/check: reports list at most `limit` messages of a kind and count the rest.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace flashdir {

// Appends `message` to `lines` unless `listed` already reached the limit (counted either way).
inline void list(std::vector<std::string>& lines, std::size_t& listed, std::size_t limit, std::string message) {
  if (listed++ < limit) lines.push_back(std::move(message));
}

}  // namespace flashdir
