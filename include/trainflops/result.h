// Result<T>: a value or an Error. The library reports every failure this way;
// nothing in the public API throws, prints or exits.
//
// Thread safety: ErrorCode and Ok are plain values: several threads may read
// one at once, and a thread that changes one must be the only one using it.
// Error and Result: as each comment below says. The functions here keep no
// state of their own: several threads may call them at once, given different
// objects to change.
#ifndef TRAINFLOPS_RESULT_H_
#define TRAINFLOPS_RESULT_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace trainflops {

// What kind of failure an Error is, for callers that react differently
// (the Python module raises a matching exception class).
enum class ErrorCode {
  kInvalidInput,  // the input breaks a rule (the default)
  kIo,            // a file cannot be read or written
  kOverflow,      // a count does not fit in its integer type
  kUnsupported,   // valid input that trainflops does not count (a model type, a variant)
  // Invalid input that the framework's function reproduced here refuses with
  // an assertion (Megatron-LM's `assert` in num_floating_point_operations), so
  // that a drop-in can fail the way the original does.
  kFailedAssertion,
};

// "invalid input", "I/O", "overflow", "unsupported", "failed assertion".
const char* error_code_name(ErrorCode code);

// A failure with a message meant for the user. Messages name the field, the
// offending value and the rule it breaks, e.g.
//   "num_layers = 0: must be a positive integer".
// Whatever the input held, a message is printable text of bounded length:
// control bytes (other than line breaks) and bytes that are not UTF-8 are
// escaped as \xNN, and a message longer than kMaxErrorMessageBytes is cut
// with a note of how much was left out.
// Thread safety: a value; several threads may read one at once.
class Error {
 public:
  static constexpr std::size_t kMaxErrorMessageBytes = 2000;

  // Cold: code that builds an error is kept apart from the code that
  // succeeds, which stays dense in the instruction cache.
  [[gnu::cold]] explicit Error(std::string message) : Error(ErrorCode::kInvalidInput, std::move(message)) {}
  [[gnu::cold]] Error(ErrorCode code, std::string message);
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with where the error happened ("record 3: ..."); the code stays.
  Error context(const std::string& where) const { return Error(code_, where + ": " + message_); }

 private:
  ErrorCode code_;
  std::string message_;
};

// Thread safety: a value; several threads may read one at once, and a thread
// that changes or moves from one must be the only one using it.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  // Preconditions: ok() for value(), !ok() for error().
  const T& value() const& { return std::get<0>(state_); }
  T& value() & { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// For operations that produce no value.
struct Ok {};
using Status = Result<Ok>;

// A Status is only its error, held apart: a success is a null pointer, cheap
// to return, test and destroy (validating a model makes hundreds).
template <>
class [[nodiscard]] Result<Ok> {
 public:
  Result(Ok) {}         // NOLINT: implicit by design
  Result(Error error);  // NOLINT: implicit by design; out of line, as errors are rare
  Result(const Result& other) : error_(other.error_ ? std::make_unique<Error>(*other.error_) : nullptr) {}
  Result(Result&&) noexcept = default;
  Result& operator=(const Result& other) { return *this = Result(other); }
  Result& operator=(Result&&) noexcept = default;

  bool ok() const { return !error_; }
  Ok value() const { return Ok{}; }
  // Precondition: !ok().
  const Error& error() const { return *error_; }

 private:
  std::unique_ptr<Error> error_;
};

}  // namespace trainflops

// Returns the error of `expr` from the enclosing function, or binds its value.
#define TRAINFLOPS_CONCAT_INNER(a, b) a##b
#define TRAINFLOPS_CONCAT(a, b) TRAINFLOPS_CONCAT_INNER(a, b)
#define TRAINFLOPS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return tmp.error();                     \
  lhs = std::move(tmp).value()
#define TRAINFLOPS_ASSIGN_OR_RETURN(lhs, expr) \
  TRAINFLOPS_ASSIGN_OR_RETURN_IMPL(TRAINFLOPS_CONCAT(result_, __LINE__), lhs, expr)
#define TRAINFLOPS_RETURN_IF_ERROR(expr)       \
  do {                                         \
    auto status_ = (expr);                     \
    if (!status_.ok()) return status_.error(); \
  } while (false)

#endif  // TRAINFLOPS_RESULT_H_
