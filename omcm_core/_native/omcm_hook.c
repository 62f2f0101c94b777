/* The hook client's warm path in C: what omcm_core/_runtime/client.py does when a
 * warm dispatcher answers, without starting Python (about 10 ms less per hook).
 *
 * Registered by `omcm install` as `<this program> hook EVENT`, built for one
 * installation (omcm_core/_cli/native_client.py writes omcm_hook_config.h with
 * its interpreter, fast_hook.py and installation key). It does exactly what
 * client.py does on the warm path (socket folder and peer-uid checks, the
 * environment subset, the wire protocol of wire.py and its verdicts, the
 * deadlines, the exit code and stdout) and hands everything else to the Python
 * client by exec'ing it with the same arguments and payload, so every answer is
 * the one client.py would give:
 *   - before any socket work (OMCM_DAEMON=0, no event, no HOME, a relative
 *     OMCM_HOME, an unusual OMCM_DAEMON_ACCEPT_MS, an unsafe socket folder): the
 *     Python client redoes everything (and logs why);
 *   - after the dispatcher did not run the call (none listening, refused, late,
 *     an older protocol) or lost its answer: OMCM_CLIENT_HANDOFF tells the Python
 *     client what happened, so it neither asks again nor runs a lost call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "omcm_hook_config.h" /* OMCM_PYTHON, OMCM_FAST_HOOK, OMCM_INSTALL, OMCM_INSTALL_LEN */

extern char **environ;

#define PROTOCOL "OMCM2"
#define ACCEPTED PROTOCOL " accepted\n"
#define REFUSED PROTOCOL " refused "
#define DONE PROTOCOL " done "
#define MAX_ADDRESS 100 /* wire.MAX_ADDRESS */

static char **args;  /* argv from "hook" on */
static char *payload; /* stdin, once read */
static size_t payload_len;
static int payload_read;

typedef struct {
    char *data;
    size_t len, cap;
} buf;

static void grow(buf *b, size_t more) {
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data)
        _exit(0); /* out of memory: fail open, like any client that cannot answer */
    b->data = data;
    b->cap = cap;
}

static void put(buf *b, const void *data, size_t len) {
    grow(b, len);
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

static void putf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void putf(buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Exec the Python client: the payload (if read) on stdin, `kind` in OMCM_CLIENT_HANDOFF. */
static void __attribute__((noreturn)) handoff(const char *kind) {
    if (payload_read) {
        int fd = memfd_create("omcm-payload", MFD_CLOEXEC);
        size_t at = 0;
        while (fd >= 0 && at < payload_len) {
            ssize_t n = write(fd, payload + at, payload_len - at);
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                close(fd);
                fd = -1;
            } else
                at += (size_t)n;
        }
        if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, 0) < 0)
            _exit(0); /* cannot give the payload on: no answer rather than a wrong one */
        close(fd);
    }
    if (kind)
        setenv("OMCM_CLIENT_HANDOFF", kind, 1);
    else
        unsetenv("OMCM_CLIENT_HANDOFF");
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = calloc(n + 5, sizeof(char *));
    if (!argv)
        _exit(0);
    argv[0] = OMCM_PYTHON;
    argv[1] = "-S";
    argv[2] = "-c";
    argv[3] = OMCM_HOOK_CODE; /* install.HOOK_CODE: finds the client, or answers without it (never exit 2) */
    argv[4] = OMCM_FAST_HOOK;
    for (size_t i = 1; i < n; i++) /* args[0] is "hook" */
        argv[i + 4] = args[i];
    execv(OMCM_PYTHON, argv);
    /* The interpreter is gone (omcm moved?): fail open, except a guard's PreToolUse, which keeps guarding. */
    const char *agent = getenv("OMCM_AGENT");
    if (n >= 3 && strcmp(args[1], "PreToolUse") == 0 && strcmp(args[n - 1], "fail-closed") == 0 && agent &&
        strcmp(agent, "gemini") == 0) /* Gemini CLI ignores Claude's form: only its own denies */
        fputs("{\"decision\": \"deny\", \"reason\": \"omcm cannot run (its Python is gone); run `omcm doctor`.\"}\n",
              stdout);
    else if (n >= 3 && strcmp(args[1], "PreToolUse") == 0 && strcmp(args[n - 1], "fail-closed") == 0)
        fputs("{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", "
              "\"permissionDecisionReason\": \"omcm cannot run (its Python is gone); run `omcm doctor`.\"}}\n",
              stdout);
    fflush(stdout);
    _exit(0);
}

