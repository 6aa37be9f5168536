// The functions the page's JavaScript calls (web/page/trainflops-api.js):
// one request in, one JSON answer out, as C strings.
#include <emscripten/emscripten.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "commands.h"
#include "trainflops/workload_text.h"

namespace trainflops::web {
namespace {

// The last answer: valid until the next call (the page copies it at once).
std::string& answer() {
  static std::string text;
  return text;
}

// The cu_seqlens file the page read last, and its name.
struct LoadedOffsets {
  std::string name;
  std::vector<std::int64_t> offsets;
};
LoadedOffsets& loaded_offsets() {
  static LoadedOffsets loaded;
  return loaded;
}

const char* answer_with(const Result<std::string>& result) {
  if (result.ok()) {
    answer() = "{\"ok\":true,\"result\":" + result.value() + "}";
  } else {
    answer() = nlohmann::json{{"ok", false}, {"error", "trainflops: " + result.error().message()}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return answer().c_str();
}

Result<std::string> run(std::string_view request_text) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const nlohmann::json request,
                              parse_json<nlohmann::json>(request_text, JsonComments::kRejected));
  const std::string command = request.value("command", "");
  Options options;
  const nlohmann::json given = request.value("options", nlohmann::json::object());
  for (const auto& [name, value] : given.items()) {
    if (value.is_string()) options[name] = value.get<std::string>();
  }
  const std::vector<std::int64_t>* offsets = nullptr;
  if (const std::optional<std::string> file = option(options, "cu-seqlens"); file && *file == loaded_offsets().name) {
    offsets = &loaded_offsets().offsets;
  }
  if (command == "count") return count_view(options, offsets);
  if (command == "sweep") return sweep_view(options);
  if (command == "compare") return compare_view(options);
  if (command == "plan") return plan_view(options);
  if (command == "mfu") return mfu_view(options, offsets);
  if (command == "catalog") return catalog();
  return Error("unknown command \"" + command + "\"");
}

// A request whose answer could not be made (an exception the library did not
// expect) answers with an error instead of stopping the page's module.
const char* answer_safely(const std::function<const char*()>& make) {
  try {
    return make();
  } catch (...) {
    return answer_with(Error("internal error: the request failed; please report it with its link"));
  }
}

}  // namespace
}  // namespace trainflops::web

extern "C" {

// `request`: {"command": "count" | "sweep" | "compare" | "plan" | "mfu" |
// "catalog", "options": {"<option>": "<text>", ...}}. The answer:
// {"ok": true, "result": {...}} or {"ok": false, "error": "trainflops: ..."}.
EMSCRIPTEN_KEEPALIVE const char* trainflops_request(const char* request) {
  using namespace trainflops::web;
  return answer_safely([&] { return answer_with(run(request)); });
}

// Reads the bytes of a cu_seqlens file (.npy by its name, else text) for the
// requests whose "cu-seqlens" option names it. The answer's result:
// {"name", "documents", "tokens"}.
EMSCRIPTEN_KEEPALIVE const char* trainflops_read_cu_seqlens(const char* name, const char* bytes, int size) {
  using namespace trainflops;
  return web::answer_safely([&] {
    web::LoadedOffsets& loaded = web::loaded_offsets();
    loaded = {};
    Result<std::vector<std::int64_t>> offsets = parse_cu_seqlens_file(name, std::string(bytes, size));
    if (!offsets.ok()) return web::answer_with(offsets.error());
    loaded = {name, std::move(offsets.value())};
    const std::int64_t tokens = loaded.offsets.empty() ? 0 : loaded.offsets.back() - loaded.offsets.front();
    const std::size_t documents = loaded.offsets.empty() ? 0 : loaded.offsets.size() - 1;
    return web::answer_with(nlohmann::json{{"name", name}, {"documents", documents}, {"tokens", tokens}}.dump());
  });
}

}  // extern "C"
