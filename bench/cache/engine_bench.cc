// The cache engine without FUSE against pread/pwrite of a plain file on the same disk, in one
// run (issue 9): cached 4 KiB random and 1 MiB sequential reads with 1 and 2 threads, 4 KiB
// random misses, and 4 KiB random and 1 MiB sequential writes in each write mode. Each
// workload runs on the engine and on the plain file; the run ends with a table of the
// engine's rate and CPU time against the plain file's (bench/README.md discusses one).
//
// Everything lives in one directory on one disk (FLASHDIR_BENCH_DIR, default /var/tmp): the
// backing directory, whose files are the plain files the baseline reads and writes, and the
// cache directories, whose chip images the engine reads and writes. Both go through the host's
// page cache, so the ratio is the engine's own cost (index, FTL, chip image, checksums, locks)
// over a page-cache pread of the same bytes. The chip's latency is only accounted (the daemon's
// default, nand_latency=account).
//
//   build/bench/cache-engine-bench        env: FLASHDIR_BENCH_DIR (/var/tmp),
//                                              FLASHDIR_BENCH_FILE_MIB (64: the file each workload uses)
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "flashdir/cache/engine.h"
#include "flashdir/cache_dir.h"
#include "flashdir/random.h"

using namespace flashdir;

namespace {

constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kMiB = 1 << 20;
// The plain file's rows are named by this subject; every other subject is compared with it.
constexpr const char* kBaseline = "plain_file";

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "cache-engine-bench: %s\n", message.c_str());
  std::exit(1);
}
[[noreturn]] void die(const std::string& what, const Status& status) { die(what + ": " + status.to_string()); }
[[noreturn]] void die_errno(const std::string& what) { die(what + ": " + std::strerror(errno)); }

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

// A file of `bytes` bytes, none of them a hole, written through the host's page cache (where it
// stays: the machine has the memory).
void write_file(const std::filesystem::path& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die_errno("creating " + path.string());
  std::vector<std::uint8_t> chunk(kMiB);
  for (std::uint64_t at = 0; at < bytes; at += kMiB) {
    for (std::size_t i = 0; i < chunk.size(); i += 8) chunk[i] = static_cast<std::uint8_t>((at + i) >> 12 | 1);
    if (::pwrite(fd, chunk.data(), chunk.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(chunk.size()))
      die_errno("writing " + path.string());
  }
  ::close(fd);
}

// A cache directory of `capacity_bytes` formatted under the bench directory and mounted over the
// backing directory, with a file of it open through the engine.
class BenchCache {
 public:
  BenchCache(const std::filesystem::path& dir, const std::filesystem::path& backing_dir, std::uint64_t capacity_bytes,
             const cache::EngineOptions& options, const std::string& file) {
    FormatOptions format;
    format.capacity_bytes = capacity_bytes;
    if (auto formatted = format_cache_dir(dir, format); !formatted.is_ok())
      die("formatting " + dir.string(), formatted.status());
    auto backing = cache::open_posix_backing_store(backing_dir);
    if (!backing.is_ok()) die("opening " + backing_dir.string(), backing.status());
    auto mounted = cache::MountedCache::open(dir, std::move(backing).value(), options);
    if (!mounted.is_ok()) die("opening the cache " + dir.string(), mounted.status());
    mounted_ = std::move(mounted).value();
    auto handle = engine().open_file(file);
    if (!handle.is_ok()) die("opening " + file + " through the engine", handle.status());
    file_ = *handle;
  }
  ~BenchCache() {
    if (Status s = engine().release(file_); !s.is_ok()) die("releasing the bench file", s);
    if (Status s = mounted_->close(); !s.is_ok()) die("closing the cache", s);
  }
  cache::Engine& engine() { return mounted_->engine(); }
  cache::FileHandle file() const { return file_; }

 private:
  std::unique_ptr<cache::MountedCache> mounted_;
  cache::FileHandle file_;
};

// What a workload reads or writes: the engine's file or the plain file.
class Subject {
 public:
  virtual ~Subject() = default;
  virtual void read(std::uint64_t offset, ByteSpan out) = 0;
  virtual void write(std::uint64_t offset, ConstByteSpan data) = 0;
  // The engine's counters, for the rows that show them; nullptr for the plain file.
  virtual const cache::Engine* engine() const { return nullptr; }
};

class PlainFile final : public Subject {
 public:
  explicit PlainFile(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {
    if (fd_ < 0) die_errno("opening " + path.string());
  }
  ~PlainFile() override { ::close(fd_); }
  void read(std::uint64_t offset, ByteSpan out) override {
    if (::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset)) != static_cast<ssize_t>(out.size()))
      die_errno("pread");
  }
  void write(std::uint64_t offset, ConstByteSpan data) override {
    if (::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset)) != static_cast<ssize_t>(data.size()))
      die_errno("pwrite");
  }

 private:
  int fd_;
};

