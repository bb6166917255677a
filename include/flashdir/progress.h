// A one-line progress bar for the tools, drawn on stderr only when it is a terminal.
#pragma once

#include <cstdint>
#include <string>

namespace flashdir {

class ProgressBar {
 public:
  // Draws nothing unless stderr is a terminal and `total` reaches `min_total`.
  ProgressBar(std::string label, std::uint64_t total, std::uint64_t min_total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::uint64_t done);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  int last_percent_ = -1;
};

}  // namespace flashdir
