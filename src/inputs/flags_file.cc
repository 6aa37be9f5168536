#include "inputs/flags_file.h"

#include "base/input_file.h"

namespace trainflops {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

class FlagsFileSplitter {
 public:
  FlagsFileSplitter(std::string_view text, std::string_view path) : text_(text), path_(path) {}

  Result<std::vector<std::string>> split() {
    while (next_ < text_.size()) {
      const char c = text_[next_];
      if (is_blank(c)) {
        end_word();
        advance();
      } else if (c == '#' && !in_word_) {
        while (next_ < text_.size() && text_[next_] != '\n') ++next_;
      } else if (c == '\\') {
        TRAINFLOPS_RETURN_IF_ERROR(escaped());
      } else if (c == '\'' || c == '"') {
        TRAINFLOPS_RETURN_IF_ERROR(quoted(c));
      } else if (c == '$' || c == '`') {
        return error(std::string("\"") + c +
                     "\": shell variables and commands are not expanded; write the value itself");
      } else {
        append(c);
        advance();
      }
    }
    end_word();
    return std::move(words_);
  }

 private:
  void advance() {
    if (text_[next_] == '\n') ++line_;
    ++next_;
  }
  void append(char c) {
    word_ += c;
    in_word_ = true;
  }
  void end_word() {
    if (in_word_) words_.push_back(std::move(word_));
    word_.clear();
    in_word_ = false;
  }
  Error error(const std::string& problem) const {
    return Error(std::string(path_) + ":" + std::to_string(line_) + ": " + problem);
  }

  // A backslash before a line break continues the line; before anything else
  // it takes that character literally.
  Status escaped() {
    advance();
    if (next_ == text_.size()) return error("ends with a backslash");
    if (text_[next_] == '\n') {
      advance();
      return Ok{};
    }
    append(text_[next_]);
    advance();
    return Ok{};
  }

  Status quoted(char quote) {
    const int opened_on = line_;
    in_word_ = true;
    advance();
    while (next_ < text_.size() && text_[next_] != quote) {
      const char c = text_[next_];
      if (quote == '"' && (c == '$' || c == '`')) {
        return error(std::string("\"") + c +
                     "\": shell variables and commands are not expanded; write the value itself");
      }
      if (quote == '"' && c == '\\' && next_ + 1 < text_.size() &&
          std::string_view("\"\\$`\n").find(text_[next_ + 1]) != std::string_view::npos) {
        advance();
        if (text_[next_] != '\n') word_ += text_[next_];
        advance();
        continue;
      }
      word_ += c;
      advance();
    }
    if (next_ == text_.size()) {
      return Error(std::string(path_) + ":" + std::to_string(opened_on) + ": the quote " + quote + " is not closed");
    }
    advance();
    return Ok{};
  }

  std::string_view text_, path_;
  std::size_t next_ = 0;
  int line_ = 1;
  std::vector<std::string> words_;
  std::string word_;
  bool in_word_ = false;
};

}  // namespace

Result<std::vector<std::string>> split_flags_file(std::string_view text, std::string_view path) {
  return FlagsFileSplitter(text, path).split();
}

Result<FlagsFile> read_flags_file(std::string_view at_path) {
  FlagsFile file{std::string(at_path.substr(1)), {}};
  if (file.path.empty()) return Error("\"@\": a flags file is @PATH");
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_input_file(file.path, kMaxConfigFileBytes));
  TRAINFLOPS_ASSIGN_OR_RETURN(file.words, split_flags_file(text, file.path));
  if (!file.words.empty() && !file.words.front().starts_with("--")) {
    return Error(file.path + ": not a flags file: its first word is not a flag (flags start with --)");
  }
  return file;
}

}  // namespace trainflops
