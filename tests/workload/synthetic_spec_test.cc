#include <catch2/catch.hpp>

#include "flashdir/sim/workload.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

std::string parse_error(std::string_view text) {
  const auto spec = parse_synthetic(text);
  if (spec.is_ok()) return "(parsed without error)";
  CHECK(spec.status().code() == StatusCode::invalid_argument);
  return spec.status().message();
}

SyntheticSpec valid_spec() {
  SyntheticSpec spec;
  spec.working_set_bytes = 1 << 20;
  spec.request_count = 10;
  return spec;
}

std::string validation_error(void (*change)(SyntheticSpec&)) {
  SyntheticSpec spec = valid_spec();
  change(spec);
  const Status status = validate(spec);
  if (status.is_ok()) return "(valid)";
  return status.message();
}

}  // namespace

TEST_CASE("parse_synthetic reads the documented example", "[workload][synthetic][spec]") {
  const auto spec = parse_synthetic("zipf:0.99,read=0.7,ws=1G,size=4K,count=100000,seed=7");
  INFO(spec.status().to_string());
  REQUIRE(spec.is_ok());
  CHECK(spec->pattern == SyntheticSpec::Pattern::zipf);
  CHECK(spec->zipf_theta == 0.99);
  CHECK(spec->read_ratio == 0.7);
  CHECK(spec->working_set_bytes == std::uint64_t{1} << 30);
  CHECK(spec->request_bytes == 4096);
  CHECK(spec->request_count == 100'000);
  CHECK(spec->seed == 7);
  CHECK(spec->alignment_bytes == 4096);  // defaults for what is not given
  CHECK(spec->interarrival_ns == 0);
}

TEST_CASE("patterns, defaults and every key", "[workload][synthetic][spec]") {
  CHECK(parse_synthetic("uniform,ws=1M,count=1")->pattern == SyntheticSpec::Pattern::uniform);
  CHECK(parse_synthetic("seq,ws=1M,count=1")->pattern == SyntheticSpec::Pattern::sequential);
  CHECK(parse_synthetic("sequential,ws=1M,count=1")->pattern == SyntheticSpec::Pattern::sequential);
  const auto zipf = parse_synthetic("zipf,ws=1M,count=1");
  CHECK(zipf->zipf_theta == 0.99);  // YCSB's default
  CHECK(zipf->seed == 1);
  CHECK(zipf->read_ratio == 0.5);

  const auto all = parse_synthetic(
      " seq , ws=64M, size=16K ,align=8K,count=5,read=1,interarrival=10us,seed=0x10 ");
  INFO(all.status().to_string());
  REQUIRE(all.is_ok());
  CHECK(all->working_set_bytes == 64ULL << 20);
  CHECK(all->request_bytes == 16384);
  CHECK(all->alignment_bytes == 8192);
  CHECK(all->request_count == 5);
  CHECK(all->read_ratio == 1.0);
  CHECK(all->interarrival_ns == 10'000);
  CHECK(all->seed == 16);

  CHECK(parse_synthetic("uniform,ws=1M,count=1,interarrival=250")->interarrival_ns == 250);
  CHECK(parse_synthetic("uniform,ws=1M,count=1,interarrival=2ms")->interarrival_ns == 2'000'000);
  CHECK(parse_synthetic("uniform,ws=1M,count=1,interarrival=1s")->interarrival_ns == 1'000'000'000);
}

TEST_CASE("to_string round-trips through parse_synthetic", "[workload][synthetic][spec]") {
  SyntheticSpec spec = valid_spec();
  spec.pattern = SyntheticSpec::Pattern::zipf;
  spec.zipf_theta = 0.8;
  spec.read_ratio = 0.123456789;
  spec.working_set_bytes = (3ULL << 30) + 4096;
  spec.request_bytes = 12288;
  spec.alignment_bytes = 512;
  spec.interarrival_ns = 1500;
  spec.seed = 0xdeadbeefcafe;
  const std::string text = to_string(spec);
  CHECK(text ==
        "zipf:0.8,read=0.123456789,ws=3145732K,size=12K,count=10,align=512,interarrival=1500ns,"
        "seed=244837814094590");
  const auto again = parse_synthetic(text);
  REQUIRE(again.is_ok());
  CHECK(again.value() == spec);

  SyntheticSpec seq = valid_spec();
  seq.pattern = SyntheticSpec::Pattern::sequential;
  seq.interarrival_ns = 3'000'000;
  CHECK(to_string(seq) == "seq,read=0.5,ws=1M,size=4K,count=10,align=4K,interarrival=3ms,seed=1");
  CHECK(parse_synthetic(to_string(seq)).value() == seq);
}

TEST_CASE("parse_synthetic errors say what is wrong", "[workload][synthetic][spec]") {
  const std::string prefix = "synthetic workload '";
  CHECK(parse_error("") == prefix + "': no pattern (expected e.g. 'zipf:0.99,ws=1G,count=100000')");
  CHECK(parse_error("pareto,ws=1M,count=1") ==
        prefix + "pareto,ws=1M,count=1': unknown pattern 'pareto' (expected uniform, zipf[:THETA] or seq)");
  CHECK_THAT(parse_error("uniform:0.5,ws=1M,count=1"), Catch::EndsWith("pattern 'uniform' takes no parameter"));
  CHECK_THAT(parse_error("zipf:hot,ws=1M,count=1"), Catch::EndsWith("zipf theta 'hot' is not a number"));
  CHECK_THAT(parse_error("zipf:-1,ws=1M,count=1"), Catch::EndsWith("zipf:-1: theta must be between 0 and 10"));
  CHECK_THAT(parse_error("zipf:11,ws=1M,count=1"), Catch::EndsWith("zipf:11: theta must be between 0 and 10"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,read"), Catch::EndsWith("option 'read' is not KEY=VALUE"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,reads=0.5"),
             Catch::EndsWith("unknown option 'reads' (expected one of read, ws, size, count, align, "
                             "interarrival, seed)"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,ws=2M"), Catch::EndsWith("option 'ws' is given twice"));
  CHECK_THAT(parse_error("uniform,count=1"), Catch::EndsWith("missing ws=SIZE (the working set)"));
  CHECK_THAT(parse_error("uniform,ws=1M"), Catch::EndsWith("missing count=N (the number of requests)"));
  CHECK_THAT(parse_error("uniform,ws=1X,count=1"), Catch::Contains("ws=1X: size '1X' has an unknown unit"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=lots"),
             Catch::Contains("count=lots: invalid request count 'lots' (expected a whole number)"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,read=most"),
             Catch::Contains("read=most: read ratio 'most' is not a number"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,read=1.5"),
             Catch::EndsWith("read=1.5: read ratio must be between 0 and 1"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,seed=0xfoo"), Catch::Contains("invalid seed '0xfoo'"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=1,interarrival=5min"),
             Catch::Contains("interarrival=5min: time '5min' is not a whole number"));
  CHECK_THAT(parse_error("uniform,ws=4K,size=8K,count=1"),
             Catch::EndsWith("size=8K: request size is larger than the working set (ws=4K)"));
  CHECK_THAT(parse_error("uniform,ws=1M,count=0"), Catch::EndsWith("count=0: request count must be positive"));
}

TEST_CASE("validate names the bad field", "[workload][synthetic][spec]") {
  CHECK(validate(valid_spec()).is_ok());
  CHECK(validation_error([](SyntheticSpec& s) { s.working_set_bytes = 0; }) ==
        "ws=0: working set must be positive");
  CHECK(validation_error([](SyntheticSpec& s) { s.request_bytes = 0; }) ==
        "size=0: request size must be positive");
  CHECK(validation_error([](SyntheticSpec& s) { s.alignment_bytes = 0; }) ==
        "align=0: alignment must be positive");
  CHECK(validation_error([](SyntheticSpec& s) { s.request_count = 0; }) ==
        "count=0: request count must be positive");
  CHECK(validation_error([](SyntheticSpec& s) { s.read_ratio = -0.1; }) ==
        "read=-0.1: read ratio must be between 0 and 1");
  CHECK(validation_error([](SyntheticSpec& s) { s.read_ratio = std::nan(""); }) ==
        "read=nan: read ratio must be between 0 and 1");
  CHECK(validation_error([](SyntheticSpec& s) {
          s.pattern = SyntheticSpec::Pattern::zipf;
          s.zipf_theta = std::numeric_limits<double>::infinity();
        }) == "zipf:inf: theta must be between 0 and 10");
  // theta only matters for zipf.
  CHECK(validation_error([](SyntheticSpec& s) { s.zipf_theta = -5; }) == "(valid)");
  CHECK(validation_error([](SyntheticSpec& s) {
          s.request_count = 3;
          s.interarrival_ns = std::numeric_limits<std::uint64_t>::max() / 2 + 1;
        }) == "interarrival=9223372036854775808ns: the last of count=3 requests would arrive beyond 2^64 ns");
}
