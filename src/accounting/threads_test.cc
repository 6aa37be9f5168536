// What the public headers promise about threads: a const FlopsCounter,
// Sweeper or Model is shared by several threads at once, and SeqStats built on
// several threads merge into the count of one. Each case runs the same work
// on several threads and checks every thread's results against one thread's.
// `make test` also runs it under ThreadSanitizer (build-tsan/), which reports
// any data race it meets.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/presets.h"
#include "trainflops/seq_stats.h"
#include "trainflops/sweep.h"

namespace trainflops {
namespace {

constexpr int kThreads = 4;

// Runs work(t) on threads t = 0..kThreads-1 together.
void on_threads(const std::function<void(int)>& work) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& thread : threads) thread.join();
}

// A double in full (hexadecimal), so that results compare bit for bit.
std::string bits(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

std::string shown(const Flops& flops) { return bits(flops.value) + (flops.exact ? " " + to_decimal(*flops.exact) : ""); }

// Everything a report says, as text.
std::string shown(const Result<Report>& report) {
  if (!report.ok()) return "error: " + report.error().message();
  std::string out = shown(report.value().total) + " T=" + to_decimal(report.value().tokens);
  for (const ComponentFlops& part : report.value().components) out += " " + shown(part.flops);
  for (const LayerFlops& layer : report.value().layers) out += " " + layer.name + "=" + shown(layer.flops);
  if (report.value().model_total) out += " model=" + shown(*report.value().model_total);
  return out;
}

std::string shown(const Result<SweepPoint>& point) {
  if (!point.ok()) return "error: " + point.error().message();
  std::string out = bits(point.value().per_token) + " " + bits(point.value().dense_per_token);
  for (double part : point.value().components) out += " " + bits(part);
  return out;
}

Model preset(const char* name) { return preset_model(find_preset(name).value()).value(); }

// Packed documents of 0..max_length tokens, from a fixed seed.
std::vector<std::int64_t> documents(std::size_t count, std::int64_t max_length, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> lengths(count);
  for (auto& length : lengths) length = std::uniform_int_distribution<std::int64_t>(0, max_length)(rng);
  lengths[0] = 1;  // at least one token
  return lengths;
}

std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> offsets = {0};
  for (std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

// One counter per mode, shared by every thread; each thread counts every
// workload (in its own order) several times.
TEST(ThreadsTest, CountsOfOneSharedCounterEqualOneThreads) {
  const std::vector<std::int64_t> lengths = documents(5000, 9000, 1);
  const std::vector<std::int64_t> offsets = offsets_of(lengths);
  const std::vector<Workload> workloads = {Bshd{1, 4096}, Bshd{16, 131072}, PackedDocuments{lengths},
                                           SequenceAggregates{4096 * 3, 4096 * 4096 * Int128{3}}};
  for (const char* name : {"glm-5", "qwen3-next-80b-a3b", "gpt-oss-120b"}) {
    const Model model = preset(name);
    for (Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(mode_name(mode)));
      const FlopsCounter counter = FlopsCounter::create(model, mode).value();
      const auto count_all = [&](std::size_t first) {
        std::vector<std::string> out(workloads.size() + 2);
        for (std::size_t i = 0; i < workloads.size(); ++i) {
          const std::size_t w = (first + i) % workloads.size();
          const Result<Flops> total = counter.total(workloads[w]);
          out[w] = shown(counter.report(workloads[w])) + " | " + (total.ok() ? shown(total.value()) : "error");
        }
        out[workloads.size()] = shown(counter.report_cu_seqlens(std::span<const std::int64_t>(offsets)));
        out[workloads.size() + 1] = shown(count(model, workloads[2], mode));
        return out;
      };
      const std::vector<std::string> expected = count_all(0);
      std::vector<std::vector<std::string>> results(kThreads);
      on_threads([&](int t) {
        for (int round = 0; round < 3; ++round) results[t] = count_all(static_cast<std::size_t>(t + round));
      });
      for (int t = 0; t < kThreads; ++t) EXPECT_EQ(results[t], expected) << "thread " << t;
    }
  }
}

// One Sweeper shared by every thread, each sweeping the lengths in its own
// order; and sweep() itself on every thread.
TEST(ThreadsTest, SweepsOfOneSharedSweeperEqualOneThreads) {
  const Model model = preset("glm-5");
  const std::vector<std::int64_t> seq_lengths = {1, 2048, 4096, 32768, 131072, 1 << 20};
  const Sweeper sweeper = Sweeper::create(model, Mode::kModel).value();
  std::vector<std::string> expected;
  for (std::int64_t length : seq_lengths) expected.push_back(shown(sweeper.point(length)));
  // The points of sweep(), as text (the Result held while they are read).
  const auto swept_points = [&] {
    const Result<std::vector<SweepPoint>> points = sweep(model, seq_lengths, Mode::kModel);
    std::vector<std::string> out;
    for (const SweepPoint& point : points.value()) out.push_back(shown(point));
    return out;
  };
  ASSERT_EQ(swept_points(), expected);

  std::vector<std::vector<std::string>> points(kThreads, std::vector<std::string>(seq_lengths.size()));
  std::vector<std::vector<std::string>> swept(kThreads);
  on_threads([&](int t) {
    for (std::size_t i = 0; i < seq_lengths.size(); ++i) {
      const std::size_t at = (i + static_cast<std::size_t>(t)) % seq_lengths.size();
      points[t][at] = shown(sweeper.point(seq_lengths[at]));
    }
    EXPECT_TRUE(sweeper.dense_differs(seq_lengths).value());
    swept[t] = swept_points();
  });
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(points[t], expected) << "thread " << t;
    EXPECT_EQ(swept[t], expected) << "thread " << t;
  }
}

