// doc_blocks: turns the ```cpp blocks of a Markdown file into whole programs, one translation
// unit per program, so that a document's code is compiled (tests/docs/CMakeLists.txt).
//
//   doc_blocks [--only <program>] [--namespace <prefix>] <file.md> <out_dir> <program>...
//   doc_blocks --summary <file.md>...
//
// Every ```cpp (or ```c++) block must be preceded (blank lines aside) by one marker:
//   <!-- compile: <program> -->  appended to <out_dir>/<program>.cpp, after a #line directive
//                                naming the block's first line in the Markdown file, so that a
//                                compile error names the Markdown line;
//   <!-- skip: <reason> -->      left out, and reported with its reason.
// Code the reader is told about in prose but does not see (includes, the declarations a
// fragment uses, the function around a few statements) goes in a hidden HTML comment, appended
// to the program where it stands, in document order, also after a #line directive:
//   <!-- hidden: <program>
//   ...C++ lines...
//   -->
// With --namespace, each program's code is put in `namespace <prefix>_<program> { }`, its
// #include lines hoisted above it, so that several programs compile in one translation unit.
// Errors (exit 1, each as <file.md>:<line>: error: ...): a cpp block without a marker, a
// marker naming a program not given on the command line, a marker followed by anything other
// than a cpp block, a skip without a reason, an unclosed block or hidden comment, a hidden
// comment on one line, a program given on the command line that no block is marked for. On
// any error no file is written. A program's file is rewritten only when its text changes (its
// blocks, or the lines they start on), so an edit elsewhere recompiles nothing. With --only,
// the whole file is checked but only that program's file is written (one build rule per
// program, so that parallel builds never write one file twice).
// --summary checks the markers of each file (any program name is accepted), lists every block
// as <file.md>:<line>: compiled: <program> or skipped: <reason>, and ends with the counts.
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct Marker {
  enum class Kind { compile, skip } kind;
  std::string argument;  // the program, or the reason
  std::size_t line;
};

// A piece of a program: a marked block or a hidden comment.
struct Piece {
  enum class Kind { compile, skip, hidden } kind;
  std::string argument;  // the program, or the reason
  std::size_t line;      // the fence's (or the hidden comment's) line
  std::vector<std::string> code;
  std::size_t code_line;  // the Markdown line of code[0]
};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// A fence: up to three spaces, then ``` or ~~~; returns the fence and the info string's
// first word (the language).
std::optional<std::pair<std::string, std::string>> fence_of(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  const std::string_view rest = line.substr(i);
  for (const char c : {'`', '~'}) {
    std::size_t n = 0;
    while (n < rest.size() && rest[n] == c) ++n;
    if (n >= 3) {
      std::string_view info = trim(rest.substr(n));
      const auto end = info.find_first_of(" \t{");
      if (end != std::string_view::npos) info = info.substr(0, end);
      return std::pair{std::string(rest.substr(0, n)), std::string(info)};
    }
  }
  return std::nullopt;
}

bool closes(std::string_view line, const std::string& fence) {
  const std::string_view t = trim(line);
  return t.size() >= fence.size() && t.find_first_not_of(fence[0]) == std::string_view::npos;
}

std::optional<Marker> marker_of(std::string_view line, std::size_t number) {
  const std::string_view t = trim(line);
  if (!t.starts_with("<!--") || !t.ends_with("-->")) return std::nullopt;
  const std::string_view body = trim(t.substr(4, t.size() - 7));
  for (const auto& [prefix, kind] : {std::pair{std::string_view("compile:"), Marker::Kind::compile},
                                     std::pair{std::string_view("skip:"), Marker::Kind::skip}}) {
    if (body.starts_with(prefix))
      return Marker{kind, std::string(trim(body.substr(prefix.size()))), number};
  }
  return std::nullopt;
}

// "<!-- hidden: <program>" on a line of its own: returns the program.
std::optional<std::string> hidden_of(std::string_view line) {
  const std::string_view t = trim(line);
  constexpr std::string_view prefix = "<!-- hidden:";
  if (!t.starts_with(prefix) || t.ends_with("-->")) return std::nullopt;
  return std::string(trim(t.substr(prefix.size())));
}

