// tmakit: the command-line front of the toolkit.
#include <cstdio>
#include <exception>
#include <new>

#include "commands.hpp"
#include "tmakit/terminal_text.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tmakit: the toolkit for the GPU's bulk-copy engine (TMA)"};
  app.set_version_flag("--version", std::string("tmakit ") + TMAKIT_VERSION);
  app.require_subcommand(1);
  int status = 0;
  tmakit::cli::add_map_command(app, status);
  tmakit::cli::add_run_command(app, status);
  tmakit::cli::add_docs_command(app, status);
  tmakit::cli::add_layout_command(app, status);
  tmakit::cli::add_lint_command(app, status);
  tmakit::cli::add_watch_command(app, status);
  tmakit::cli::add_instrument_command(app, status);
  tmakit::cli::add_check_command(app, status);
  tmakit::cli::add_explain_command(app, status);
  std::vector<char*> args(argv, argv + argc);
  tmakit::cli::split_watch_command(args);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::bad_alloc&) {
    // Every input's memory is bounded (docs/security.md); this is a machine with less than
    // those bounds, or a limit (ulimit -v) below them.
    std::fprintf(stderr, "tmakit: error: out of memory: this input needs more memory than the process may have; "
                         "see docs/security.md for what each input may take [tmakit.memory]\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tmakit: error: %s\n", tmakit::terminal_clip(e.what(), 400).c_str());
    return 2;
  }
  return status;
}
