// Megatron-LM command-line flags, as pasted from a launch script, turned into
// the arguments Megatron-LM's accounting reads once its parser and
// validate_args have run.
//
// Contract:
//  - argv holds the flags without the program name. Each flag is spelled as
//    Megatron-LM's argparse spells it (NVIDIA/Megatron-LM
//    megatron/training/arguments.py) and takes its value either as the next
//    token or after '=' ("--num-layers 32", "--num-layers=32"). A value may
//    start with a single '-' ("-1"); a token starting with "--" is a flag.
//  - A word "@PATH" stands for the flags in the file at PATH, written as in a
//    launch script: several per line, "#" comments, backslash line
//    continuations, quotes. Shell variables are an error (their value is not
//    in the file).
//  - A flag of a MegatronArgs member is "--" + its name with '_' as '-',
//    e.g. --moe-router-topk. Switches (the bool members: --swiglu,
//    --group-query-attention, --multi-latent-attention,
//    --attention-output-gate) take no value. --spec takes any number of words.
//    --hybrid-layer-pattern is also accepted under its older name
//    --hybrid-override-pattern. --moe-layer-freq and --linear-attention-freq
//    take an integer or a Python list expression such as "([0]*3+[1]*75)"
//    (integers, lists, '+', '*', parentheses; evaluated without eval).
//  - Relevant flags that are not members: --vocab-size,
//    --make-vocab-size-divisible-by and --tensor-model-parallel-size give
//    padded_vocab_size the way Megatron-LM pads the tokenizer's vocabulary
//    (the size rounded up to a multiple of divisible_by * tp, by default
//    128 * 1; NullTokenizer adds no end-of-document token, as in
//    Megatron-LM since April 2026); --padded-vocab-size N sets it directly
//    and wins (a Megatron-LM
//    flag since 2025, and a trainflops convenience for older launch scripts).
//    Without either, padded_vocab_size stays unset. --encoder-num-layers and
//    --encoder-seq-length stand in for --num-layers and --seq-length as in
//    Megatron-LM. --global-batch-size goes to global_batch_size.
//  - Pipeline: --pipeline-model-parallel-size, --decoder-first/last-pipeline-
//    num-layers, --num-virtual-stages-per-pipeline-rank (or
//    --num-layers-per-virtual-pipeline-stage, turned into chunks per stage as
//    Megatron-LM does) and --pipeline-model-parallel-layout go to `pipeline`;
//    --account-for-embedding/loss-in-pipeline-split become the layout that
//    places the layers as Megatron-LM then does (the embedding and the loss
//    each taking one decoder layer's place on their chunk).
//  - Recomputation (`recompute`): --recompute-granularity full (method
//    uniform: every layer) is "full"; selective, or --recompute-activations,
//    with --recompute-modules (default core_attn) is "selective" when it names
//    core_attn and nothing when it names only modules that re-run no product
//    (moe_act, layernorm, gdn_norm_out). Method block and the other modules
//    are ErrorCode::kUnsupported: a count without them would be too low.
//  - A relevant flag given twice: the last one wins, as with argparse.
//  - Members a launch script omits get Megatron-LM's parser defaults and
//    validate_args derivations: switches false, num_query_groups 1,
//    ffn_hidden_size 4h (int(8h/3/64)*64 with --swiglu), kv_channels
//    h / num_attention_heads, moe_router_topk 2, moe_layer_freq 1,
//    moe_ffn_hidden_size = ffn_hidden_size when num_experts is set
//    (--num-experts 0 means no experts), kv_lora_rank 32, qk_head_dim 128,
//    qk_pos_emb_head_dim 64, v_head_dim 128, linear_* 128/128/16/32/4,
//    mamba_state_dim 128, mamba_head_dim 64, mamba_num_groups 8,
//    gdp_num_householder 3. Members without a default stay unset
//    (Megatron's None), and the model builder reports the ones it needs.
//  - --gdp-num-householder defaults to 3, the TransformerConfig field's default.
//  - --window-size L,R (Megatron-LM's tuple: "128,0" or "(128,0)") and
//    --window-attn-skip-freq (an integer or a list expression) give sliding
//    windows of L + 1 keys; --quick-geglu makes the MLPs gated (megatron
//    mode charges them ungated, as Megatron-LM's estimate does).
//  - Every other flag Megatron-LM's parser accepts (its option table, with how
//    many values each takes, is read from Megatron-LM's own parser:
//    scripts/megatron-known-flags) is recorded in `ignored` with its values, in
//    the order given. Any other flag is rejected as Megatron-LM rejects it,
//    with a did-you-mean for a name within Damerau-Levenshtein distance 2 of a
//    known one (1 for names of at most 8 characters); with
//    UnknownFlags::kWarned it is recorded in `unknown` instead, with the words
//    up to the next flag, and the model is counted without it.
//  - Never throws; every failure is an Error naming the flag, the value and
//    the rule, e.g. `--num-layers = "abc": must be an integer`,
//    `unknown flag --num-layer: did you mean --num-layers?; to count the model
//    without it, allow unknown flags`.
//
// Thread safety: ParsedMegatronFlags and UnknownFlags are plain values: several
// threads may read one at once, and a thread that changes one must be the only
// one using it. The functions here keep no state of their own: several threads
// may call them at once, given different objects to change.
#ifndef TRAINFLOPS_MEGATRON_FLAGS_H_
#define TRAINFLOPS_MEGATRON_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/megatron_args.h"
#include "trainflops/result.h"

namespace trainflops {

struct ParsedMegatronFlags {
  MegatronArgs args;                              // what Megatron-LM's validated args would hold
  std::optional<std::int64_t> global_batch_size;  // --global-batch-size, if given
  std::optional<std::string> tokenizer_type;      // --tokenizer-type, if given
  PipelineSplit pipeline;                         // --pipeline-model-parallel-size, first/last stage layers
  std::optional<std::string> recompute;           // --recompute-granularity: "full" or "selective"
  std::vector<std::string> ignored;               // flags that do not change FLOPs, with values: "--lr 3e-4"
  std::vector<std::string> unknown;               // with UnknownFlags::kWarned: each unknown flag, why, its words
};

// Flags Megatron-LM's parser does not accept (from a fork, or a script's own
// extra_args_provider): an error, or a warning when the user allows them.
enum class UnknownFlags { kRejected, kWarned };

Result<ParsedMegatronFlags> parse_megatron_flags(const std::vector<std::string>& argv,
                                                 UnknownFlags unknown_flags = UnknownFlags::kRejected);

// For a flag trainflops does not read that still changes what a real run
// executes (its ramp-up, partial recomputation, FP8), what the count leaves
// out, e.g. "the count is of one iteration at --global-batch-size; during the
// ramp-up iterations hold fewer sequences"; nullopt for every other flag
// (`flag` as written, "--rampup-batch-size").
std::optional<std::string_view> uncounted_effect(std::string_view flag);

// The model the flags describe. Without --vocab-size or --padded-vocab-size
// Megatron-LM reads the vocabulary from the tokenizer's files, which
// trainflops cannot: an error that names both flags (and the tokenizer).
Result<Model> model_from_megatron_flags(const ParsedMegatronFlags& flags,
                                        MegatronBranch branch = MegatronBranch::kMain);

}  // namespace trainflops

#endif  // TRAINFLOPS_MEGATRON_FLAGS_H_
