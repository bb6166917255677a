// Reference-model test of the chip under power cuts. A seeded workload of programs, erases
// and reads runs against the chip (through FaultyChip) and against a plain in-memory model
// that applies only what the chip acknowledged. After the cut the medium is reopened and must
// hold exactly the model's state, except the one operation in flight: a torn page must fail
// its checksum, a torn erase must leave garbage, a dropped operation must leave nothing.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <vector>

#include "flashdir/nand/faulty_chip.h"
#include "support/seed.h"
#include "support/test_chip.h"

using namespace flashdir;
using namespace flashdir::testing;

namespace {

class ChipModel {
 public:
  ChipModel(const Geometry& g, bool keeps_data)
      : g_(g),
        keeps_data_(keeps_data),
        next_page_(g.block_count),
        erase_count_(g.block_count),
        pages_(g.page_count()) {}

  std::uint32_t next_page(std::uint64_t block) const { return next_page_[block]; }
  std::uint32_t erase_count(std::uint64_t block) const { return erase_count_[block]; }
  const PageImage& page(Ppn p) const { return pages_[p.value]; }

  void program(Ppn first, const std::vector<PageImage>& run, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      const Ppn p = first + i;
      pages_[p.value] = run[i];
      if (!keeps_data_) std::fill(pages_[p.value].data.begin(), pages_[p.value].data.end(), 0);
      next_page_[g_.block_of(p).value] = g_.page_in_block(p) + 1;
    }
  }
  void erase(BlockNumber block) {
    next_page_[block.value] = 0;
    ++erase_count_[block.value];
  }

 private:
  Geometry g_;
  bool keeps_data_;
  std::vector<std::uint32_t> next_page_;
  std::vector<std::uint32_t> erase_count_;
  std::vector<PageImage> pages_;
};

struct Scenario {
  Backend backend = Backend::memory;
  Geometry geometry;
  std::uint64_t seed = 0;
  std::size_t workload_ops = 0;
  FaultPlan plan;
};

struct Outcome {
  bool cut = false;
  std::uint64_t chip_operations = 0;
  std::string mismatch;  // empty when the chip matched the model
};

bool page_verifies(NandChip& chip, Ppn page, format::OobRecord* record_out = nullptr) {
  const Geometry& g = chip.geometry();
  std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
  if (!chip.read(page, 1, data, oob).is_ok()) return false;
  auto record = format::decode_oob(oob);
  if (!record.is_ok()) return false;
  if (chip.stores_data() && format::xxh3(data) != record->data_hash) return false;
  if (record_out != nullptr) *record_out = record.value();
  return true;
}

std::string compare_block(NandChip& chip, const ChipModel& model, std::uint64_t b, std::uint32_t pages) {
  const Geometry& g = chip.geometry();
  for (std::uint32_t i = 0; i < pages; ++i) {
    const Ppn p = g.page_at(BlockNumber(b), i);
    std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
    if (Status s = chip.read(p, 1, data, oob); !s.is_ok()) return s.to_string();
    if (data != model.page(p).data || oob != model.page(p).oob) {
      return fmt::format("page {} (block {}, page {}) differs from the model", p.value, b, i);
    }
  }
  return {};
}

std::string verify(NandChip& chip, const ChipModel& model, const CutReport& cut, const PageImage& in_flight) {
  const Geometry& g = chip.geometry();
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    const BlockNumber block(b);
    const bool in_flight_block = cut.operation != CutReport::Operation::read && cut.block == block;
    std::uint32_t expected_next = model.next_page(b);
    std::uint32_t expected_erases = model.erase_count(b);
    if (in_flight_block && cut.torn) {
      if (cut.operation == CutReport::Operation::program) {
        expected_next += 1;
      } else {
        expected_next = cut.torn_garbage_pages;
        expected_erases += 1;
      }
    }
    if (chip.next_page(block) != expected_next) {
      return fmt::format("block {}: {} pages programmed, expected {}", b, chip.next_page(block), expected_next);
    }
    if (chip.erase_count(block) != expected_erases) {
      return fmt::format("block {}: erase count {}, expected {}", b, chip.erase_count(block), expected_erases);
    }
    if (in_flight_block && cut.torn && cut.operation == CutReport::Operation::erase) {
      for (std::uint32_t i = 0; i < expected_next; ++i) {
        if (page_verifies(chip, g.page_at(block, i))) {
          return fmt::format("torn erase left an intact page {} in block {}", i, b);
        }
      }
      continue;
    }
    if (auto diff = compare_block(chip, model, b, model.next_page(b)); !diff.empty()) return diff;
    if (in_flight_block && cut.torn) {
      // Caught by its checksum, unless everything that matters landed before the cut.
      format::OobRecord record;
      if (page_verifies(chip, cut.page, &record) && record != format::decode_oob(in_flight.oob).value()) {
        return fmt::format("torn page {} verifies but holds a record that was never written", cut.page.value);
      }
    }
  }
  return {};
}

