// Every reference vector (tests/data/*.jsonl, copied from ../shared/reference)
// through the library: megatron records within relative 1e-12 of Megatron-LM's
// own number, model records equal to the exact integer, error records rejected
// with a message that states the record's reason.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "trainflops/batch.h"
#include "trainflops/count.h"

namespace trainflops {
namespace {

struct VectorFile {
  const char* name;
  std::size_t records;
};

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

class ReferenceVectorsTest : public testing::TestWithParam<VectorFile> {};

TEST_P(ReferenceVectorsTest, EveryRecordMatches) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/" + GetParam().name);
  ASSERT_TRUE(in) << GetParam().name;
  std::string line;
  std::size_t index = 0, checked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto record = nlohmann::json::parse(line);
    SCOPED_TRACE(std::string(GetParam().name) + " record " + std::to_string(index++));
    // The record without its answer, as `batch` takes it.
    nlohmann::json question = record;
    question.erase("flops");
    question.erase("error");
    const Result<CountRequest> request = parse_count_request(question.dump());
    const nlohmann::json& want = record.at("flops");
    Result<Report> report = request.ok() ? count(request.value().model, request.value().workload, request.value().mode)
                                         : Result<Report>(request.error());
    if (want.is_null()) {
      // The record's hint names the rule; the message must state it.
      ASSERT_FALSE(report.ok()) << "expected an error: " << record.at("error");
      EXPECT_NE(lowercase(report.error().message()).find(lowercase(record.at("error").get<std::string>())),
                std::string::npos)
          << report.error().message();
      ++checked;
      continue;
    }
    ASSERT_TRUE(report.ok()) << report.error().message();
    if (want.is_string()) {
      ASSERT_TRUE(report.value().total.exact.has_value());
      EXPECT_EQ(to_decimal(*report.value().total.exact), want.get<std::string>());
    } else {
      const double expected = want.get<double>();
      EXPECT_LE(std::abs(report.value().total.value - expected), 1e-12 * std::abs(expected))
          << report.value().total.value << " vs " << expected;
    }
    ++checked;
  }
  EXPECT_EQ(checked, GetParam().records);
}

INSTANTIATE_TEST_SUITE_P(Files, ReferenceVectorsTest,
                         testing::Values(VectorFile{"megatron_main.jsonl", 600}, VectorFile{"megatron_dsa.jsonl", 200},
                                         VectorFile{"dsa.jsonl", 300}, VectorFile{"dsv4.jsonl", 100}),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace trainflops
