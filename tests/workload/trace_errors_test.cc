// Every kind of malformed line is an error that names the source, the line and the problem.
#include <catch2/catch.hpp>

#include "trace_text.h"

using namespace flashdir;
using namespace flashdir::sim;
using flashdir::sim::testing::parse_error;
using flashdir::sim::testing::parse_text;

namespace {

TraceOptions as(TraceFormat format) {
  TraceOptions options;
  options.format = format;
  return options;
}

}  // namespace

TEST_CASE("DiskSim errors name the line and the problem", "[workload][trace][errors]") {
  // Two good lines and a comment first, so that the line number is visibly the file's.
  const std::string good = "0 0 0 8 1\n# comment\n10 1 8 8 0\n";
  auto error = [&](const std::string& bad) { return parse_error(good + bad, {}, "wsrch.trace"); };
  CHECK(error("17 0 5\n") == "wsrch.trace:4: expected 5 fields, found 3");
  CHECK(error("17 0 5 8 1 9\n") == "wsrch.trace:4: expected 5 fields, found 6");
  CHECK(error("17 0 5 0 1\n") == "wsrch.trace:4: size 0 is not positive");
  CHECK(error("17 0 5 8 x\n") ==
        "wsrch.trace:4: unknown operation 'x' (expected 1 for read or 0 for write)");
  CHECK(error("17 0 5 8 2\n") ==
        "wsrch.trace:4: unknown operation '2' (expected 1 for read or 0 for write)");
  CHECK(error("17 0 five 8 1\n") ==
        "wsrch.trace:4: invalid start sector 'five' (expected a whole number)");
  CHECK(error("17 -1 5 8 1\n") == "wsrch.trace:4: invalid device '-1' (expected a whole number)");
  CHECK(error("17 4294967296 5 8 1\n") == "wsrch.trace:4: device '4294967296' is too large");
  CHECK(error("17 0 5 -8 1\n") == "wsrch.trace:4: invalid size '-8' (expected a whole number)");
  CHECK(error("-17 0 5 8 1\n") == "wsrch.trace:4: arrival time '-17' is negative");
  CHECK(error("1x7 0 5 8 1\n") ==
        "wsrch.trace:4: invalid arrival time '1x7' (expected a non-negative number)");
  CHECK(error("nan 0 5 8 1\n") ==
        "wsrch.trace:4: invalid arrival time 'nan' (expected a non-negative number)");
  CHECK(error("17 0 99999999999999999999 8 1\n") ==
        "wsrch.trace:4: start sector '99999999999999999999' is too large");
  CHECK(error("17 0 36028797018963968 8 1\n") ==
        "wsrch.trace:4: start sector 36028797018963968 is too large (beyond 2^64 bytes)");
  CHECK_THAT(error("17 0 36028797018963967 8 1\n"),
             Catch::StartsWith("wsrch.trace:4: request at byte") && Catch::Contains("beyond 2^64"));
}

TEST_CASE("SPC errors name the line and the problem", "[workload][trace][errors]") {
  const std::string good = "0,0,4096,r,0.0\n";
  auto error = [&](const std::string& bad) { return parse_error(good + bad, as(TraceFormat::spc), "f1.spc"); };
  CHECK(error("0,0,4096,r\n") == "f1.spc:2: expected at least 5 fields, found 4");
  CHECK(error("0,0,0,r,1.0\n") == "f1.spc:2: size 0 is not positive");
  CHECK(error("0,0,4096,x,1.0\n") == "f1.spc:2: unknown operation 'x' (expected r or w)");
  CHECK(error("0,0,4096,read,1.0\n") == "f1.spc:2: unknown operation 'read' (expected r or w)");
  CHECK(error("0,,4096,r,1.0\n") == "f1.spc:2: LBA is empty");
  CHECK(error("A,0,4096,r,1.0\n") == "f1.spc:2: invalid ASU 'A' (expected a whole number)");
  CHECK(error("0,0,4096,r,1.0.2\n") ==
        "f1.spc:2: invalid time stamp '1.0.2' (expected a non-negative number)");
}

