// cu_seqlens files, text and NumPy .npy: the first byte picks the format, the
// rest is the file. Whatever parses is added to SeqStats as int64 and, where
// it fits, as int32 offsets, and the result checked against the per-document
// closed forms.
#include <span>

#include "fuzz_helpers.h"
#include "trainflops/statistic.h"
#include "trainflops/workload.h"
#include "trainflops/workload_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  if (size == 0) return 0;
  const std::string name = data[0] % 2 == 0 ? "cu_seqlens.npy" : "cu_seqlens.txt";
  const std::string contents(fuzz::text_of(data + 1, size - 1));
  const Result<std::vector<std::int64_t>> offsets = parse_cu_seqlens_file(name, contents);
  if (!offsets.ok()) return 0;
  const Result<std::vector<std::int64_t>> lengths = lengths_from_cu_seqlens(offsets.value());

  Model model;  // one DSA layer with KPool, one without: every statistic
  model.hidden_size = 64;
  model.vocab_size = 128;
  const MlaAttention mla{2, 16, 16, 16, 8, 16};
  model.layers = {
      Layer{Mixer{DsaAttention{mla, DsaIndexer{2, 8, 16, DsaIndexer::GradMode::kOff, 4, true}, true}}, std::nullopt},
      Layer{Mixer{DsaAttention{mla, DsaIndexer{2, 8, 16, DsaIndexer::GradMode::kSparse, 1, true}, true}},
            std::nullopt}};
  Result<SeqStats> stats = SeqStats::create(model);
  if (!stats.ok()) fuzz::broken("the fuzz model is invalid: " + stats.error().message());
  const Status added = stats.value().add_cu_seqlens(std::span<const std::int64_t>(offsets.value()));
  if (!lengths.ok()) {
    if (added.ok() || added.error().message() != lengths.error().message()) {
      fuzz::broken("SeqStats and lengths_from_cu_seqlens disagree on the offsets");
    }
    return 0;
  }

  // The reference: every statistic of every document in closed form, below
  // SeqStats' limit of 2^94.
  const std::vector<Statistic>& statistics = stats.value().counter().statistics();
  std::vector<Int128> sums(statistics.size(), 0);
  bool fits = true;
  for (std::int64_t length : lengths.value()) {
    for (std::size_t i = 0; fits && i < statistics.size(); ++i) {
      const auto count = document_count(statistics[i], length);
      const auto sum = count ? checked_add(sums[i], *count) : std::nullopt;
      fits = sum && *sum < (Int128{1} << 94);
      if (fits) sums[i] = *sum;
    }
  }
  if (added.ok() != fits) fuzz::broken("SeqStats and the closed forms disagree on the limit");
  if (!fits) return 0;
  const Result<Flops> expected = stats.value().counter().total_from_statistics(sums);
  const Result<Flops> got = stats.value().flops();
  if (expected.ok() != got.ok() || (got.ok() && got.value().exact != expected.value().exact)) {
    fuzz::broken("SeqStats differs from the closed forms");
  }
  if (offsets.value().back() <= INT32_MAX) {
    const std::vector<std::int32_t> narrow(offsets.value().begin(), offsets.value().end());
    Result<SeqStats> narrow_stats = SeqStats::create(model);
    if (!narrow_stats.value().add_cu_seqlens(std::span<const std::int32_t>(narrow)).ok() ||
        narrow_stats.value().vector() != stats.value().vector()) {
      fuzz::broken("int32 and int64 offsets differ");
    }
  }
  return 0;
}
