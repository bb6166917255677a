#pragma once
// A detached daemon that crashes dies without a word: its mount just answers ENOTCONN. These
// handlers write the signal and a backtrace to stderr (CACHE/daemon.log once started) before
// the default action ends the process.

namespace flashdir::fs {

// Installs the handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, except where a
// handler is already installed (a sanitizer's report says more).
void log_fatal_signals();

}  // namespace flashdir::fs