Outcome run(const Scenario& scenario) {
  TestChip test(scenario.backend, scenario.geometry);
  const Geometry& g = scenario.geometry;
  ChipModel model(g, test.chip().stores_data());
  FaultyChip chip(test.chip(), scenario.plan);
  SeededRandom random(scenario.seed);
  std::uint64_t sequence = 0;
  PageImage in_flight;
  Outcome outcome;

  for (std::size_t op = 0; op < scenario.workload_ops && !chip.power_lost(); ++op) {
    const std::uint64_t choice = random.uniform(10);
    const BlockNumber block(random.uniform(g.block_count));
    if (choice < 6 && model.next_page(block.value) < g.pages_per_block) {
      const std::uint32_t next = model.next_page(block.value);
      const auto count =
          static_cast<std::uint32_t>(random.between(1, std::min<std::uint32_t>(4, g.pages_per_block - next)));
      std::vector<PageImage> run;
      std::vector<std::uint8_t> data, oob;
      for (std::uint32_t i = 0; i < count; ++i) {
        run.push_back(random_page(g, random, ++sequence));
        const ConstByteSpan page_data = data_to_program(chip, run.back());
        data.insert(data.end(), page_data.begin(), page_data.end());
        oob.insert(oob.end(), run.back().oob.begin(), run.back().oob.end());
      }
      const Ppn first = g.page_at(block, next);
      const Status s = chip.program(first, count, data, oob);
      if (s.is_ok()) {
        model.program(first, run, count);
      } else if (s.code() == StatusCode::power_lost) {
        const std::size_t landed = chip.cut().page.value - first.value;
        model.program(first, run, landed);
        in_flight = run[landed];
      } else {
        outcome.mismatch = "program refused: " + s.to_string();
        return outcome;
      }
    } else if (choice < 8) {
      const Status s = chip.erase(block);
      if (s.is_ok()) {
        model.erase(block);
      } else if (s.code() != StatusCode::power_lost) {
        outcome.mismatch = "erase refused: " + s.to_string();
        return outcome;
      }
    } else {
      const Ppn first(random.uniform(g.page_count()));
      const auto count = static_cast<std::uint32_t>(
          random.between(1, std::min<std::uint64_t>(g.pages_per_block, g.page_count() - first.value)));
      std::vector<std::uint8_t> data(std::size_t{count} * g.page_size_bytes),
          oob(std::size_t{count} * g.oob_size_bytes);
      const Status s = chip.read(first, count, data, oob);
      if (s.is_ok()) {
        for (std::uint32_t i = 0; i < count; ++i) {
          const Ppn p = first + i;
          const bool programmed = g.page_in_block(p) < model.next_page(g.block_of(p).value);
          const ConstByteSpan got_data =
              ConstByteSpan(data).subspan(std::size_t{i} * g.page_size_bytes, g.page_size_bytes);
          const ConstByteSpan got_oob = ConstByteSpan(oob).subspan(std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes);
          const bool same = programmed ? std::equal(got_data.begin(), got_data.end(), model.page(p).data.begin()) &&
                                             std::equal(got_oob.begin(), got_oob.end(), model.page(p).oob.begin())
                                       : format::is_erased(got_data) && format::is_erased(got_oob);
          if (!same) {
            outcome.mismatch = fmt::format("read of page {} returned what the model does not hold", p.value);
            return outcome;
          }
        }
      } else if (s.code() != StatusCode::power_lost) {
        outcome.mismatch = "read refused: " + s.to_string();
        return outcome;
      }
    }
  }
  outcome.chip_operations = chip.operations();
  outcome.cut = chip.power_lost();
  if (!outcome.cut) return outcome;
  test.reopen();
  outcome.mismatch = verify(test.chip(), model, chip.cut(), in_flight);
  if (!outcome.mismatch.empty()) outcome.mismatch += " after " + chip.cut().describe();
  return outcome;
}

const Geometry kSmall{512, 64, 8, 6};

}  // namespace

TEST_CASE("power cut at every operation of a short sequence", "[nand][powercut]") {
  const Backend backend = GENERATE(from_range(std::begin(kAllBackends), std::end(kAllBackends)));
  const std::uint64_t seed = test_seed(20261122);
  Scenario scenario{backend, kSmall, seed, 60, {}};
  const Outcome uncut = run(scenario);
  REQUIRE(uncut.mismatch.empty());
  REQUIRE(uncut.chip_operations > 60);

  std::uint64_t cuts = 0;
  for (std::uint64_t cut_at = 0; cut_at < uncut.chip_operations; ++cut_at) {
    for (InFlight mode : {InFlight::torn, InFlight::dropped}) {
      scenario.plan = FaultPlan{};
      scenario.plan.seed = seed + cut_at;
      scenario.plan.cut_at_operation = cut_at;
      scenario.plan.in_flight = mode;
      const Outcome outcome = run(scenario);
      INFO("backend " << backend_label(backend) << ", seed " << seed << ", cut at operation " << cut_at
                      << (mode == InFlight::torn ? " (torn)" : " (dropped)") << "\nreplay: " << replay_command(seed));
      REQUIRE(outcome.cut);
      REQUIRE(outcome.mismatch == "");
      ++cuts;
    }
  }
  CHECK(cuts == 2 * uncut.chip_operations);
}

TEST_CASE("power cuts at random points of long sequences", "[nand][powercut]") {
  const Backend backend = GENERATE(from_range(std::begin(kAllBackends), std::end(kAllBackends)));
  const SeededRuns runs(7001);
  std::uint64_t cuts = 0;
  for (std::uint64_t i = 0; i < 100; ++i) {
    if (!runs.selected(i)) continue;
    const std::uint64_t seed = runs.seed(i);
    Scenario scenario{backend, {512, 64, 16, 12}, seed, 3000, {}};
    scenario.plan.seed = seed;
    scenario.plan.cut_one_in = 2000;
    const Outcome outcome = run(scenario);
    INFO("backend " << backend_label(backend) << ", seed " << seed << "\nreplay: " << runs.replay_command(i));
    REQUIRE(outcome.mismatch == "");
    cuts += outcome.cut ? 1 : 0;
  }
  if (runs.all_selected()) CHECK(cuts >= 60);  // a cut is due every ~2000 of ~7000 operations: nearly every run
}