std::string line_directive(std::size_t line, const std::string& file) {
  std::string quoted;
  for (const char c : file) {
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  return "#line " + std::to_string(line) + " \"" + quoted + "\"\n";
}

bool is_include(std::string_view line) {
  std::string_view t = trim(line);
  if (!t.starts_with('#')) return false;
  t = trim(t.substr(1));
  return t.starts_with("include");
}

// Reads a Markdown file into its pieces; reports each marker error and counts it.
std::vector<Piece> pieces_of(const std::string& md, const std::vector<std::string>& lines,
                             int& errors) {
  const auto error = [&](std::size_t line, const std::string& what) {
    std::fprintf(stderr, "%s:%zu: error: %s\n", md.c_str(), line, what.c_str());
    ++errors;
  };
  std::vector<Piece> pieces;
  std::optional<Marker> pending;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t number = i + 1;
    if (const auto m = marker_of(lines[i], number)) {
      if (pending) error(pending->line, "marker not followed by a ```cpp block");
      pending = m;
      continue;
    }
    if (const std::string_view t = trim(lines[i]);
        t.starts_with("<!-- hidden:") && t.ends_with("-->")) {
      error(number,
            "<!-- hidden: <program> must be alone on its line, the code on the lines "
            "after it, then a line \"-->\"");
      continue;
    }
    if (const auto program = hidden_of(lines[i])) {
      if (pending) error(pending->line, "marker not followed by a ```cpp block");
      pending.reset();
      std::size_t end = i + 1;
      while (end < lines.size() && trim(lines[end]) != "-->") ++end;
      if (end == lines.size()) {
        error(number, "<!-- hidden: --> comment not closed by a line \"-->\"");
        break;
      }
      if (program->empty()) error(number, "<!-- hidden: --> without a program");
      pieces.push_back({Piece::Kind::hidden,
                        *program,
                        number,
                        {lines.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                         lines.begin() + static_cast<std::ptrdiff_t>(end)},
                        number + 1});
      i = end;
      continue;
    }
    const auto fence = fence_of(lines[i]);
    if (!fence) {
      if (pending && !trim(lines[i]).empty()) {
        error(pending->line, "marker not followed by a ```cpp block");
        pending.reset();
      }
      continue;
    }
    // A fenced block: find its end.
    std::size_t end = i + 1;
    while (end < lines.size() && !closes(lines[end], fence->first)) ++end;
    if (end == lines.size()) {
      error(number, "code block not closed");
      break;
    }
    const bool is_cpp = fence->second == "cpp" || fence->second == "c++";
    if (!is_cpp) {
      if (pending) error(pending->line, "marker not followed by a ```cpp block");
      pending.reset();
      i = end;
      continue;
    }
    if (!pending) {
      error(number,
            "```cpp block without a <!-- compile: <program> --> or "
            "<!-- skip: <reason> --> marker before it");
    } else if (pending->kind == Marker::Kind::skip && pending->argument.empty()) {
      error(pending->line, "<!-- skip: --> without a reason");
    } else if (pending->kind == Marker::Kind::compile && pending->argument.empty()) {
      error(pending->line, "<!-- compile: --> without a program");
    } else {
      pieces.push_back(
          {pending->kind == Marker::Kind::skip ? Piece::Kind::skip : Piece::Kind::compile,
           pending->argument,
           number,
           {lines.begin() + static_cast<std::ptrdiff_t>(i) + 1,
            lines.begin() + static_cast<std::ptrdiff_t>(end)},
           number + 1});
    }
    pending.reset();
    i = end;
  }
  if (pending) error(pending->line, "marker not followed by a ```cpp block");
  return pieces;
}

