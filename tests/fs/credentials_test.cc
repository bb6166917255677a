#include "fs/credentials.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

using flashdir::fs::supplementary_groups_of;

namespace {
std::vector<gid_t> own_groups() {
  std::vector<gid_t> groups(static_cast<std::size_t>(::getgroups(0, nullptr)));
  groups.resize(static_cast<std::size_t>(::getgroups(static_cast<int>(groups.size()), groups.data())));
  std::sort(groups.begin(), groups.end());
  return groups;
}
}  // namespace

TEST_CASE("a thread's supplementary groups are read from /proc, also for a thread that is not the main one") {
  auto main_thread = supplementary_groups_of(::gettid());
  std::sort(main_thread.begin(), main_thread.end());
  CHECK(main_thread == own_groups());

  std::vector<gid_t> worker;
  std::thread([&] { worker = supplementary_groups_of(::gettid()); }).join();
  std::sort(worker.begin(), worker.end());
  CHECK(worker == own_groups());
}

TEST_CASE("a thread that does not exist has no groups") {
  CHECK(supplementary_groups_of(-1).empty());
}
