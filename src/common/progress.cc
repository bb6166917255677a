#include "flashdir/progress.h"

#include <unistd.h>

#include <cstdio>

namespace flashdir {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::uint64_t min_total)
    : label_(std::move(label)), total_(total), enabled_(total >= min_total && total > 0 && ::isatty(STDERR_FILENO)) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_) return;
  const int percent = static_cast<int>(done * 100 / total_);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  constexpr int kWidth = 40;
  const int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%%", label_.c_str(), filled,
               "========================================", kWidth - filled, "", percent);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_) return;
  update(total_);
  std::fprintf(stderr, "\n");
  enabled_ = false;
}

}  // namespace flashdir
