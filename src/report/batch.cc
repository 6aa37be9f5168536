#include "trainflops/batch.h"

#include <nlohmann/json.hpp>

#include "inputs/batch_record.h"
#include "trainflops/model_input.h"
#include "trainflops/workload_input.h"

namespace trainflops {

using nlohmann::json;

Result<CountRequest> parse_count_request(std::string_view record_json) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const BatchRecord record, read_batch_record(record_json));
  CountRequest request;
  TRAINFLOPS_ASSIGN_OR_RETURN(request.mode, parse_mode(record.mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(ResolvedModel all, resolve_model(record.model));
  TRAINFLOPS_ASSIGN_OR_RETURN(ResolvedModel resolved, counted_in(std::move(all), request.mode));
  if (record.recompute) {
    TRAINFLOPS_ASSIGN_OR_RETURN(request.recompute, parse_recompute(*record.recompute));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(request.workload, resolve_workload(record.workload, resolved));
  request.model = std::move(resolved.model);
  request.warnings = std::move(resolved.warnings);
  return request;
}

BatchAnswer answer_batch_line(std::string_view line, std::int64_t line_number) {
  auto fail = [&](const Error& error) {
    const std::string message = error.context("line " + std::to_string(line_number)).message();
    return BatchAnswer{json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace), false};
  };
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    return fail(Error("blank: every line must hold one JSON record"));
  }
  const Result<CountRequest> request = parse_count_request(line);
  if (!request.ok()) return fail(request.error());
  const CountRequest& r = request.value();
  const auto total = [&r]() -> Result<Flops> {
    TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(r.model, r.mode, r.recompute));
    return counter.total(r.workload);
  };
  const Result<Flops> flops = total();
  if (!flops.ok()) return fail(flops.error());
  json out = {{"flops", flops.value().value}};
  if (flops.value().exact) out["exact"] = to_decimal(*flops.value().exact);
  if (!r.warnings.empty()) out["warnings"] = r.warnings;
  return BatchAnswer{out.dump(), true};
}

}  // namespace trainflops
