#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <mutex>
#include <thread>

#include "store.h"

namespace slowstore {

void Store::write_counts() const {
  if (counts_path.empty()) return;
  // The signal's thread and the unmount may write at once; one at a time keeps the file whole.
  static std::mutex writing;
  const std::lock_guard lock(writing);
  const std::string aside = counts_path + ".tmp";
  FILE* out = std::fopen(aside.c_str(), "w");
  if (out == nullptr) return;
  std::fputs(counts.json(static_cast<std::uint64_t>(latency.round_trip_time().count())).c_str(), out);
  if (std::fclose(out) == 0) std::rename(aside.c_str(), counts_path.c_str());
}

void write_counts_on_sigusr1(const Store& store) {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  // Detached: it waits for signals until the process ends.
  std::thread([&store, usr1] {
    int received = 0;
    while (sigwait(&usr1, &received) == 0) store.write_counts();
  }).detach();
}

}  // namespace slowstore
