// SyntheticGenerator and generate(). Three independent random streams, all derived from the
// spec's seed: addresses, read/write choices and the rank permutation. Keeping them apart
// means that changing read= leaves the addresses as they were, and the other way round, so two
// runs that differ in one knob stay comparable request by request.
#include <fmt/format.h>

#include "flashdir/random.h"
#include "slot_permutation.h"
#include "trace_layout.h"
#include "zipf_sampler.h"

namespace flashdir::sim {

struct SyntheticGenerator::State {
  explicit State(const SyntheticSpec& s, std::uint64_t slots, SeededRandom& seeds)
      : spec(s),
        slot_count(slots),
        address_random(seeds.next_u64()),
        op_random(seeds.next_u64()),
        permutation(slots, seeds.next_u64()),
        zipf(slots, s.pattern == SyntheticSpec::Pattern::zipf ? s.zipf_theta : 0.0) {}

  std::uint64_t next_slot() {
    switch (spec.pattern) {
      case SyntheticSpec::Pattern::uniform: return address_random.uniform(slot_count);
      case SyntheticSpec::Pattern::zipf: return permutation(zipf.sample(address_random) - 1);
      case SyntheticSpec::Pattern::sequential: {
        const std::uint64_t slot = sequential_slot;
        // The next request starts at the first slot at or after this one's end.
        const std::uint64_t step = (spec.request_bytes + spec.alignment_bytes - 1) / spec.alignment_bytes;
        sequential_slot = step >= slot_count - slot ? 0 : slot + step;
        return slot;
      }
    }
    return 0;
  }

  SyntheticSpec spec;
  std::uint64_t slot_count;
  SeededRandom address_random;
  SeededRandom op_random;
  detail::SlotPermutation permutation;
  detail::ZipfSampler zipf;
  std::uint64_t produced = 0;
  std::uint64_t sequential_slot = 0;
};

Result<SyntheticGenerator> SyntheticGenerator::create(const SyntheticSpec& spec) {
  FLASHDIR_TRY(validate(spec));
  // Slots are the aligned offsets at which a whole request fits inside the working set.
  const std::uint64_t slots = (spec.working_set_bytes - spec.request_bytes) / spec.alignment_bytes + 1;
  SeededRandom seeds(spec.seed);
  return SyntheticGenerator(std::make_unique<State>(spec, slots, seeds));
}

SyntheticGenerator::SyntheticGenerator(std::unique_ptr<State> state) : state_(std::move(state)) {}
SyntheticGenerator::SyntheticGenerator(SyntheticGenerator&&) noexcept = default;
SyntheticGenerator& SyntheticGenerator::operator=(SyntheticGenerator&&) noexcept = default;
SyntheticGenerator::~SyntheticGenerator() = default;

std::optional<IoRequest> SyntheticGenerator::next() {
  State& s = *state_;
  if (s.produced == s.spec.request_count) return std::nullopt;
  IoRequest request;
  request.arrival_ns = s.produced * s.spec.interarrival_ns;  // validate() ruled out overflow
  // unit() < 1 always, so read=1 gives only reads and read=0 only writes.
  request.op = s.op_random.unit() < s.spec.read_ratio ? IoRequest::Op::read : IoRequest::Op::write;
  request.device = 0;
  request.offset_bytes = s.next_slot() * s.spec.alignment_bytes;
  request.size_bytes = s.spec.request_bytes;
  ++s.produced;
  return request;
}

std::uint64_t SyntheticGenerator::remaining() const { return state_->spec.request_count - state_->produced; }

std::uint64_t SyntheticGenerator::slot_count() const { return state_->slot_count; }

Result<Trace> generate(const SyntheticSpec& spec) {
  auto generator = SyntheticGenerator::create(spec);
  if (!generator.is_ok()) return generator.status();
  if (spec.request_count > kMaxGeneratedRequests) {
    return Status::invalid_argument(fmt::format(
        "count={}: more than {} requests do not fit a trace in memory; stream them with "
        "SyntheticGenerator",
        spec.request_count, kMaxGeneratedRequests));
  }
  Trace trace;
  trace.source = to_string(spec);
  trace.format = "synthetic";
  trace.requests.reserve(spec.request_count);
  while (const auto request = generator->next()) trace.requests.push_back(*request);
  FLASHDIR_TRY(detail::lay_out_devices(trace, false));
  detail::summarise(trace);
  return trace;
}

}  // namespace flashdir::sim