class EngineFile final : public Subject {
 public:
  explicit EngineFile(std::unique_ptr<BenchCache> cache) : cache_(std::move(cache)) {}
  void read(std::uint64_t offset, ByteSpan out) override {
    auto got = cache_->engine().read(cache_->file(), offset, out);
    if (!got.is_ok()) die("engine read", got.status());
  }
  void write(std::uint64_t offset, ConstByteSpan data) override {
    auto put = cache_->engine().write(cache_->file(), offset, data);
    if (!put.is_ok()) die("engine write", put.status());
  }
  const cache::Engine* engine() const override { return &cache_->engine(); }

 private:
  std::unique_ptr<BenchCache> cache_;
};

enum class Warmth { filled, all_cached };

// Reads the whole file once, 1 MiB at a time; for all_cached, twice, the second pass hitting
// every page.
void warm(Subject& subject, std::uint64_t file_bytes, Warmth warmth) {
  std::vector<std::uint8_t> buffer(kMiB);
  for (std::uint64_t at = 0; at < file_bytes; at += kMiB) subject.read(at, buffer);
  if (warmth != Warmth::all_cached) return;
  const std::uint64_t misses = subject.engine()->stats().read_miss_pages;
  for (std::uint64_t at = 0; at < file_bytes; at += kMiB) subject.read(at, buffer);
  const std::uint64_t missed = subject.engine()->stats().read_miss_pages - misses;
  if (missed != 0) die("the cache is not warm: " + std::to_string(missed) + " pages missed on a second full read");
}

enum class Pattern { random, sequential };

struct Workload {
  std::string name;
  Pattern pattern;
  std::uint64_t request_bytes;
  bool writes;
};

// Every run of every thread draws its own offsets: a run that replayed the offsets of an
// earlier one would find its pages as that run left them (admitted, dropped or rewritten).
std::atomic<std::uint64_t> next_seed{0x5eed};

// Runs `workload` on `subject` over a file of `file_bytes`: random requests, or a sequential
// stream from a random start, wrapping at the end of the file.
void run(benchmark::State& state, const Workload& workload, Subject& subject, std::uint64_t file_bytes) {
  std::vector<std::uint8_t> buffer(workload.request_bytes, static_cast<std::uint8_t>(0x40 + state.thread_index()));
  const std::uint64_t requests_in_file = file_bytes / workload.request_bytes;
  SeededRandom random(next_seed++);
  std::uint64_t next = random.uniform(requests_in_file);
  const cache::Engine* engine = subject.engine();
  const cache::EngineStats before =
      engine != nullptr && state.thread_index() == 0 ? engine->stats() : cache::EngineStats{};
  for (auto _ : state) {
    const std::uint64_t request =
        workload.pattern == Pattern::random ? random.uniform(requests_in_file) : next++ % requests_in_file;
    if (workload.writes) {
      subject.write(request * workload.request_bytes, buffer);
    } else {
      subject.read(request * workload.request_bytes, buffer);
      benchmark::DoNotOptimize(buffer.data());
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * workload.request_bytes));
  if (engine == nullptr || state.thread_index() != 0) return;
  // Thread 0 reports for all threads (counters add up over threads): the loop's start and end
  // are barriers, so these deltas cover exactly the timed requests.
  const cache::EngineStats after = engine->stats();
  if (!workload.writes) {
    const double hits = static_cast<double>(after.read_hit_pages - before.read_hit_pages);
    const double misses = static_cast<double>(after.read_miss_pages - before.read_miss_pages);
    state.counters["hit_ratio"] = hits + misses > 0 ? hits / (hits + misses) : 0;
  } else {
    state.counters["written_back_pages"] = static_cast<double>(after.written_back_pages - before.written_back_pages);
    state.counters["writer_waits"] = static_cast<double>(after.writer_waits - before.writer_waits);
  }
}