std::optional<std::vector<std::string>> read_lines(const std::string& md) {
  std::ifstream in(md);
  if (!in) {
    std::fprintf(stderr, "doc_blocks: cannot read %s\n", md.c_str());
    return std::nullopt;
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int summary(int argc, char** argv) {
  int errors = 0;
  std::size_t compiled = 0, skipped = 0, hidden = 0;
  std::set<std::string> programs;
  for (int i = 2; i < argc; ++i) {
    const std::string md = argv[i];
    const auto lines = read_lines(md);
    if (!lines) return 2;
    const auto pieces = pieces_of(md, *lines, errors);
    std::set<std::string> compiled_here;
    for (const Piece& p : pieces)
      if (p.kind == Piece::Kind::compile) compiled_here.insert(p.argument);
    for (const Piece& p : pieces) {
      if (p.kind == Piece::Kind::hidden) {
        ++hidden;
        if (!compiled_here.contains(p.argument)) {
          std::fprintf(stderr,
                       "%s:%zu: error: <!-- hidden: %s -->: no ```cpp block is marked "
                       "<!-- compile: %s -->\n",
                       md.c_str(), p.line, p.argument.c_str(), p.argument.c_str());
          ++errors;
        }
      } else if (p.kind == Piece::Kind::compile) {
        std::printf("%s:%zu: compiled: %s\n", md.c_str(), p.line, p.argument.c_str());
        programs.insert(md + " " + p.argument);
        ++compiled;
      } else {
        std::printf("%s:%zu: skipped: %s\n", md.c_str(), p.line, p.argument.c_str());
        ++skipped;
      }
    }
  }
  std::printf(
      "%zu C++ blocks compiled (in %zu program%s, with %zu hidden comment%s), "
      "%zu skipped\n",
      compiled, programs.size(), programs.size() == 1 ? "" : "s", hidden, hidden == 1 ? "" : "s",
      skipped);
  return errors != 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--summary") return summary(argc, argv);
  int first = 1;
  std::string only, prefix;
  while (argc - first > 1) {
    const std::string_view option = argv[first];
    if (option == "--only") {
      only = argv[first + 1];
    } else if (option == "--namespace") {
      prefix = argv[first + 1];
    } else {
      break;
    }
    first += 2;
  }
  if (argc - first < 3) {
    std::fprintf(stderr,
                 "usage: doc_blocks [--only <program>] [--namespace <prefix>] <file.md> "
                 "<out_dir> <program>...\n"
                 "       doc_blocks --summary <file.md>...\n");
    return 2;
  }
  const std::string md = argv[first];
  const std::string out_dir = argv[first + 1];
  std::map<std::string, std::pair<std::string, std::string>> programs;  // includes, body
  std::map<std::string, std::size_t> blocks_of;
  for (int i = first + 2; i < argc; ++i) {
    programs[argv[i]] = {};
    blocks_of[argv[i]] = 0;
  }
  if (!only.empty() && !programs.contains(only)) {
    std::fprintf(stderr, "doc_blocks: --only %s: not among the programs given\n", only.c_str());
    return 2;
  }

  const auto lines = read_lines(md);
  if (!lines) return 2;
  int errors = 0;
  const auto pieces = pieces_of(md, *lines, errors);
  for (const Piece& piece : pieces) {
    if (piece.kind == Piece::Kind::skip) {
      std::fprintf(stderr, "%s:%zu: skipped: %s\n", md.c_str(), piece.line, piece.argument.c_str());
      continue;
    }
    const auto p = programs.find(piece.argument);
    if (p == programs.end()) {
      std::string names;
      for (const auto& [name, text] : programs) names += (names.empty() ? "" : ", ") + name;
      std::fprintf(stderr,
                   "%s:%zu: error: <!-- %s: %s -->: no such program (doc_blocks was "
                   "given: %s)\n",
                   md.c_str(), piece.line, piece.kind == Piece::Kind::hidden ? "hidden" : "compile",
                   piece.argument.c_str(), names.c_str());
      ++errors;
      continue;
    }
    auto& [includes, body] = p->second;
    body += line_directive(piece.code_line, md);
    for (std::size_t j = 0; j < piece.code.size(); ++j) {
      if (!prefix.empty() && is_include(piece.code[j])) {
        // Hoisted above the namespace; an empty line keeps the body's line numbers.
        includes += line_directive(piece.code_line + j, md) + piece.code[j] + '\n';
        body += '\n';
      } else {
        body += piece.code[j] + '\n';
      }
    }
    if (piece.kind == Piece::Kind::compile) ++blocks_of[p->first];
  }
  for (const auto& [name, count] : blocks_of) {
    if (count == 0) {
      std::fprintf(stderr,
                   "%s: error: program %s: no ```cpp block is marked <!-- compile: %s -->\n",
                   md.c_str(), name.c_str(), name.c_str());
      ++errors;
    }
  }
  if (errors != 0) return 1;

  for (const auto& [name, parts] : programs) {
    if (!only.empty() && name != only) continue;
    std::string text = "// Generated by doc_blocks from " + md + "; edit the Markdown file.\n";
    if (prefix.empty()) {
      text += parts.second;
    } else {
      text += parts.first + "namespace " + prefix + "_" + name + " {\n" + parts.second +
              "}  // namespace " + prefix + "_" + name + "\n";
    }
    const std::string path = out_dir + "/" + name + ".cpp";
    std::ostringstream old;
    if (std::ifstream f(path); f) old << f.rdbuf();
    if (old.str() == text) continue;
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::fprintf(stderr, "doc_blocks: cannot write %s\n", path.c_str());
      return 2;
    }
  }
  return 0;
}
