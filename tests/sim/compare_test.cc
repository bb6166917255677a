// --compare: axes parse and validate; the product comes out in odometer order.
#include <catch2/catch.hpp>

#include <vector>

#include "flashdir/sim/compare.h"

using namespace flashdir;
using namespace flashdir::sim;

namespace {

CompareAxis axis(const char* text) {
  auto parsed = parse_compare_axis(text);
  INFO(text << ": " << parsed.status().to_string());
  REQUIRE(parsed.is_ok());
  return parsed.value();
}

}  // namespace

TEST_CASE("compare: an axis is a key and its values", "[sim][compare]") {
  const CompareAxis a = axis("mapping=cftl,dftl,page");
  CHECK(a.key == "mapping");
  CHECK(a.values == std::vector<std::string>{"cftl", "dftl", "page"});
  CHECK(axis("op=7").values == std::vector<std::string>{"7"});
  CHECK(axis("ram=16K,1M").values.size() == 2);
}

TEST_CASE("compare: bad axes are refused with the key or value named", "[sim][compare]") {
  struct Case {
    const char* text;
    const char* reason;
  };
  const Case cases[] = {
      {"mapping", "expected KEY=VALUE1,VALUE2"},
      {"=cftl", "expected KEY=VALUE1,VALUE2"},
      {"rum=64M,1G", "unknown key 'rum'"},
      {"mapping=cftl,ftl", "mapping=ftl: unknown mapping scheme"},
      {"op=7,,20", "empty value"},
      {"op=", "empty value"},
      {"gc=greedy,greedy", "greedy appears twice"},
      {"page-size=4K,3K", "page-size=3K"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_compare_axis(c.text);
    INFO(c.text << ": " << parsed.status().to_string());
    REQUIRE_FALSE(parsed.is_ok());
    CHECK_THAT(parsed.status().message(), Catch::Contains(c.reason));
  }
}

TEST_CASE("compare: the product in odometer order, first axis slowest", "[sim][compare]") {
  SimConfig base;
  REQUIRE(base.set("op", "10").is_ok());
  const std::vector<CompareAxis> axes = {axis("mapping=cftl,dftl"),
                                         axis("gc=dual-greedy,greedy,cost-benefit")};
  auto variants = expand_compare(base, axes);
  REQUIRE(variants.is_ok());
  REQUIRE(variants->size() == 6);
  const char* expected[][2] = {{"cftl", "dual-greedy"}, {"cftl", "greedy"}, {"cftl", "cost-benefit"},
                               {"dftl", "dual-greedy"}, {"dftl", "greedy"}, {"dftl", "cost-benefit"}};
  for (std::size_t i = 0; i < variants->size(); ++i) {
    const Variant& v = (*variants)[i];
    INFO(i);
    CHECK(v.config.get("mapping").value() == expected[i][0]);
    CHECK(v.config.get("gc").value() == expected[i][1]);
    CHECK(v.config.overprovision_permille == 100);  // the base shows through
    REQUIRE(v.settings.size() == 2);
    CHECK(v.settings[0] == std::make_pair(std::string("mapping"), std::string(expected[i][0])));
    CHECK(v.label() == std::string("mapping=") + expected[i][0] + " gc=" + expected[i][1]);
  }
}

TEST_CASE("compare: without axes the base alone; a key on two axes is refused", "[sim][compare]") {
  SimConfig base;
  REQUIRE(base.set("mapping", "page").is_ok());
  auto alone = expand_compare(base, {});
  REQUIRE(alone.is_ok());
  REQUIRE(alone->size() == 1);
  CHECK(alone->front().settings.empty());
  CHECK(alone->front().label() == "base");
  CHECK(alone->front().config.mapping == format::MappingScheme::page);

  const std::vector<CompareAxis> twice = {axis("op=7,10"), axis("op=20")};
  auto refused = expand_compare(base, twice);
  REQUIRE_FALSE(refused.is_ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("op") && Catch::Contains("twice"));

  std::vector<CompareAxis> huge;
  for (const char* key : {"op", "age", "seed"}) {
    CompareAxis a;
    a.key = key;
    for (int i = 1; i <= 20; ++i) a.values.push_back(std::to_string(i));
    huge.push_back(a);
  }
  auto too_many = expand_compare(base, huge);
  REQUIRE_FALSE(too_many.is_ok());
  CHECK_THAT(too_many.status().message(), Catch::Contains("more than"));
}
