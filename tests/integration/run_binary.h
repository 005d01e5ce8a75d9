// SPDX-License-Identifier: BSD-3-Clause
// Runs build/dataplane/listrx (or another program) as a child process and
// captures its exit status and output; the integration tests' one tool.
#pragma once

#include <string>
#include <vector>

#include "../support/cpus.h"

namespace lrx_test {

struct RunResult {
	int status = -1;          // exit status, or 128 + signal
	std::string out, err;
	bool timed_out = false;
};

struct RunOptions {
	double timeout_s = 120;
	// send this signal after this many seconds (0 = never)
	int signal = 0;
	double signal_after_s = 0;
	// or: send the signal once stdout contains this text
	std::string signal_when_output;
};

RunResult run_program(const std::vector<std::string> &argv, const RunOptions &opt = {});

// Starts argv in the background, stdout and stderr into out_path (stderr
// into err_path when given; "/dev/null" discards); returns its pid once it
// has exec'd (or exited, when exec failed).
int spawn_program(const std::vector<std::string> &argv, const std::string &out_path,
		  const std::string &err_path = "");
// Waits until the file contains text (true) or timeout_s passes (false).
bool wait_for_text(const std::string &path, const std::string &text, double timeout_s);
// Waits until pid catches sig (its handler is installed, as /proc/PID/status
// SigCgt shows) (true), or it exits or timeout_s passes (false). A signal sent
// before that kills a process whatever its code does (it may not have reached
// main yet), so a test of signal handling starts its clock here.
bool wait_signal_caught(int pid, int sig, double timeout_s);
// Waits for pid (SIGKILL after timeout_s); returns its exit status.
int wait_program(int pid, double timeout_s);

// The listrx binary under test ($LISTRX_BIN).
std::string listrx_bin();
// A unique scratch file path under the build directory.
std::string scratch_path(const std::string &name);
// A unique EAL --file-prefix so that tests may run in parallel.
std::string file_prefix(const std::string &name);
// Reads a whole file ("" if it cannot be read).
std::string read_file(const std::string &path);

} // namespace lrx_test
