// Command-line parsing shared by the tools (header-only: only they link CLI11). --help prints
// and ends with 0; any other syntax error is one line on stderr, "<tool>: <what>", with a hint
// to --help, and ends with the tool's usage exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <optional>
#include <string_view>

namespace flashdir {

// The exit code if the tool must stop now (help shown, or a syntax error), else nothing.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, std::string_view tool,
                                             int usage_exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    fmt::print(stderr, "{}: {} (see {} --help)\n", tool, e.what(), tool);
    return usage_exit_code;
  }
  return std::nullopt;
}

}  // namespace flashdir
