// The models and batches the benchmarks count.
#ifndef TRAINFLOPS_BENCH_BENCH_MODELS_H_
#define TRAINFLOPS_BENCH_BENCH_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trainflops/megatron_args.h"
#include "trainflops/model.h"

namespace trainflops::bench {

// bench/data/glm-5.args.json: a GLM-5-class model, the benchmarks' workload (78 layers +
// 1 MTP depth, MLA with DSA top-2048, indexer shared every 4 layers, 75 MoE
// layers of 256 experts, top-8).
std::string glm5_args_path();
MegatronArgs glm5_args();
Model glm5_model();
// The same with KPool: keys pooled by 4, the tail attended (indexer grad mode off).
Model glm5_kpool_model();

// cu_seqlens of `documents` packed documents of 0..4000 tokens (mean 2000,
// about a third above the top-k of 2048), seeded, so that the offsets fit in
// int32 for up to a million documents.
std::vector<std::int64_t> packed_cu_seqlens(std::size_t documents);

// Stops the benchmark with a message when a setup step fails.
[[noreturn]] void fail(const std::string& what);

}  // namespace trainflops::bench

#endif  // TRAINFLOPS_BENCH_BENCH_MODELS_H_
