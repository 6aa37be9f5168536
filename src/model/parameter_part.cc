#include "trainflops/parameter_part.h"

#include <initializer_list>
#include <string>

namespace trainflops {

std::string_view parameter_part_name(ParameterPart part) {
  switch (part) {
    case ParameterPart::kEmbedding: return "embedding";
    case ParameterPart::kOutputLayer: return "output_layer";
    case ParameterPart::kDecoder: return "decoder";
    case ParameterPart::kMtp: return "mtp";
  }
  return "unknown";
}

Result<ParameterPart> parse_parameter_part(std::string_view text) {
  for (auto part :
       {ParameterPart::kEmbedding, ParameterPart::kOutputLayer, ParameterPart::kDecoder, ParameterPart::kMtp}) {
    if (text == parameter_part_name(part)) return part;
  }
  return Error("parameter part \"" + std::string(text) + "\": must be one of embedding, output_layer, decoder, mtp");
}

}  // namespace trainflops