// Each thread is a data-parallel rank with its own SeqStats over one shared
// model: it adds its share of the documents (as lengths, int64 and int32
// offsets) and hands back its vector. Their elementwise sum, merged on every
// thread at once, counts what one SeqStats over every document counts, and
// what count() does.
TEST(ThreadsTest, SeqStatsOfSeveralThreadsMergeIntoOneThreads) {
  for (const char* name : {"glm-5", "qwen3-next-80b-a3b"}) {
    SCOPED_TRACE(name);
    const Model model = preset(name);
    const std::vector<std::int64_t> all = documents(3 * 4096 + 17, 20000, 2);
    std::vector<std::vector<std::int64_t>> vectors(kThreads);
    on_threads([&](int t) {
      SeqStats rank = SeqStats::create(model).value();
      // Rank t takes every kThreads-th document from t, in three parts.
      std::vector<std::int64_t> mine;
      for (std::size_t d = static_cast<std::size_t>(t); d < all.size(); d += kThreads) mine.push_back(all[d]);
      const std::size_t third = mine.size() / 3;
      const std::vector<std::int64_t> first(mine.begin(), mine.begin() + third);
      const std::vector<std::int64_t> second(mine.begin() + third, mine.begin() + 2 * third);
      const std::vector<std::int64_t> last(mine.begin() + 2 * third, mine.end());
      EXPECT_TRUE(rank.add_lengths(first).ok());
      const std::vector<std::int64_t> wide = offsets_of(second);
      EXPECT_TRUE(rank.add_cu_seqlens(std::span<const std::int64_t>(wide)).ok());
      const std::vector<std::int64_t> offsets = offsets_of(last);
      const std::vector<std::int32_t> narrow(offsets.begin(), offsets.end());
      EXPECT_TRUE(rank.add_cu_seqlens(std::span<const std::int32_t>(narrow)).ok());
      vectors[t] = rank.vector();
    });

    std::vector<std::int64_t> summed(vectors[0].size(), 0);
    for (const auto& vector : vectors) {
      ASSERT_EQ(vector.size(), summed.size());
      for (std::size_t i = 0; i < summed.size(); ++i) summed[i] += vector[i];
    }
    SeqStats alone = SeqStats::create(model).value();
    ASSERT_TRUE(alone.add_lengths(all).ok());
    const std::string expected = shown(alone.flops().value()) + " T=" + to_decimal(alone.tokens());
    ASSERT_EQ(shown(count(model, PackedDocuments{all}, Mode::kModel).value().total) +
                  " T=" + to_decimal(alone.tokens()),
              expected);

    std::vector<std::string> merged(kThreads);
    on_threads([&](int t) {
      SeqStats global = SeqStats::create(model).value();
      const Status set = global.set_vector(summed);
      merged[t] = set.ok() ? shown(global.flops().value()) + " T=" + to_decimal(global.tokens()) : set.error().message();
    });
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(merged[t], expected) << "thread " << t;
  }
}

}  // namespace
}  // namespace trainflops
