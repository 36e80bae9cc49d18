/*
 * Which Python environment a user names (`env [ENV]`, `audit [ENV]`, `--env ENV`).
 *
 * A directory (a venv, a prefix, a site-packages) is read as it is. An interpreter is asked:
 * the file on PATH is often not the interpreter but a launcher (a pyenv or asdf shim, a
 * wrapper script, a conda or Homebrew link farm) that reading cannot see through, so it is
 * run once, isolated and without its site module (-I -S: nothing of the environment's own
 * code, no .pth file, runs), and says where it is: sys.executable (and sys.prefix, read when
 * it cannot tell its executable). A bare name
 * that is not a path here (python3, python3.12) is looked up on PATH as a shell would.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define ASK_SECONDS 30  /* a cold pyenv shim, a first import of site on a network home */
#define ASK_OUT 16384   /* what the interpreter may print before it is cut off */

/* The executable file NAME on PATH (as execvp would find it) into buf; false when none. */
static bool on_path(const char *name, char *buf, size_t n)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *d = path;; d++) {
		size_t len = strcspn(d, ":");
		struct stat st;
		/* An empty entry is the current directory, as for the shell. */
		int w = len ? snprintf(buf, n, "%.*s/%s", (int)len, d, name)
			    : snprintf(buf, n, "./%s", name);
		if (w > 0 && (size_t)w < n && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(buf, X_OK) == 0)
			return true;
		d += len;
		if (!*d)
			return false;
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs `exe -I -S -c CODE` with stdin closed and reads what it prints (stdout and stderr, each
 * at most ASK_OUT bytes) within ASK_SECONDS. 0 and its output, else -1 with why. */
static int ask(const char *exe, char *out, size_t on, char *errtext, size_t en, char *why,
	       size_t wn)
{
	static const char code[] =
		"import sys; print(sys.executable); print(sys.prefix); "
		"print('%d.%d' % sys.version_info[:2])";
	int po[2], pe[2];
	if (pipe(po) != 0)
		return snprintf(why, wn, "pipe: %s", strerror(errno)), -1;
	if (pipe(pe) != 0) {
		close(po[0]);
		close(po[1]);
		return snprintf(why, wn, "pipe: %s", strerror(errno)), -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		/* -I: no PYTHON* variables, no user site; -S: no site module, so no .pth file
		 * of the environment runs (sys.executable still names the venv's python). */
		execl(exe, exe, "-I", "-S", "-c", code, (char *)NULL);
		dprintf(STDERR_FILENO, "cannot run it: %s\n", strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return snprintf(why, wn, "fork: %s", strerror(errno)), -1;
	}
	size_t got[2] = {0, 0};
	char *bufs[2] = {out, errtext};
	size_t caps[2] = {on - 1, en - 1};
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	double deadline = now_s() + ASK_SECONDS;
	bool timed_out = false;
	int open_fds = 2;
	while (open_fds > 0) {
		double left = deadline - now_s();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		int r = poll(fds, 2, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char tmp[4096];
			ssize_t k = read(fds[i].fd, tmp, sizeof(tmp));
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			size_t take = (size_t)k < caps[i] - got[i] ? (size_t)k : caps[i] - got[i];
			memcpy(bufs[i] + got[i], tmp, take);
			got[i] += take;
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	out[got[0]] = '\0';
	errtext[got[1]] = '\0';
	if (timed_out)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		return snprintf(why, wn, "it did not answer within %d s", ASK_SECONDS), -1;
	if (WIFSIGNALED(st))
		return snprintf(why, wn, "it was killed by signal %d", WTERMSIG(st)), -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return snprintf(why, wn, "it exited with status %d", WEXITSTATUS(st)), -1;
	return 0;
}

/* The first line of text (at most 200 bytes of it), for a message. */
static const char *first_line(char *text)
{
	text[strcspn(text, "\n")] = '\0';
	if (strlen(text) > 200)
		text[200] = '\0';
	return text;
}

int env_resolve(const char *arg, char *out, size_t n, char *note, size_t nn, char *err, size_t en)
{
	*note = '\0';
	if (!arg) {
		const char *venv = getenv("VIRTUAL_ENV");
		if (venv && *venv) {
			snprintf(out, n, "%s", venv);
			snprintf(note, nn, "$VIRTUAL_ENV");
			return 0;
		}
	}
	const char *name = arg ? arg : "python3";
	char found[PATH_MAX];
	struct stat st;
	const char *exe = name;
	if (!strchr(name, '/') && stat(name, &st) != 0) {
		if (!on_path(name, found, sizeof(found))) {
			snprintf(err, en, "%s%s%s: no such file or directory, and no '%s' on PATH",
				 arg ? "'" : "", arg ? esc(name) : "no ENV given, no $VIRTUAL_ENV",
				 arg ? "'" : "", esc(name));
			return -1;
		}
		exe = found;
	} else if (stat(name, &st) != 0 || !S_ISREG(st.st_mode) || access(name, X_OK) != 0) {
		/* A directory, or what is not there or not runnable: read as it is (the error, if
		 * any, is the library's, naming the path). */
		snprintf(out, n, "%s", name);
		return 0;
	}
	char said[ASK_OUT], errtext[ASK_OUT], why[256];
	/* What cannot answer (an interpreter for another machine, a container's root file
	 * system, a stand-in) is read as it is; err says why, for the caller's message. */
	snprintf(out, n, "%s", exe);
	if (ask(exe, said, sizeof(said), errtext, sizeof(errtext), why, sizeof(why)) < 0) {
		snprintf(err, en, "%s did not say where its environment is (run as '%s -I -S -c "
			 "...': %s%s%s)", esc(exe), esc(cli_base_name(exe)), why,
			 *errtext ? ": " : "", *errtext ? esc(first_line(errtext)) : "");
		return 1;
	}
	char *line2 = strchr(said, '\n');
	char *line3 = line2 ? strchr(line2 + 1, '\n') : NULL;
	if (!line2 || !line3) {
		snprintf(err, en, "%s did not say where its environment is (it printed no "
			 "sys.executable and sys.prefix: not a Python interpreter?)", esc(exe));
		return 1;
	}
	*line2++ = '\0';
	*line3++ = '\0';
	line3[strcspn(line3, "\n")] = '\0';
	/* sys.executable is empty when Python cannot tell; the prefix is then read instead. */
	const char *where = *said && stat(said, &st) == 0 && S_ISREG(st.st_mode) ? said : line2;
	if (!*where || stat(where, &st) != 0) {
		snprintf(err, en, "%s says sys.executable '%s' and sys.prefix '%s', neither of "
			 "which is there", esc(exe), esc(said), esc(line2));
		return 1;
	}
	snprintf(out, n, "%s", where);
	snprintf(note, nn, "%s%s, asked: Python %s at %s", arg ? "" : "the python3 on PATH: ",
		 esc(exe), esc(line3), esc(where));
	return 0;
}