static void __attribute__((noreturn)) handoff_why(const char *kind, const char *why) {
    buf b = {0};
    putf(&b, "%s %s", kind, why);
    handoff(b.data);
}

static double monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void read_stdin(void) {
    buf b = {0};
    grow(&b, 65536);
    for (;;) {
        ssize_t n = read(0, b.data + b.len, b.cap - b.len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* EOF, or unreadable: client.py reads b"" then */
        b.len += (size_t)n;
        grow(&b, 65536);
    }
    payload = b.data;
    payload_len = b.len;
    payload_read = 1;
}

/* The first value of NAME in the environment (client.py's dict keeps the first). */
static const char *env_get(const char *name) {
    size_t len = strlen(name);
    for (char **e = environ; *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

static int has_prefix(const char *s, size_t len, const char *prefix, size_t plen) {
    return len >= plen && memcmp(s, prefix, plen) == 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* wire.call_env: is the variable named key[0:len] one a call may see? */
static int wanted(const char *key, size_t len, const char *pass) {
    static const char *prefixes[] = {"OMCM_", "CLAUDE_", "LC_", "XDG_"};
    static const char *names[] = {"LANG", "LANGUAGE", "TZ", "HOME", "USER", "LOGNAME",
                                  "PATH", "PYTHONPATH", "TMPDIR", "VIRTUAL_ENV"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (has_prefix(key, len, prefixes[i], strlen(prefixes[i])))
            return 1;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (len == strlen(names[i]) && memcmp(key, names[i], len) == 0)
            return 1;
    /* OMCM_PASS_ENV: comma-separated NAME or PREFIX*, each stripped of whitespace. */
    for (const char *p = pass; p && *p;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *a = p, *z = end;
        while (a < z && is_space(*a))
            a++;
        while (z > a && is_space(z[-1]))
            z--;
        size_t n = (size_t)(z - a);
        if (n) {
            if (n == len && memcmp(a, key, len) == 0)
                return 1;
            if (a[n - 1] == '*' && has_prefix(key, len, a, n - 1))
                return 1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* The NUL-separated NAME=value block of wire.encode_request, in environment order. */
static void env_block(buf *out) {
    const char *pass = env_get("OMCM_PASS_ENV");
    int first = 1;
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        size_t len = (size_t)(eq - *e);
        if (!wanted(*e, len, pass) || (len == 19 && memcmp(*e, "OMCM_CLIENT_HANDOFF", 19) == 0))
            continue; /* the Python client drops that one before it takes the subset */
        int seen = 0; /* a name twice in the environment: the first counts */
        for (char **d = environ; d < e && !seen; d++)
            seen = strncmp(*d, *e, len + 1) == 0;
        if (seen)
            continue;
        if (!first)
            put(out, "", 1);
        put(out, *e, strlen(*e));
        first = 0;
    }
}

static uint64_t fnv1a(const char *data, size_t len, uint64_t value) {
    for (size_t i = 0; i < len; i++)
        value = (value ^ (unsigned char)data[i]) * 0x100000001B3ULL;
    return value;
}

/* wire.socket_problem: is the socket's folder a real folder, ours, mode 0700, and the path a socket? */
static int socket_problem(const char *path) {
    char folder[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t len = (size_t)(slash - path);
    if (len >= sizeof folder)
        return 1;
    memcpy(folder, path, len);
    folder[len] = 0;
    struct stat st;
    if (lstat(folder, &st) != 0)
        return 0; /* no folder, no daemon: the Python client starts one */
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0777) != 0700)
        return 1;
    if (lstat(path, &st) != 0)
        return 0;
    return !S_ISSOCK(st.st_mode);
}

static const char *errno_text(int err) {
    static char text[256];
    snprintf(text, sizeof text, "[Errno %d] %s", err, strerror(err));
    return text;
}

/* Wait until fd is ready for `events` or `deadline` passes; 0 when ready, else ETIMEDOUT or errno. */
static int wait_for(int fd, short events, double deadline) {
    for (;;) {
        double left = deadline - monotonic();
        if (left <= 0)
            return ETIMEDOUT;
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return errno;
    }
}

static int parse_long(const char *s, const char *end, long long *value) {
    int negative = s < end && *s == '-';
    if (negative)
        s++;
    if (s == end || end - s > 18)
        return 0;
    long long v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (*s - '0');
    }
    *value = negative ? -v : v;
    return 1;
}

static void write_all(int fd, const char *data, size_t len) {
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

int main(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[1], "hook") != 0 || !argv[2][0]) {
        static char *none[] = {"hook", NULL};
        args = argc >= 2 ? argv + 1 : none;
        handoff(NULL); /* not the warm path: the Python client does the rest */
    }
    args = argv + 1;
    const char *event = argv[2];
    signal(SIGPIPE, SIG_IGN); /* as in Python: a closed stdout is an error to ignore, not a death */
    const char *daemon = env_get("OMCM_DAEMON");
    const char *home = env_get("HOME");
    const char *omcm_home = env_get("OMCM_HOME");
    if ((daemon && strcmp(daemon, "0") == 0) || !home || !home[0] || (omcm_home && omcm_home[0] && omcm_home[0] != '/'))
        handoff(NULL);
    const char *accept_ms = env_get("OMCM_DAEMON_ACCEPT_MS");
    long long accept = 750;
    if (accept_ms && (!parse_long(accept_ms, accept_ms + strlen(accept_ms), &accept) || accept <= 0 || accept > 600000))
        handoff(NULL); /* client.py's int() takes more forms: let it */
    double accept_s = (double)accept / 1000;

    /* wire.socket_path_bytes */
    const char *pythonpath = env_get("PYTHONPATH");
    uint64_t key = fnv1a(OMCM_INSTALL, OMCM_INSTALL_LEN, 0xCBF29CE484222325ULL);
    key = fnv1a("", 1, key);
    key = fnv1a(pythonpath ? pythonpath : "", pythonpath ? strlen(pythonpath) : 0, key);
    key = fnv1a("", 1, key);
    key = fnv1a(omcm_home ? omcm_home : "", omcm_home ? strlen(omcm_home) : 0, key);
    key = fnv1a("", 1, key);
    key = fnv1a(home, strlen(home), key);
    buf path = {0};
    if (omcm_home && omcm_home[0])
        put(&path, omcm_home, strlen(omcm_home));
    else
        putf(&path, "%s/.omcm", home);
    char name[64];
    snprintf(name, sizeof name, "dispatcher-%016llx.sock", (unsigned long long)key);
    putf(&path, "/run/%s", name);
    if (socket_problem(path.data))
        handoff(NULL); /* the Python client says why in the log and answers in process */

    read_stdin();
    char cwd[PATH_MAX + 1];
    if (!getcwd(cwd, sizeof cwd))
        handoff(NULL);
    mode_t mask = umask(077);
    umask(mask);
    double accept_by = monotonic() + accept_s;
    buf envb = {0};
    put(&envb, "", 0);
    env_block(&envb);
    buf request = {0};
    putf(&request, PROTOCOL " call %.6f %d %zu %zu %zu %zu\n", accept_by, (int)mask, strlen(event), strlen(cwd),
         envb.len, payload_len);
    put(&request, event, strlen(event));
    put(&request, cwd, strlen(cwd));
    put(&request, envb.data, envb.len);
    put(&request, payload ? payload : "", payload_len);

    /* wire.connect: a long path through its folder's descriptor. */
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sock < 0)
        handoff_why("refused", "cannot reach the dispatcher");
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (path.len < MAX_ADDRESS) {
        memcpy(addr.sun_path, path.data, path.len);
    } else {
        buf folder = {0};
        put(&folder, path.data, (size_t)(strrchr(path.data, '/') - path.data));
        int dir = open(folder.data, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
            handoff(errno == ENOENT ? "start" : NULL);
        snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/%s", dir, name);
    }
    if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int err = errno;
        if (err == ENOENT || err == ECONNREFUSED)
            handoff("start"); /* no dispatcher yet: the Python client answers and starts one */
        handoff_why("refused cannot reach the dispatcher:", errno_text(err));
    }
    struct ucred cred;
    socklen_t cred_len = sizeof cred;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0 && cred.uid != getuid()) {
        buf why = {0};
        putf(&why, "refused the process at %s runs as uid %u, not as us", path.data, (unsigned)cred.uid);
        handoff(why.data);
    }

    /* Send, then read the verdict line: anything short of `accepted` means not run. */
    buf reply = {0};
    int err = 0;
    for (size_t at = 0; at < request.len && !err;) {
        ssize_t n = send(sock, request.data + at, request.len - at, MSG_NOSIGNAL);
        if (n > 0)
            at += (size_t)n;
        else if (errno == EAGAIN)
            err = wait_for(sock, POLLOUT, monotonic() + accept_s);
        else if (errno != EINTR)
            err = errno;
    }
    if (!err)
        shutdown(sock, SHUT_WR);
    double verdict_by = accept_by + (accept_s < 0.25 ? accept_s : 0.25);
    int eof = 0;
    while (!err && !eof && !memchr(reply.data ? reply.data : "", '\n', reply.len)) {
        grow(&reply, 65536);
        ssize_t n = recv(sock, reply.data + reply.len, reply.cap - reply.len - 1, 0);
        if (n > 0)
            reply.len += (size_t)n;
        else if (n == 0)
            eof = 1;
        else if (errno == EAGAIN)
            err = wait_for(sock, POLLIN, verdict_by);
        else if (errno != EINTR)
            err = errno;
    }
    char *newline = reply.len ? memchr(reply.data, '\n', reply.len) : NULL;
    if (err && !newline)
        handoff_why("refused no verdict:", err == ETIMEDOUT ? "timed out" : errno_text(err));
    size_t line = newline ? (size_t)(newline - reply.data) + 1 : 0;
    if (!(line == strlen(ACCEPTED) && memcmp(reply.data, ACCEPTED, line) == 0)) {
        if (line > strlen(REFUSED) && memcmp(reply.data, REFUSED, strlen(REFUSED)) == 0) {
            char *a = reply.data + strlen(REFUSED), *z = reply.data + line;
            while (a < z && is_space(*a))
                a++;
            while (z > a && is_space(z[-1]))
                z--;
            buf why = {0};
            put(&why, "refused ", 8);
            put(&why, a, (size_t)(z - a));
            handoff(why.data);
        }
        handoff(line ? "refused unreadable verdict" : "refused no verdict from the dispatcher");
    }

    /* Accepted: from here on the call may have run and must never run again. */
    double answer_by = monotonic() + (strcmp(event, "SessionEnd") == 0                                         ? 1.2
                                      : strcmp(event, "PreToolUse") == 0 || strcmp(event, "UserPromptSubmit") == 0 ? 8.0
                                                                                                                  : 12.0);
    while (!eof && !err) {
        grow(&reply, 65536);
        ssize_t n = recv(sock, reply.data + reply.len, reply.cap - reply.len - 1, 0);
        if (n > 0)
            reply.len += (size_t)n;
        else if (n == 0)
            eof = 1;
        else if (errno == EAGAIN)
            err = wait_for(sock, POLLIN, answer_by);
        else if (errno != EINTR)
            err = errno;
    }
    if (err)
        handoff_why("lost accepted, then:", err == ETIMEDOUT ? "timed out" : errno_text(err));
    char *done = reply.data + line, *end = reply.data + reply.len;
    char *head_end = memchr(done, '\n', (size_t)(end - done));
    long long fields[3];
    int count = 0; /* wire.decode_done: "OMCM2 done <code> <len stdout> <len stderr>\n" */
    if (head_end && head_end - done >= (long)strlen(DONE) && memcmp(done, DONE, strlen(DONE)) == 0) {
        char *f = done + strlen(DONE);
        for (;;) {
            char *space = memchr(f, ' ', (size_t)(head_end - f));
            char *stop = space ? space : head_end;
            if (count == 3 || !parse_long(f, stop, &fields[count])) {
                count = -1;
                break;
            }
            count++;
            if (!space)
                break;
            f = space + 1;
        }
    }
    if (count != 3 || fields[0] < INT_MIN || fields[0] > INT_MAX || fields[1] < 0 || fields[2] < 0)
        handoff("lost the dispatcher accepted the call but did not answer");
    char *body = head_end + 1;
    if ((unsigned long long)(end - body) < (unsigned long long)fields[1] + (unsigned long long)fields[2])
        handoff("lost the dispatcher's answer broke off");
    write_all(2, body + fields[1], (size_t)fields[2]);
    if (fields[1]) {
        struct iovec iov[2] = {{body, (size_t)fields[1]}, {"\n", 1}};
        ssize_t n = writev(1, iov, 2);
        if (n >= 0 && (size_t)n < (size_t)fields[1] + 1) { /* a short write to a pipe: the rest */
            buf rest = {0};
            put(&rest, body, (size_t)fields[1]);
            put(&rest, "\n", 1);
            write_all(1, rest.data + n, rest.len - (size_t)n);
        }
    }
    _exit((int)fields[0]);
}
