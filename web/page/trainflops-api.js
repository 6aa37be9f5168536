// The trainflops library in the page: its WebAssembly, inside emscripten's
// trainflops.js. Every number comes from the library; this file only moves
// requests in and answers out.
//
//   const api = await TrainflopsApi.load();
//   api.request("count", {"preset": "glm-5", "seq-length": "131072", "mode": "model",
//                         "global-batch-size": "8"})
//     -> {report: <trainflops count --format json>, table: "...", warnings: [...], assumed: [...]}
//   api.request("sweep" | "compare" | "plan" | "mfu" | "catalog", options)
//   api.readCuSeqlens("batch.npy", bytes) -> {name, documents, tokens}
//
// Options are the command line's, by name, as text. A request the library
// rejects throws a TrainflopsError whose message is what the command line
// prints ("trainflops: ...").
'use strict';

class TrainflopsError extends Error {}

const TrainflopsApi = {
  async load() {
    const module = await createTrainflops();

    function withString(text, use) {
      const size = module.lengthBytesUTF8(text) + 1;
      const pointer = module._malloc(size);
      try {
        module.stringToUTF8(text, pointer, size);
        return use(pointer);
      } finally {
        module._free(pointer);
      }
    }

    function answerOf(pointer) {
      const answer = JSON.parse(module.UTF8ToString(pointer));
      if (!answer.ok) throw new TrainflopsError(answer.error);
      return answer.result;
    }

    return {
      request(command, options) {
        return withString(JSON.stringify({command, options}), (request) =>
          answerOf(module._trainflops_request(request)));
      },
      readCuSeqlens(name, bytes) {
        const data = module._malloc(Math.max(1, bytes.length));
        try {
          module.HEAPU8.set(bytes, data);
          return withString(name, (namePointer) =>
            answerOf(module._trainflops_read_cu_seqlens(namePointer, data, bytes.length)));
        } finally {
          module._free(data);
        }
      },
    };
  },
};
