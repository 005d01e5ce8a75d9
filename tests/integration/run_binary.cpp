// SPDX-License-Identifier: BSD-3-Clause
#include "run_binary.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lrx_test {

std::string listrx_bin()
{
	const char *bin = std::getenv("LISTRX_BIN");
	return bin ? bin : "build/dataplane/listrx";
}

std::string scratch_path(const std::string &name)
{
	const char *root = std::getenv("LISTRX_BUILD_ROOT");
	std::string dir = std::string(root ? root : "/tmp") + "/test-scratch";
	mkdir(dir.c_str(), 0755);
	return dir + "/" + std::to_string(getpid()) + "-" + name;
}

std::string file_prefix(const std::string &name)
{
	return "lrx" + name + std::to_string(getpid());
}

std::string read_file(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

RunResult run_program(const std::vector<std::string> &argv, const RunOptions &opt)
{
	RunResult r;
	int out_pipe[2], err_pipe[2];
	if (pipe(out_pipe) < 0 || pipe(err_pipe) < 0)
		return r;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out_pipe[1], 1);
		dup2(err_pipe[1], 2);
		close(out_pipe[0]);
		close(err_pipe[0]);
		std::vector<char *> args;
		for (auto &a : argv)
			args.push_back(const_cast<char *>(a.c_str()));
		args.push_back(nullptr);
		execv(args[0], args.data());
		std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
		_exit(127);
	}
	close(out_pipe[1]);
	close(err_pipe[1]);
	auto start = std::chrono::steady_clock::now();
	bool signalled = false;
	pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
	int open_fds = 2;
	while (open_fds > 0) {
		double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		if (!signalled && opt.signal &&
		    ((opt.signal_after_s > 0 && elapsed >= opt.signal_after_s) ||
		     (!opt.signal_when_output.empty() &&
		      r.out.find(opt.signal_when_output) != std::string::npos))) {
			kill(pid, opt.signal);
			signalled = true;
		}
		if (elapsed > opt.timeout_s) {
			r.timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(fds, 2, 20) <= 0)
			continue;
		for (auto &fd : fds) {
			if (fd.fd < 0 || !(fd.revents & (POLLIN | POLLHUP)))
				continue;
			char buf[4096];
			ssize_t n = read(fd.fd, buf, sizeof(buf));
			if (n <= 0) {
				close(fd.fd);
				fd.fd = -1;
				open_fds--;
				continue;
			}
			(fd.fd == out_pipe[0] ? r.out : r.err).append(buf, (size_t)n);
		}
	}
	for (auto &fd : fds)
		if (fd.fd >= 0)
			close(fd.fd);
	int wstatus = 0;
	waitpid(pid, &wstatus, 0);
	r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	return r;
}

int spawn_program(const std::vector<std::string> &argv, const std::string &out_path,
		  const std::string &err_path)
{
	// returns once the child has exec'd (the close-on-exec pipe reads EOF):
	// before that it still has the test's signal handlers (Catch2 catches
	// SIGINT and SIGTERM), which would mislead wait_signal_caught
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(sync[0]);
		int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		int err_fd = err_path.empty() ? -1 : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (err_fd >= 0)
			dup2(err_fd, 2);
		std::vector<char *> args;
		for (auto &a : argv)
			args.push_back(const_cast<char *>(a.c_str()));
		args.push_back(nullptr);
		execv(args[0], args.data());
		int e = errno;
		ssize_t w = write(sync[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(sync[1]);
	if (pid > 0) {
		int e;
		ssize_t r;
		while ((r = read(sync[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
	}
	close(sync[0]);
	return pid;
}

bool wait_for_text(const std::string &path, const std::string &text, double timeout_s)
{
	auto start = std::chrono::steady_clock::now();
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
	       timeout_s) {
		if (read_file(path).find(text) != std::string::npos)
			return true;
		usleep(20000);
	}
	return false;
}

bool wait_signal_caught(int pid, int sig, double timeout_s)
{
	std::string path = "/proc/" + std::to_string(pid) + "/status";
	auto start = std::chrono::steady_clock::now();
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
	       timeout_s) {
		std::ifstream f(path);
		if (!f)
			return false; // gone
		std::string line;
		while (std::getline(f, line)) {
			if (line.rfind("State:", 0) == 0 && line.find('Z') != std::string::npos)
				return false; // exited, not reaped yet
			if (line.rfind("SigCgt:", 0) == 0) {
				unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
				if (mask & (1ULL << (sig - 1)))
					return true;
			}
		}
		usleep(1000);
	}
	return false;
}

int wait_program(int pid, double timeout_s)
{
	auto start = std::chrono::steady_clock::now();
	int wstatus = 0;
	while (waitpid(pid, &wstatus, WNOHANG) == 0) {
		if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
		    timeout_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &wstatus, 0);
			return 128 + SIGKILL;
		}
		usleep(10000);
	}
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

} // namespace lrx_test