TEST_CASE("MSR errors name the line and the problem", "[workload][trace][errors]") {
  const std::string good = "128166372003061629,wdev,0,Write,3424256,4096,2051\n";
  auto error = [&](const std::string& bad) { return parse_error(good + bad, {}, "wdev_0.csv"); };
  CHECK(error("128166372003061629,wdev,0,Write,3424256,4096\n") ==
        "wdev_0.csv:2: expected 7 fields, found 6");
  CHECK(error("128166372003061629,wdev,0,Write,3424256,0,1\n") == "wdev_0.csv:2: size 0 is not positive");
  CHECK(error("128166372003061629,wdev,0,Trim,3424256,4096,1\n") ==
        "wdev_0.csv:2: unknown operation 'Trim' (expected Read or Write)");
  CHECK(error("128166372003061629,,0,Write,3424256,4096,1\n") == "wdev_0.csv:2: host name is empty");
  CHECK(error("128166372003061629,wdev,0,Write,3424256,4096,soon\n") ==
        "wdev_0.csv:2: invalid response time 'soon' (expected a whole number)");
  CHECK(error("12816637200306.1629,wdev,0,Write,3424256,4096,1\n") ==
        "wdev_0.csv:2: invalid time stamp '12816637200306.1629' (expected a whole number)");
}

TEST_CASE("a trace whose format cannot be told is refused at its first request line",
          "[workload][trace][errors]") {
  CHECK_THAT(parse_error("# comment\n1 2 3\n"),
             Catch::StartsWith("test.trace:2: cannot tell the trace format from '1 2 3'"));
  CHECK_THAT(parse_error("a,b,c,d,e\n"),
             Catch::StartsWith("test.trace:1: cannot tell the trace format from 'a,b,c,d,e'"));
  // A long line is quoted only in part.
  const std::string long_line(500, 'z');
  CHECK(parse_error(long_line).size() < 400);
}

TEST_CASE("empty traces, bad options and unreadable files are errors", "[workload][trace][errors]") {
  CHECK(parse_error("") == "test.trace: the trace holds no requests");
  CHECK(parse_error("# only a comment\n\n") == "test.trace: the trace holds no requests");

  TraceOptions zero_unit;
  zero_unit.disksim_time_unit_ns = 0;
  CHECK_THAT(parse_error("0 0 0 8 1\n", zero_unit), Catch::Contains("DiskSim time unit 0 ns"));

  const auto missing = load_trace("/nonexistent/wsrch.trace", {});
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == StatusCode::not_found);
  CHECK_THAT(missing.status().message(), Catch::Contains("/nonexistent/wsrch.trace"));

  const auto directory = load_trace("/", {});
  REQUIRE_FALSE(directory.is_ok());
  CHECK_THAT(directory.status().message(), Catch::Contains("is a directory"));
}

TEST_CASE("a line longer than the reader's limit is an error, not a huge buffer",
          "[workload][trace][errors]") {
  const std::string text = "0 0 0 8 1\n" + std::string(100'000, '1') + "\n";
  CHECK(parse_error(text) == "test.trace: line 2 is longer than 65536 bytes (is this a text trace?): '" +
                                 std::string(60, '1') + "...'");
}

TEST_CASE("a binary or garbage trace is refused with the line and a printable excerpt",
          "[workload][trace][errors]") {
  // Bytes as a compressed or binary file has them: NUL, control characters, bytes above 0x7f.
  const std::string binary("\x1f\x8b\x08\x00\xde\xad\n\x00\x01" "abc\xff", 14);
  CHECK(parse_error(binary) ==
        "test.trace:1: not a text trace: the line holds binary bytes: '\\x1f\\x8b\\x08\\x00\\xde\\xad'");
  // Good lines first: the message names the line where the garbage starts, even in a comment.
  CHECK(parse_error("0 0 0 8 1\n# note\n10 0 8 8 \x01\x02\n") ==
        "test.trace:3: not a text trace: the line holds binary bytes: '10 0 8 8 \\x01\\x02'");
  CHECK(parse_error("0 0 0 8 1\n#\x80\x81\n") ==
        "test.trace:2: not a text trace: the line holds binary bytes: '#\\x80\\x81'");
  // A long binary line without a newline is quoted only in part, and printably.
  const std::string blob(100'000, '\x07');
  const std::string error = parse_error(blob);
  CHECK_THAT(error, Catch::StartsWith("test.trace: line 1 is longer than 65536 bytes") &&
                        Catch::Contains("'\\x07\\x07") && Catch::EndsWith("...'"));
  CHECK(error.find('\x07') == std::string::npos);
  // Tabs are text: DiskSim traces may separate fields with them.
  auto tabbed = parse_text("0\t0\t0\t8\t1\n");
  REQUIRE(tabbed.is_ok());
  CHECK(tabbed->requests.size() == 1);
}

TEST_CASE("a time stamp absurdly far after the first is an error", "[workload][trace][errors]") {
  TraceOptions ms;
  ms.disksim_time_unit_ns = 1e6;
  CHECK_THAT(parse_error("0 0 0 8 1\n18446744073709551615 0 8 8 1\n", ms),
             Catch::StartsWith("test.trace:2: time stamp lies") && Catch::Contains("wrong time unit"));
}
