#include <catch2/catch.hpp>

#include "trace_text.h"

using namespace flashdir;
using namespace flashdir::sim;
using flashdir::sim::testing::parse_text;
using flashdir::sim::testing::unfolded;
using Op = IoRequest::Op;

TEST_CASE("DiskSim lines parse to exact requests", "[workload][trace]") {
  const auto trace = parse_text(
      "938513000 4 264719034 16 0\n"
      "938828000 3 197570570 8 1\n",
      unfolded());
  REQUIRE(trace.is_ok());
  CHECK(trace->format == "disksim");
  CHECK(trace->source == "test.trace");
  REQUIRE(trace->requests.size() == 2);
  CHECK(trace->requests[0] == IoRequest{0, Op::write, 4, 264719034ULL * 512, 16 * 512});
  CHECK(trace->requests[1] == IoRequest{315000, Op::read, 3, 197570570ULL * 512, 8 * 512});
  CHECK(trace->reads == 1);
  CHECK(trace->writes == 1);
  CHECK(trace->read_bytes == 4096);
  CHECK(trace->write_bytes == 8192);
  CHECK(trace->footprint_bytes == (264719034ULL + 16) * 512);
  CHECK(trace->duration_ns == 315000);
  CHECK(trace->clamped_arrivals == 0);
}

TEST_CASE("DiskSim times take the configured unit and may be fractional", "[workload][trace]") {
  TraceOptions options;
  options.disksim_time_unit_ns = 1e6;  // classic DiskSim: milliseconds
  const auto trace = parse_text(
      "10.5 0 0 8 1\n"
      "11.25 0 8 8 1\n"
      "12.0000004 0 16 8 0\n",
      options);
  REQUIRE(trace.is_ok());
  CHECK(trace->requests[0].arrival_ns == 0);
  CHECK(trace->requests[1].arrival_ns == 750'000);
  CHECK(trace->requests[2].arrival_ns == 1'500'000);  // 0.4 ns rounds away
}

TEST_CASE("SPC lines parse to exact requests", "[workload][trace]") {
  const auto trace = parse_text(
      "0,303567,3584,w,0.000000\n"
      "1, 55590, 3072, R, 0.026214\n"
      "1,240840,512,r,1.5,extra,fields\n"
      "0,4,1024,W,2\n",
      unfolded());
  REQUIRE(trace.is_ok());
  CHECK(trace->format == "spc");
  REQUIRE(trace->requests.size() == 4);
  CHECK(trace->requests[0] == IoRequest{0, Op::write, 0, 303567ULL * 512, 3584});
  CHECK(trace->requests[1] == IoRequest{26'214'000, Op::read, 1, 55590ULL * 512, 3072});
  CHECK(trace->requests[2] == IoRequest{1'500'000'000, Op::read, 1, 240840ULL * 512, 512});
  CHECK(trace->requests[3] == IoRequest{2'000'000'000, Op::write, 0, 2048, 1024});
}

TEST_CASE("MSR Cambridge lines parse to exact requests", "[workload][trace]") {
  const auto trace = parse_text(
      "128166372003061629,wdev,0,Write,3424256,4096,2051\n"
      "128166372003061729,wdev,2,read,8192,512,100\r\n"
      "128166372016382155,hm,1,READ,0,65536,9\n",
      unfolded());
  REQUIRE(trace.is_ok());
  CHECK(trace->format == "msr");
  REQUIRE(trace->requests.size() == 3);
  // Ticks of 100 ns; the big time stamps are subtracted exactly.
  CHECK(trace->requests[0] == IoRequest{0, Op::write, 0, 3424256, 4096});
  CHECK(trace->requests[1] == IoRequest{10'000, Op::read, 2, 8192, 512});
  CHECK(trace->requests[2] == IoRequest{(128166372016382155ULL - 128166372003061629ULL) * 100,
                                        Op::read, 1, 0, 65536});
}

TEST_CASE("the first request line decides the format", "[workload][trace]") {
  const char* const comment = "# a comment\n\n   \t\n  # indented comment\n";
  CHECK(parse_text(std::string(comment) + "0 0 0 8 1\n")->format == "disksim");
  CHECK(parse_text(std::string(comment) + "0,0,4096,r,0.0\n")->format == "spc");
  CHECK(parse_text(std::string(comment) + "1,h,0,Read,0,4096,1\n")->format == "msr");
  CHECK(parse_text("0\t0\t0\t8\t1\n")->format == "disksim");

  // An explicit format is not second-guessed: an SPC line read as DiskSim fails.
  TraceOptions disksim;
  disksim.format = TraceFormat::disksim;
  const auto wrong = parse_text("0,0,4096,r,0.0\n", disksim);
  REQUIRE_FALSE(wrong.is_ok());
  CHECK(wrong.status().message() == "test.trace:1: expected 5 fields, found 1");
}

TEST_CASE("comments, blank lines and CRLF endings are skipped, not counted as requests",
          "[workload][trace]") {
  const auto trace = parse_text("# header\r\n0 0 0 8 1\r\n\r\n# middle\n5 0 8 8 0\r\n   \n10 0 16 8 1");
  REQUIRE(trace.is_ok());
  REQUIRE(trace->requests.size() == 3);  // the last line has no terminator and still counts
  CHECK(trace->requests[2] == IoRequest{10, Op::read, 0, 16 * 512, 8 * 512});
}

TEST_CASE("arrival times start at 0 and never decrease", "[workload][trace]") {
  const auto trace = parse_text(
      "1000 0 0 8 1\n"
      "1500 0 8 8 1\n"
      "1200 0 16 8 1\n"  // steps back: clamped to 500
      "900 0 24 8 1\n"   // before the first request: clamped too
      "2000 0 32 8 1\n");
  REQUIRE(trace.is_ok());
  std::vector<std::uint64_t> arrivals;
  for (const auto& r : trace->requests) arrivals.push_back(r.arrival_ns);
  CHECK(arrivals == std::vector<std::uint64_t>{0, 500, 500, 500, 1000});
  CHECK(trace->clamped_arrivals == 2);
  CHECK(trace->duration_ns == 1000);
  // File order is kept: the offsets are still in the order of the lines.
  CHECK(trace->requests[3].offset_bytes == 24 * 512);
}

TEST_CASE("time stamps in exponent notation", "[workload][trace]") {
  const auto trace = parse_text("0,0,512,r,1e-3\n0,0,512,r,2.5E-3\n");
  REQUIRE(trace.is_ok());
  CHECK(trace->requests[1].arrival_ns == 1'500'000);
}

TEST_CASE("trace format names", "[workload][trace]") {
  for (auto format : {TraceFormat::automatic, TraceFormat::disksim, TraceFormat::spc, TraceFormat::msr}) {
    const auto parsed = parse_trace_format(trace_format_name(format));
    REQUIRE(parsed.is_ok());
    CHECK(parsed.value() == format);
  }
  CHECK(parse_trace_format("automatic").value() == TraceFormat::automatic);
  CHECK_THAT(parse_trace_format("blktrace").status().message(),
             Catch::Contains("'blktrace'") && Catch::Contains("disksim"));
}