// The console output, then a table of each subject against the plain file for the same
// workload and thread count: the ratio of rates (wall clock), and the plain file's CPU time per
// request over the subject's (the benchmark threads' CPU only: the write-back flusher's is not
// in it). On a machine shared with other work the CPU ratio is the steadier of the two.
class RatioReporter final : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      // With --benchmark_repetitions the median, which comes after the repetitions, replaces them.
      if (run.error_occurred || (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median")) continue;
      const std::string& name = run.run_name.function_name;  // "workload/subject"
      const std::size_t slash = name.rfind('/');
      const auto rate = run.counters.find("bytes_per_second");
      if (slash == std::string::npos || rate == run.counters.end()) continue;
      const std::string row = name.substr(0, slash) + " x" + std::to_string(run.threads);
      results_[row][name.substr(slash + 1)] = {rate->second.value, run.GetAdjustedCPUTime()};
    }
  }
  void Finalize() override {
    std::ostream& out = GetOutputStream();
    out << "\n| workload x threads | subject | MiB/s | plain file MiB/s | rate ratio | CPU ratio |\n"
           "|---|---|---|---|---|---|\n";
    for (const auto& [row, subjects] : results_) {
      const auto baseline = subjects.find(kBaseline);
      if (baseline == subjects.end()) continue;
      for (const auto& [subject, result] : subjects) {
        if (subject == kBaseline) continue;
        char line[256];
        std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.1f | %.2f | %.2f |\n", row.c_str(), subject.c_str(),
                      result.bytes_per_second / kMiB, baseline->second.bytes_per_second / kMiB,
                      result.bytes_per_second / baseline->second.bytes_per_second,
                      baseline->second.cpu_per_request / result.cpu_per_request);
        out << line;
      }
    }
    ConsoleReporter::Finalize();
  }

 private:
  struct Result {
    double bytes_per_second = 0;
    double cpu_per_request = 0;
  };
  std::map<std::string, std::map<std::string, Result>> results_;  // row -> subject -> result
};

// A subject made on first use, so that a run filtered to a few benchmarks sets up only theirs.
// The first thread of the first benchmark that needs it makes it; the others wait (untimed).
class LazySubject {
 public:
  explicit LazySubject(std::function<std::unique_ptr<Subject>()> make) : make_(std::move(make)) {}
  Subject& get() {
    std::call_once(made_, [this] { subject_ = make_(); });
    return *subject_;
  }

 private:
  std::function<std::unique_ptr<Subject>()> make_;
  std::once_flag made_;
  std::unique_ptr<Subject> subject_;
};

