// The parts of a model that a parameter figure may count or leave out: the
// vocabulary a published figure is read in (presets.h) and counted in
// (parameters.h).
//
// Thread safety: ParameterPart is a plain value: several threads may read one
// at once, and a thread that changes one must be the only one using it. The
// functions here keep no state of their own: several threads may call them at
// once, given different objects to change.
#ifndef TRAINFLOPS_PARAMETER_PART_H_
#define TRAINFLOPS_PARAMETER_PART_H_

#include <string_view>

#include "trainflops/result.h"

namespace trainflops {

enum class ParameterPart {
  kEmbedding,    // the embedding table; active: none (a token reads one row)
  kOutputLayer,  // the output layer (h x V)
  kDecoder,      // the decoder layers
  kMtp,          // the MTP depths: projections and layers
};

// "embedding", "output_layer", "decoder", "mtp"; parse_parameter_part() names
// them in its error.
std::string_view parameter_part_name(ParameterPart part);
Result<ParameterPart> parse_parameter_part(std::string_view text);

}  // namespace trainflops

#endif  // TRAINFLOPS_PARAMETER_PART_H_
