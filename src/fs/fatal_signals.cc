#include "fs/fatal_signals.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace flashdir::fs {
namespace {

struct FatalSignal {
  int number;
  const char* line;  // written as is: the handler may only make async-signal-safe calls
};

constexpr FatalSignal kFatalSignals[] = {
    {SIGSEGV, "flashdir: fatal signal SIGSEGV; backtrace:\n"}, {SIGBUS, "flashdir: fatal signal SIGBUS; backtrace:\n"},
    {SIGILL, "flashdir: fatal signal SIGILL; backtrace:\n"},   {SIGFPE, "flashdir: fatal signal SIGFPE; backtrace:\n"},
    {SIGABRT, "flashdir: fatal signal SIGABRT; backtrace:\n"},
};
constexpr int kMaxFrames = 64;

void write_stderr(const char* text) {
  if (::write(STDERR_FILENO, text, std::strlen(text)) < 0) return;  // nowhere left to say it
}

void on_fatal_signal(int number) {
  for (const auto& fatal : kFatalSignals)
    if (fatal.number == number) write_stderr(fatal.line);
  void* frames[kMaxFrames];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, kMaxFrames), STDERR_FILENO);
  // SA_RESETHAND put the default action back: raising again ends the process as the signal would.
  ::raise(number);
}

}  // namespace

void log_fatal_signals() {
  // backtrace() loads libgcc_s on its first call, which allocates: done here, not in a handler.
  void* frame = nullptr;
  ::backtrace(&frame, 1);
  for (const auto& fatal : kFatalSignals) {
    struct sigaction current {};
    if (::sigaction(fatal.number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = on_fatal_signal;
    action.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(fatal.number, &action, nullptr);
  }
}

}  // namespace flashdir::fs