// The bench's directory: files, caches and their subjects, removed at the end.
class BenchSetup {
 public:
  BenchSetup() {
    const char* parent = std::getenv("FLASHDIR_BENCH_DIR");
    std::string pattern =
        (std::filesystem::path(parent != nullptr ? parent : "/var/tmp") / "flashdir-engine-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) die_errno("creating the bench directory " + pattern);
    dir_ = pattern;
    backing_ = dir_ / "backing";
    std::filesystem::create_directory(backing_);
  }
  ~BenchSetup() {
    subjects_.clear();
    std::filesystem::remove_all(dir_);
  }

  // A plain file `name` of `bytes`, read and written directly.
  LazySubject& plain(const std::string& name, std::uint64_t bytes) {
    return add([this, name, bytes] {
      write_file(backing_ / name, bytes);
      auto subject = std::make_unique<PlainFile>(backing_ / name);
      warm(*subject, bytes, Warmth::filled);
      return subject;
    });
  }
  // A file `name` of `bytes` read and written through an engine over a new cache of
  // `capacity_bytes`.
  LazySubject& cached(const std::string& name, std::uint64_t bytes, std::uint64_t capacity_bytes,
                      const cache::EngineOptions& options, Warmth warmth) {
    return add([this, name, bytes, capacity_bytes, options, warmth] {
      write_file(backing_ / name, bytes);
      auto subject = std::make_unique<EngineFile>(
          std::make_unique<BenchCache>(dir_ / ("cache." + name), backing_, capacity_bytes, options, name));
      warm(*subject, bytes, warmth);
      return subject;
    });
  }

 private:
  LazySubject& add(std::function<std::unique_ptr<Subject>()> make) {
    subjects_.push_back(std::make_unique<LazySubject>(std::move(make)));
    return *subjects_.back();
  }

  std::filesystem::path dir_;
  std::filesystem::path backing_;
  std::vector<std::unique_ptr<LazySubject>> subjects_;
};

void add_benchmark(const Workload& workload, const std::string& subject_name, LazySubject& subject,
                   std::uint64_t file_bytes, std::vector<int> thread_counts) {
  auto* bench = benchmark::RegisterBenchmark(
      (workload.name + "/" + subject_name).c_str(),
      [workload, &subject, file_bytes](benchmark::State& state) { run(state, workload, subject.get(), file_bytes); });
  for (int threads : thread_counts) bench->Threads(threads);
  bench->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::uint64_t file_bytes = env_or("FLASHDIR_BENCH_FILE_MIB", 64) * kMiB;
  BenchSetup setup;

  // Every stream is admitted: the benchmark measures the modes, not the cutoffs.
  cache::EngineOptions admit_all;
  admit_all.read_sequential_cutoff_bytes = 0;
  admit_all.write_sequential_cutoff_bytes = 0;
  // Room for the whole file twice over: reads hit; write-back passes its high watermark (half
  // the cache) within one pass over the file, so the flusher works while writes are timed.
  const std::uint64_t cache_bytes = 2 * file_bytes;

  const Workload random_read{"cached_read_4k_random", Pattern::random, kPageBytes, false};
  const Workload sequential_read{"cached_read_1m_sequential", Pattern::sequential, kMiB, false};
  LazySubject& plain_reads = setup.plain("reads.plain", file_bytes);
  LazySubject& engine_reads = setup.cached("reads.cached", file_bytes, cache_bytes, admit_all, Warmth::all_cached);
  for (const Workload& w : {random_read, sequential_read}) {
    add_benchmark(w, kBaseline, plain_reads, file_bytes, {1, 2});
    add_benchmark(w, "engine", engine_reads, file_bytes, {1, 2});
  }

  // Misses: random pages of a file four times the size of the smallest cache (most reads miss,
  // each admitted and evicting; the hit_ratio column says how many), with no read-ahead so that a miss reads what pread
  // reads.
  const Workload random_miss{"miss_read_4k_random", Pattern::random, kPageBytes, false};
  const std::uint64_t small_cache_bytes =
      kMinimumCacheBlocks * Geometry::kDefaultPagesPerBlock * Geometry::kDefaultPageSizeBytes;
  cache::EngineOptions no_read_ahead = admit_all;
  no_read_ahead.read_ahead_pages = 0;
  add_benchmark(random_miss, kBaseline, setup.plain("misses.plain", 4 * small_cache_bytes), 4 * small_cache_bytes, {1});
  add_benchmark(random_miss, "engine",
                setup.cached("misses.cached", 4 * small_cache_bytes, small_cache_bytes, no_read_ahead, Warmth::filled),
                4 * small_cache_bytes, {1});

  // Writes: each workload and mode on a fresh cache whose file is all cached, so that no
  // measurement depends on what an earlier one left behind.
  const Workload random_write{"write_4k_random", Pattern::random, kPageBytes, true};
  const Workload sequential_write{"write_1m_sequential", Pattern::sequential, kMiB, true};
  for (const Workload& w : {random_write, sequential_write}) {
    add_benchmark(w, kBaseline, setup.plain(w.name + ".plain", file_bytes), file_bytes, {1});
    for (cache::WriteMode mode :
         {cache::WriteMode::write_through, cache::WriteMode::write_back, cache::WriteMode::write_around}) {
      cache::EngineOptions options = admit_all;
      options.write_mode = mode;
      const std::string name(cache::write_mode_name(mode));
      add_benchmark(w, name, setup.cached(w.name + "." + name, file_bytes, cache_bytes, options, Warmth::all_cached),
                    file_bytes, {1});
    }
  }

  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
