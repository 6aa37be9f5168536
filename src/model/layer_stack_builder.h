// Internal: appending to a LayerStack without comparing layers, for the
// library's builders that know which layers repeat (Megatron-LM arguments).
#ifndef TRAINFLOPS_SRC_MODEL_LAYER_STACK_BUILDER_H_
#define TRAINFLOPS_SRC_MODEL_LAYER_STACK_BUILDER_H_

#include <cstddef>
#include <cstdint>

#include "trainflops/model.h"

namespace trainflops {

class LayerStackBuilder {
 public:
  // Appends `count` (> 0) copies of stack.distinct()[distinct_index]
  // (distinct_index < distinct().size()).
  static void append_again(LayerStack& stack, std::size_t distinct_index, std::int64_t count = 1) {
    stack.append_again(distinct_index, count);
  }
  // Room for `distinct` layers and `runs` runs, so that appending them grows
  // no vector.
  static void reserve(LayerStack& stack, std::size_t distinct, std::size_t runs) {
    stack.distinct_.reserve(distinct);
    stack.runs_.reserve(runs);
  }
};

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_MODEL_LAYER_STACK_BUILDER_H_
