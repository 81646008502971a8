// SPDX-License-Identifier: MIT
/*
 * xcudad: serves CUDA to guest processes.  It listens on a unix socket
 * (the `local` transport) and, where xcuda-back.ko is loaded, takes the
 * Xen guests' sessions from /dev/xcuda-back (the `xen` transport); it
 * forks one worker per session and lets the worker run it; the parent
 * only accepts, assigns session ids, reaps and logs.  It never calls
 * CUDA itself: CUDA does not survive fork, and a worker that crashes
 * must take only its own session down.
 *
 * The upstream link (xcuda/upstream.h) puts the GPU on another host:
 * with --listen HOST:PORT the daemon also takes sessions that relays
 * forward over TCP (the `tcp` transport), and with --upstream HOST:PORT
 * it is such a relay: each of its sessions is forwarded to the server,
 * by a worker that never loads CUDA (relay.c).  Both ends prove the key
 * of --key FILE to each other.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "xcuda/local.h"
#include "cgroup.h"
#include "fd_broker.h"
#include "gpumem.h"
#include "ipc_table.h"
#include "log.h"
#include "privdrop.h"
#include "relay.h"
#include "rlimits.h"
#include "sandbox.h"
#include "supervise.h"
#include "transport_local.h"
#include "transport_tcp.h"
#include "transport_xen.h"
#include "common/ring_wait.h"
#include "rate.h"
#include "up_link.h"
#include "worker.h"

#define XD_DEFAULT_USER		"xcuda"
#define XD_DEFAULT_ARENA_MB	4096
#define XD_DEFAULT_SESSIONS	64
#define XD_DEFAULT_RATE		100	/* sessions a second, a guest */
/* 1: as --allow-pageable-memory-access (test suites on a trusted host). */
#define XD_PAGEABLE_ENV		"XCUDAD_ALLOW_PAGEABLE_MEMORY_ACCESS"
/* Arena offsets on the wire are 32-bit. */
#define XD_MAX_ARENA_MB		4096
/* Whose a worker is (xd_super_set_owner): its kind, then its id. */
#define XD_OWNER_KIND		(3ull << 62)
#define XD_OWNER_XEN		(2ull << 62)	/* | domid << 32 | devid */
#define XD_OWNER_LOCAL		(1ull << 62)	/* | uid */
#define XD_OWNER_DOMAIN_MASK	(~0ull << 32)

struct xd_daemon {
	const char *socket_path;
	const char *user_name;
	struct xd_local_limits lim;
	unsigned int max_sessions;
	/*
	 * Pools (0 until set, then defaults): the local socket's sessions,
	 * one user's of them, and one domain's Xen sessions.  The local
	 * socket leaves an eighth of the sessions to Xen guests.
	 */
	unsigned int max_local, max_uid, max_domain;
	/* How fast a domain, or a local user, may start sessions. */
	struct xd_rate rate;
	unsigned int rate_per_s;
	int use_syslog;
	int level;
	int no_xen;
	const char *xen_device;
	int xfd;		/* /dev/xcuda-back's control file, or -1 */
	struct xd_user user;
	const char *uid_range;	/* --uid-range FIRST-LAST, or NULL */
	struct xd_sandbox sandbox;
	struct xd_super super;
	int lfd;
	int sfd;
	ino_t sock_ino;		/* ours to unlink at exit, not a successor's */
	/* The upstream link: one of the two addresses, and the key. */
	const char *listen_addr;	/* --listen: the GPU server's */
	const char *upstream_addr;	/* --upstream: the relay's server */
	const char *key_path;
	struct xd_up_key key;
	uint8_t origin[XCUDA_UP_ORIGIN];	/* drawn once, with the key */
	int tfd;		/* the TCP listening socket, or -1 */
	/* GPU memory quotas (gpumem.h): XD_GPUMEM_NONE for none. */
	uint64_t gpumem;	/* --gpumem: devices that set none, relays */
	uint64_t local_gpumem;	/* --local-gpumem: the local socket's */
	char *gpumem_path;	/* the table's file */
	struct xd_rlimits rlimits;	/* each worker's (rlimits.h) */
	struct xd_cgroup_conf cgroup;	/* each domain's (cgroup.h) */
};

/*
 * Only read in sanitizer builds: CUDA maps memory where AddressSanitizer
 * keeps its shadow gap, and without this every worker's CUDA init fails.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "protect_shadow_gap=0";
}

/* The pools' defaults, and none above the whole. */
static void xd_pools(struct xd_daemon *d)
{
	unsigned int *p[] = { &d->max_local, &d->max_uid, &d->max_domain };
	unsigned int i;

	if (!d->max_local)
		d->max_local = d->max_sessions - d->max_sessions / 8;
	if (!d->max_uid)
		d->max_uid = d->max_local;
	if (!d->max_domain)
		d->max_domain = d->max_sessions / 2 ? d->max_sessions / 2 : 1;
	xd_rate_init(&d->rate, d->rate_per_s, 2 * d->rate_per_s);
	for (i = 0; i < 3; i++)
		if (*p[i] > d->max_sessions)
			*p[i] = d->max_sessions;
}

static void xd_usage(FILE *f)
{
	fprintf(f,
"usage: xcudad [options]\n"
"Serves the CUDA runtime to xcuda guests; one worker process per session.\n"
"\n"
"  --socket PATH        listen here (env " XCUDA_LOCAL_SOCKET_ENV ", default\n"
"                       " XCUDA_LOCAL_SOCKET_DEFAULT ")\n"
"  --user NAME          workers run as NAME when started as root (default\n"
"                       " XD_DEFAULT_USER "; 'nobody' if it does not exist)\n"
"  --uid-range F-L      (root) the worker of Xen domain D runs as uid F+D\n"
"                       (group and groups of --user) while F+D <= L; other\n"
"                       sessions, and domains past L (logged), as --user.\n"
"                       Reserve the range: no account may own its uids\n"
"  --no-seccomp         workers run without their seccomp filter (for\n"
"                       debugging only; env " XD_NO_SECCOMP_ENV "=1 too)\n"
"  --worker-data-limit SIZE  each worker's RLIMIT_DATA: its heap and other\n"
"                       private memory, not CUDA's pinned or managed\n"
"                       memory nor the arena (default %lluG; 0 or off:\n"
"                       none)\n"
"  --worker-nofile N    each worker's RLIMIT_NOFILE (default %u; 0 or off:\n"
"                       the daemon's)\n"
"  --worker-core-dumps  workers keep the daemon's RLIMIT_CORE (default 0:\n"
"                       no core, which would hold guest data)\n"
"  --cgroup DIR         a cgroup v2 group per domain beneath DIR (made if\n"
"                       missing; the daemon moves out of it if it sits\n"
"                       there): DIR/dom<ID>, DIR/local-uid<UID>, DIR/relay\n"
"                       (default: none; the daemon refuses to start if\n"
"                       they cannot be set up)\n"
"  --cgroup-memory SIZE memory.max of each group (default none; swap is\n"
"                       not counted on top)\n"
"  --cgroup-pids N      pids.max, the tasks (threads) of each group\n"
"                       (default %u; off: none)\n"
"  --cgroup-cpu PERCENT cpu.max of each group, in percent of one CPU\n"
"                       (default none: groups share by equal cpu.weight)\n"
"  --max-arena MB       largest arena a guest may map (default %d, at most\n"
"                       %d)\n"
"  --max-ring-order N   largest ring, 2^N pages (default %d, at most %d)\n"
"  --max-sessions N     sessions served at once (default %d)\n"
"  --max-local-sessions N  of them, from the local socket (default: all\n"
"                       but an eighth, which only Xen guests may take)\n"
"  --max-uid-sessions N of those, from one user (default: all of them)\n"
"  --max-domain-sessions N  of them, one domain's (default: half)\n"
"  --allow-pageable-memory-access  serve GPUs that reach pageable host\n"
"                       memory (HMM, ATS), where a guest's kernel could\n"
"                       reach its worker's memory (env\n"
"                       " XD_PAGEABLE_ENV "=1)\n"
"  --request-deadline S a request that runs longer (a kernel that never\n"
"                       ends, waited for) ends its session, and frees its\n"
"                       GPU (default 0: no deadline)\n"
"  --max-session-rate N sessions a domain, or a local user, may start a\n"
"                       second, after a burst of twice that (default %d;\n"
"                       0: no limit)\n"
"  --gpumem SIZE        GPU memory one domain's sessions may hold together,\n"
"                       for Xen devices without gpumem= and for relays\n"
"                       (K, M, G, T suffixes; default none)\n"
"  --local-gpumem SIZE  the same for each uid on the local socket\n"
"                       (default: --gpumem's)\n"
"  --xen-device PATH    the Xen backend's device (default " XD_XEN_DEVICE ")\n"
"  --no-xen             serve the local socket only\n"
"  --listen HOST:PORT   also serve relays on this TCP address ([V6]:PORT,\n"
"                       *:PORT for any): the GPU server of an upstream link\n"
"  --upstream HOST:PORT relay every session to the xcudad listening there\n"
"                       instead of running it here (no CUDA needed here)\n"
"  --key FILE           the link's shared key (required with --listen or\n"
"                       --upstream, and for the upstreams that xl\n"
"                       configurations name): %d to %d bytes, owned by\n"
"                       this user, no access for group or others\n"
"  --syslog             log to syslog instead of stderr\n"
"  -v, --verbose        more log (repeat for debug); env XCUDAD_LOG=\n"
"                       debug|info|warn|error sets the level\n"
"  -h, --help           this text\n"
"\n"
"Environment: XCUDA_MATH_LIBS=DIR, where workers load NVIDIA's\n"
"libcublas.so.13 and libcublasLt.so.13 (the CUDA toolkit's lib64, or a\n"
"pip wheel's nvidia/cu13/lib; default: the loader's path, then\n"
"$CUDA_HOME/lib64).  " XD_RELAY_TIMEOUT_ENV "=S (relay): how long the server\n"
"may say nothing while requests are outstanding before the session is\n"
"lost (default %d, 0: forever; a busy server says it is alive a third as\n"
"often, at least every %d s).\n",
		(unsigned long long)(XD_RLIMIT_DATA_DEFAULT >> 30),
		XD_RLIMIT_NOFILE_DEFAULT, XD_CGROUP_PIDS_DEFAULT,
		XD_DEFAULT_ARENA_MB, XD_MAX_ARENA_MB, XCUDA_MAX_RING_ORDER,
		XCUDA_MAX_RING_ORDER, XD_DEFAULT_SESSIONS, XD_DEFAULT_RATE,
		XCUDA_UP_KEY_MIN,
		XCUDA_UP_KEY_MAX, XD_RELAY_TIMEOUT_S,
		XD_UP_HEARTBEAT_MS / 1000);
}

static int xd_parse_uint(const char *s, unsigned long long lo,
			 unsigned long long hi, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int xd_options(struct xd_daemon *d, int argc, char **argv)
{
	enum { O_SOCKET = 256, O_USER, O_ARENA, O_RING, O_SESSIONS,
	       O_SYSLOG, O_XEN_DEVICE, O_NO_XEN, O_LISTEN, O_UPSTREAM,
	       O_KEY, O_LOCAL, O_UID, O_DOMAIN, O_RATE, O_GPUMEM,
	       O_LOCAL_GPUMEM, O_PAGEABLE, O_DEADLINE, O_UID_RANGE,
	       O_NO_SECCOMP, O_DATA_LIMIT, O_NOFILE, O_CORE_DUMPS, O_CGROUP,
	       O_CG_MEMORY, O_CG_PIDS, O_CG_CPU };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "user", required_argument, NULL, O_USER },
		{ "uid-range", required_argument, NULL, O_UID_RANGE },
		{ "no-seccomp", no_argument, NULL, O_NO_SECCOMP },
		{ "worker-data-limit", required_argument, NULL, O_DATA_LIMIT },
		{ "worker-nofile", required_argument, NULL, O_NOFILE },
		{ "worker-core-dumps", no_argument, NULL, O_CORE_DUMPS },
		{ "cgroup", required_argument, NULL, O_CGROUP },
		{ "cgroup-memory", required_argument, NULL, O_CG_MEMORY },
		{ "cgroup-pids", required_argument, NULL, O_CG_PIDS },
		{ "cgroup-cpu", required_argument, NULL, O_CG_CPU },
		{ "max-arena", required_argument, NULL, O_ARENA },
		{ "max-ring-order", required_argument, NULL, O_RING },
		{ "max-sessions", required_argument, NULL, O_SESSIONS },
		{ "max-local-sessions", required_argument, NULL, O_LOCAL },
		{ "max-uid-sessions", required_argument, NULL, O_UID },
		{ "max-domain-sessions", required_argument, NULL, O_DOMAIN },
		{ "max-session-rate", required_argument, NULL, O_RATE },
		{ "syslog", no_argument, NULL, O_SYSLOG },
		{ "xen-device", required_argument, NULL, O_XEN_DEVICE },
		{ "no-xen", no_argument, NULL, O_NO_XEN },
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "upstream", required_argument, NULL, O_UPSTREAM },
		{ "key", required_argument, NULL, O_KEY },
		{ "gpumem", required_argument, NULL, O_GPUMEM },
		{ "local-gpumem", required_argument, NULL, O_LOCAL_GPUMEM },
		{ "allow-pageable-memory-access", no_argument, NULL,
		  O_PAGEABLE },
		{ "request-deadline", required_argument, NULL, O_DEADLINE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	const char *env;
	int c, verbose = 0, local_set = 0;
	uint64_t q;

	d->socket_path = getenv(XCUDA_LOCAL_SOCKET_ENV);
	if (!d->socket_path || !*d->socket_path)
		d->socket_path = XCUDA_LOCAL_SOCKET_DEFAULT;
	d->user_name = XD_DEFAULT_USER;
	d->lim.max_arena = (uint64_t)XD_DEFAULT_ARENA_MB << 20;
	d->lim.max_ring_order = XCUDA_MAX_RING_ORDER;
	d->max_sessions = XD_DEFAULT_SESSIONS;
	d->rate_per_s = XD_DEFAULT_RATE;
	d->gpumem = XD_GPUMEM_NONE;
	d->local_gpumem = XD_GPUMEM_NONE;
	xd_rlimits_default(&d->rlimits);
	d->cgroup.memory = XD_LIMIT_NONE;
	d->cgroup.pids = XD_CGROUP_PIDS_DEFAULT;
	d->level = XD_LOG_INFO;
	env = getenv(XD_PAGEABLE_ENV);
	if (env && !strcmp(env, "1"))
		xd_worker_allow_pageable = 1;
	env = getenv("XCUDAD_LOG");
	if (env && *env) {
		d->level = xd_log_parse_level(env);
		if (d->level < 0) {
			fprintf(stderr, "xcudad: bad XCUDAD_LOG '%s'\n", env);
			return -1;
		}
	}

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case O_SOCKET:
			d->socket_path = optarg;
			break;
		case O_USER:
			d->user_name = optarg;
			break;
		case O_UID_RANGE: {
			uid_t first, last;

			if (xd_uid_range_parse(optarg, &first, &last))
				goto bad;
			d->uid_range = optarg;
			break;
		}
		case O_NO_SECCOMP:
			d->sandbox.no_seccomp = 1;
			break;
		case O_DATA_LIMIT:
		case O_CG_MEMORY:
			if (xd_limit_parse(optarg, 1, &q))
				goto bad;
			*(c == O_DATA_LIMIT ? &d->rlimits.data :
			  &d->cgroup.memory) = q;
			break;
		case O_NOFILE:
		case O_CG_PIDS:
			if (xd_limit_parse(optarg, 0, &q))
				goto bad;
			*(c == O_NOFILE ? &d->rlimits.nofile :
			  &d->cgroup.pids) = q;
			break;
		case O_CORE_DUMPS:
			d->rlimits.core_dumps = 1;
			break;
		case O_CGROUP:
			if (!*optarg)
				goto bad;
			d->cgroup.dir = optarg;
			break;
		case O_CG_CPU:
			if (xd_limit_parse(optarg, 0, &q) ||
			    (q != XD_LIMIT_NONE && q > 100000))
				goto bad;
			d->cgroup.cpu = q == XD_LIMIT_NONE ? 0 :
					(unsigned int)q;
			break;
		case O_ARENA:
			if (xd_parse_uint(optarg, 1, XD_MAX_ARENA_MB, &v))
				goto bad;
			d->lim.max_arena = v << 20;
			break;
		case O_RING:
			if (xd_parse_uint(optarg, 0, XCUDA_MAX_RING_ORDER, &v))
				goto bad;
			d->lim.max_ring_order = (unsigned int)v;
			break;
		case O_SESSIONS:
			if (xd_parse_uint(optarg, 1, 65536, &v))
				goto bad;
			d->max_sessions = (unsigned int)v;
			break;
		case O_LOCAL:
		case O_UID:
		case O_DOMAIN:
			if (xd_parse_uint(optarg, 1, 65536, &v))
				goto bad;
			*(c == O_LOCAL ? &d->max_local : c == O_UID ?
			  &d->max_uid : &d->max_domain) = (unsigned int)v;
			break;
		case O_RATE:
			if (xd_parse_uint(optarg, 0, 1000000, &v))
				goto bad;
			d->rate_per_s = (unsigned int)v;
			break;
		case O_PAGEABLE:
			xd_worker_allow_pageable = 1;
			break;
		case O_DEADLINE:
			if (xd_parse_uint(optarg, 0, 1000000, &v))
				goto bad;
			xd_worker_deadline_s = (unsigned int)v;
			break;
		case O_SYSLOG:
			d->use_syslog = 1;
			break;
		case O_XEN_DEVICE:
			d->xen_device = optarg;
			break;
		case O_NO_XEN:
			d->no_xen = 1;
			break;
		case O_LISTEN:
			d->listen_addr = optarg;
			break;
		case O_UPSTREAM:
			d->upstream_addr = optarg;
			break;
		case O_KEY:
			d->key_path = optarg;
			break;
		case O_GPUMEM:
		case O_LOCAL_GPUMEM:
			if (xd_gpumem_parse(optarg, &q)) {
				fprintf(stderr, "xcudad: bad value '%s' for "
					"--%s: a size in bytes, with K, M, G "
					"or T, or none\n", optarg,
					c == O_GPUMEM ? "gpumem" :
					"local-gpumem");
				return -1;
			}
			if (c == O_GPUMEM) {
				d->gpumem = q;
			} else {
				d->local_gpumem = q;
				local_set = 1;
			}
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			xd_usage(stdout);
			exit(0);
		default:
			xd_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xcudad: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (d->listen_addr && d->upstream_addr) {
		fprintf(stderr, "xcudad: --listen and --upstream: a daemon "
			"either has the GPU or relays to one\n");
		return -1;
	}
	if ((d->listen_addr || d->upstream_addr) && !d->key_path) {
		fprintf(stderr, "xcudad: --%s needs --key FILE\n",
			d->listen_addr ? "listen" : "upstream");
		return -1;
	}
	if (!local_set)
		d->local_gpumem = d->gpumem;
	d->level += verbose;
	xd_pools(d);
	return 0;
bad:
	fprintf(stderr, "xcudad: bad value '%s' for --%s\n", optarg,
		c == O_ARENA ? "max-arena" :
		c == O_RING ? "max-ring-order" :
		c == O_LOCAL ? "max-local-sessions" :
		c == O_UID ? "max-uid-sessions" :
		c == O_DOMAIN ? "max-domain-sessions" :
		c == O_RATE ? "max-session-rate" :
		c == O_UID_RANGE ? "uid-range (FIRST-LAST, 0 < FIRST <= "
				   "LAST)" :
		c == O_DEADLINE ? "request-deadline" :
		c == O_DATA_LIMIT ? "worker-data-limit (a size, K, M, G or T; "
				    "0 or off: none)" :
		c == O_NOFILE ? "worker-nofile (a number; 0 or off: none)" :
		c == O_CGROUP ? "cgroup" :
		c == O_CG_MEMORY ? "cgroup-memory (a size, K, M, G or T; 0 or "
				   "off: none)" :
		c == O_CG_PIDS ? "cgroup-pids (a number; 0 or off: none)" :
		c == O_CG_CPU ? "cgroup-cpu (percent of one CPU, up to 100000; "
				"0 or off: none)" : "max-sessions");
	return -1;
}

/* mkdir -p for the socket's directory; new levels are 0755. */
static int xd_make_dir(const char *path)
{
	char dir[PATH_MAX];
	char *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = 0;
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * Removes a socket that no daemon answers on any more; refuses to touch
 * a live one or anything that is not a socket.
 */
static int xd_clear_stale(const char *path, const struct sockaddr_un *a)
{
	struct stat st;
	int fd, live;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		xd_log(XD_LOG_ERROR, "%s exists and is not a socket", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	live = !connect(fd, (const struct sockaddr *)a, sizeof(*a));
	close(fd);
	if (live) {
		xd_log(XD_LOG_ERROR, "another xcudad is listening on %s",
		       path);
		return -1;
	}
	if (unlink(path) && errno != ENOENT)
		return -1;
	xd_log(XD_LOG_INFO, "removed a stale socket %s", path);
	return 0;
}

static int xd_listen(const char *path, ino_t *ino)
{
	struct sockaddr_un a;
	struct stat st;
	int fd;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a.sun_path)) {
		xd_log(XD_LOG_ERROR, "socket path too long: %s", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	if (xd_make_dir(path)) {
		xd_log(XD_LOG_ERROR, "cannot create the directory of %s: %s",
		       path, strerror(errno));
		return -1;
	}
	if (xd_clear_stale(path, &a))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		xd_log(XD_LOG_ERROR, "bind %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	/*
	 * Anyone who can reach the socket may connect: who can reach it is
	 * decided by its directory's mode and group (0755 when we create
	 * it; make it e.g. 0750 root:xcuda to restrict access).  Each
	 * session is isolated in its own unprivileged worker.
	 */
	if (chmod(path, 0666) || listen(fd, 128) || stat(path, &st)) {
		xd_log(XD_LOG_ERROR, "listen %s: %s", path, strerror(errno));
		unlink(path);
		close(fd);
		return -1;
	}
	*ino = st.st_ino;
	return fd;
}

/*
 * Turns a connection away with an error welcome.  The hello is read
 * first if it is there (briefly: the parent must never wait on a guest),
 * so that the guest sees the welcome rather than a reset.
 */
static void xd_refuse(int fd, int err)
{
	struct xcuda_local_welcome w;
	struct xcuda_local_hello h;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 50) > 0 &&
	    recv(fd, &h, sizeof(h), MSG_DONTWAIT) < 0)
		(void)0;
	memset(&w, 0, sizeof(w));
	w.magic = XCUDA_LOCAL_MAGIC;
	w.version = XCUDA_LOCAL_VERSION;
	w.status = err;
	if (send(fd, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		(void)0;
	close(fd);
}

struct xd_local_conn {
	struct xd_daemon *d;
	int fd;
	int cg;		/* its group's cgroup.procs (cgroup.h), or -1 */
};

/*
 * In a worker, before a byte from its guest: into its domain's cgroup
 * while it still has the daemon's rights (through @cg, or none when -1),
 * then into its sandbox.  0, or -1 (logged): it must not serve.
 */
static int xd_confine(struct xd_daemon *d, int cg, long domid)
{
	if (cg >= 0 && xd_cgroup_join(cg))
		return -1;
	return xd_sandbox_enter(&d->sandbox, domid);
}

/*
 * Forks @session's worker to run @body(@arg), in cgroup @group when
 * --cgroup is on; *@cg, in @arg, is what the worker joins it through.
 * The pid, or -1: nothing started.
 */
static pid_t xd_spawn(struct xd_daemon *d, const char *group,
		      uint32_t session, int *cg,
		      int (*body)(void *arg, uint32_t session), void *arg)
{
	pid_t pid;

	*cg = xd_cgroup_prepare(group, session);
	if (*cg == XD_CGROUP_FAILED)
		return -1;
	pid = xd_super_spawn(&d->super, session, body, arg);
	if (*cg >= 0)
		close(*cg);
	*cg = -1;
	if (pid < 0)
		xd_cgroup_forget_session(session);
	return pid;
}

/*
 * A session's channel, served here or relayed upstream: to its device's
 * upstream (@dev_up, from the toolstack; NULL or empty: none), else to
 * the daemon's.
 */
static int xd_serve(struct xd_daemon *d, struct xd_chan *c,
		    const char *dev_up, uint64_t gpumem)
{
	const char *addr = dev_up && *dev_up ? dev_up : d->upstream_addr;
	struct xd_upstream up = { addr, &d->key, d->origin };

	if (!addr)
		return xd_worker_gpumem(c, gpumem);
	if (!d->key_path) {
		xd_log(XD_LOG_ERROR, "the device's upstream %s needs xcudad "
		       "--key: ending the session", addr);
		c->ops->close(c);
		return 2;
	}
	return xd_relay_run(c, &up);
}

/* A worker's life on a local connection. */
static int xd_local_body(void *arg, uint32_t session)
{
	struct xd_local_conn *lc = arg;
	struct xd_chan c;
	int ret;

	if (xd_confine(lc->d, lc->cg, -1)) {
		xd_refuse(lc->fd, -EPERM);
		return 1;
	}
	memset(&c, 0, sizeof(c));
	ret = xd_local_accept(lc->fd, &c, &lc->d->lim, session);
	if (ret) {
		xd_log(XD_LOG_WARN, "handshake failed: %s", strerror(-ret));
		return 2;
	}
	return xd_serve(lc->d, &c, NULL, lc->d->local_gpumem);
}

/*
 * The next connection on the non-blocking listening socket @lfd, or -1
 * when there is none now (errors logged; a lack of descriptors or memory
 * waits a little, to let the load pass instead of spinning).
 */
static int xd_accept_one(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
	    errno == ENOMEM) {
		struct timespec t = { 0, 100 * 1000 * 1000 };

		xd_log_ratelimited(XD_LOG_WARN, "accept: %s", strerror(errno));
		nanosleep(&t, NULL);
	} else if (errno != EAGAIN && errno != EINTR &&
		   errno != ECONNABORTED) {
		xd_log_ratelimited(XD_LOG_WARN, "accept: %s", strerror(errno));
	}
	return -1;
}

/*
 * Whether the local socket may start one more session for @uid: it has a
 * pool of its own, so that a flood of it leaves Xen guests their share,
 * and each user a share of that.
 */
static int xd_local_room(struct xd_daemon *d, uid_t uid)
{
	unsigned int n;

	if (xd_super_full(&d->super)) {
		xd_log_ratelimited(XD_LOG_WARN, "%u sessions already: "
				   "refusing a connection", d->super.live);
		return 0;
	}
	n = xd_super_count(&d->super, XD_OWNER_KIND, XD_OWNER_LOCAL);
	if (n >= d->max_local) {
		xd_log_ratelimited(XD_LOG_WARN, "%u sessions from the local "
				   "socket (--max-local-sessions), the rest "
				   "kept for Xen guests: refusing a "
				   "connection", n);
		return 0;
	}
	n = xd_super_count(&d->super, ~0ull, XD_OWNER_LOCAL | uid);
	if (n >= d->max_uid) {
		xd_log_ratelimited(XD_LOG_WARN, "user %u has %u sessions "
				   "(--max-uid-sessions): refusing a "
				   "connection", (unsigned int)uid, n);
		return 0;
	}
	if (!xd_rate_take(&d->rate, XD_OWNER_LOCAL | uid, xr_now_ns())) {
		xd_log_ratelimited(XD_LOG_WARN, "user %u starts sessions "
				   "faster than --max-session-rate %u a "
				   "second: refusing a connection",
				   (unsigned int)uid, d->rate_per_s);
		return 0;
	}
	return 1;
}

static void xd_accept_local(struct xd_daemon *d)
{
	struct xd_local_conn lc = { .d = d, .cg = -1 };
	char group[32];
	struct ucred cr;
	socklen_t len;
	uint32_t session;
	pid_t pid;
	int fd;

	for (;;) {
		fd = xd_accept_one(d->lfd);
		if (fd < 0)
			return;
		/* The kernel's word, taken at connect(): no lie possible. */
		len = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
			cr.uid = (uid_t)-1;
		if (!xd_local_room(d, cr.uid)) {
			xd_refuse(fd, -EBUSY);
			continue;
		}
		session = xd_super_new_session(&d->super);
		lc.fd = fd;
		/* A group per user: one user's sessions share its limits. */
		snprintf(group, sizeof(group), "local-uid%u",
			 (unsigned int)cr.uid);
		pid = xd_spawn(d, group, session, &lc.cg, xd_local_body, &lc);
		if (pid < 0) {
			xd_refuse(fd, -EAGAIN);
		} else {
			xd_super_set_owner(&d->super, pid,
					   XD_OWNER_LOCAL | cr.uid);
			close(fd);
		}
	}
}

struct xd_xen_conn {
	struct xd_daemon *d;
	int fd;
	int cg;
	struct xcuda_back_event ev;
};

/* A worker's life on a Xen session. */
static int xd_xen_body(void *arg, uint32_t session)
{
	struct xd_xen_conn *xc = arg;
	struct xd_chan c;
	int ret;

	(void)session;
	/* Everything after ATTACH works without privilege. */
	if (xd_confine(xc->d, xc->cg, (long)xc->ev.domid))
		return 1;
	ret = xd_xen_accept(xc->fd, &c, &xc->ev);
	if (ret) {
		xd_log(XD_LOG_WARN, "cannot set up the arena for domain %u: "
		       "%s", xc->ev.domid, strerror(-ret));
		return 2;
	}
	/* Checked by xcuda-back; terminated here all the same. */
	xc->ev.upstream[sizeof(xc->ev.upstream) - 1] = 0;
	return xd_serve(xc->d, &c, xc->ev.upstream,
			xc->ev.gpumem ? xc->ev.gpumem : xc->d->gpumem);
}

struct xd_tcp_conn {
	struct xd_daemon *d;
	int fd;
	int cg;
};

/* A worker's life on a relay's connection (the GPU server's side). */
static int xd_tcp_body(void *arg, uint32_t session)
{
	struct xd_tcp_conn *tc = arg;
	struct xd_tcp_conf conf = { &tc->d->key, tc->d->lim.max_arena };
	struct xd_chan c;

	/* Before a byte from the network is read. */
	if (xd_confine(tc->d, tc->cg, -1))
		return 1;
	if (xd_tcp_accept(tc->fd, &c, &conf, session))
		return 2;
	return xd_worker_gpumem(&c, tc->d->gpumem);
}

static void xd_accept_tcp(struct xd_daemon *d)
{
	struct xd_tcp_conn tc = { .d = d, .cg = -1 };
	char peer[64];
	int fd;

	for (;;) {
		fd = xd_accept_one(d->tfd);
		if (fd < 0)
			return;
		/* The parent never waits on the network: no answer here. */
		if (xd_super_full(&d->super)) {
			xd_up_peer_name(fd, peer, sizeof(peer));
			xd_log_ratelimited(XD_LOG_WARN, "%u sessions already: "
					   "refusing relay %s",
					   d->super.live, peer);
			close(fd);
			continue;
		}
		tc.fd = fd;
		/* Relays' sessions name no domain of ours: one group. */
		xd_spawn(d, "relay", xd_super_new_session(&d->super), &tc.cg,
			 xd_tcp_body, &tc);
		close(fd);
	}
}

/* Reads the key and opens the TCP side of the upstream link, if any. */
static int xd_upstream_start(struct xd_daemon *d)
{
	uint8_t id[XCUDA_UP_NONCE];
	char why[160];

	d->tfd = -1;
	if (!d->key_path)
		return 0;
	if (xd_up_key_load(d->key_path, &d->key, why, sizeof(why))) {
		xd_log(XD_LOG_ERROR, "key %s: %s", d->key_path, why);
		return -1;
	}
	if (xd_up_nonce(id)) {
		xd_log(XD_LOG_ERROR, "cannot draw the daemon's id");
		return -1;
	}
	memcpy(d->origin, id, sizeof(d->origin));
	if (d->upstream_addr) {
		char host[256], port[16];

		if (xd_up_addr_split(d->upstream_addr, host, sizeof(host),
				     port, sizeof(port)) || !*host) {
			xd_log(XD_LOG_ERROR, "--upstream '%s' is not HOST:PORT",
			       d->upstream_addr);
			return -1;
		}
		xd_log(XD_LOG_INFO, "relaying every session to %s",
		       d->upstream_addr);
		return 0;
	}
	/* The key alone: for the upstreams xl configurations name. */
	if (!d->listen_addr)
		return 0;
	d->tfd = xd_up_listen(d->listen_addr, why, sizeof(why));
	if (d->tfd < 0) {
		xd_log(XD_LOG_ERROR, "cannot listen for relays on %s", why);
		return -1;
	}
	xd_super_parent_fd(&d->super, d->tfd);
	xd_log(XD_LOG_INFO, "listening for relays on %s", d->listen_addr);
	return 0;
}

static void xd_xen_close_control(struct xd_daemon *d, const char *why)
{
	xd_log(XD_LOG_WARN, "stopped serving Xen guests: %s", why);
	xd_super_forget_fd(&d->super, d->xfd);
	close(d->xfd);
	d->xfd = -1;
}

/* Whose workers: a guest's device, never 0. */
static uint64_t xd_xen_owner(const struct xcuda_back_event *ev)
{
	return XD_OWNER_XEN | (uint64_t)ev->domid << 32 | ev->devid;
}

static void xd_xen_session(struct xd_daemon *d,
			   const struct xcuda_back_event *ev)
{
	struct xd_xen_conn xc = { .d = d, .cg = -1, .ev = *ev };
	char group[32];
	unsigned int n;
	pid_t pid;

	if (xd_super_full(&d->super)) {
		xd_log_ratelimited(XD_LOG_WARN, "%u sessions already: "
				   "refusing one of domain %u",
				   d->super.live, ev->domid);
		xd_xen_refuse(d->xfd, ev->token, EBUSY);
		return;
	}
	if (!xd_rate_take(&d->rate, XD_OWNER_XEN | (uint64_t)ev->domid << 32,
			  xr_now_ns())) {
		xd_log_ratelimited(XD_LOG_WARN, "domain %u starts sessions "
				   "faster than --max-session-rate %u a "
				   "second: refusing one", ev->domid,
				   d->rate_per_s);
		xd_xen_refuse(d->xfd, ev->token, EAGAIN);
		return;
	}
	/* The backend's limit is the device's; ours holds as well. */
	if (ev->arena_size > d->lim.max_arena) {
		xd_log_ratelimited(XD_LOG_WARN, "domain %u asks for an arena "
				   "of %llu MiB, more than --max-arena %llu: "
				   "refusing the session", ev->domid,
				   (unsigned long long)(ev->arena_size >> 20),
				   (unsigned long long)(d->lim.max_arena >>
							20));
		xd_xen_refuse(d->xfd, ev->token, ENOSPC);
		return;
	}
	n = xd_super_count(&d->super, XD_OWNER_DOMAIN_MASK,
			   XD_OWNER_XEN | (uint64_t)ev->domid << 32);
	if (n >= d->max_domain) {
		xd_log_ratelimited(XD_LOG_WARN, "domain %u has %u sessions "
				   "(--max-domain-sessions): refusing one",
				   ev->domid, n);
		xd_xen_refuse(d->xfd, ev->token, EBUSY);
		return;
	}
	xc.fd = xd_xen_attach(d->xen_device, ev->token);
	if (xc.fd < 0) {
		/* Gone already (the guest process died), or a broken one. */
		xd_log_ratelimited(XD_LOG_WARN, "cannot attach to a session "
				   "of domain %u: %s", ev->domid,
				   strerror(-xc.fd));
		return;
	}
	xd_log(XD_LOG_DEBUG, "domain %u device %u: session %08x, arena %llu "
	       "bytes", ev->domid, ev->devid, ev->session,
	       (unsigned long long)ev->arena_size);
	snprintf(group, sizeof(group), "dom%u", ev->domid);
	pid = xd_spawn(d, group, ev->session, &xc.cg, xd_xen_body, &xc);
	if (pid < 0)
		xd_xen_refuse(d->xfd, ev->token, EAGAIN);
	else
		xd_super_set_owner(&d->super, pid, xd_xen_owner(ev));
	close(xc.fd);
}

static void xd_xen_events(struct xd_daemon *d, short revents)
{
	struct xcuda_back_event ev;
	unsigned int n;
	int ret;

	if (revents & (POLLERR | POLLNVAL)) {
		xd_xen_close_control(d, "the control file failed");
		return;
	}
	while ((ret = xd_xen_next_event(d->xfd, &ev)) > 0) {
		switch (ev.type) {
		case XCUDA_BACK_EV_SESSION:
			xd_xen_session(d, &ev);
			break;
		case XCUDA_BACK_EV_GONE:
			/*
			 * Its sessions are over: a worker blocked in CUDA (a
			 * kernel that never ends) would never see it, and
			 * would hold its GPU memory and our slot forever.
			 */
			n = xd_super_kill_owner(&d->super, xd_xen_owner(&ev));
			xd_log(XD_LOG_INFO, "domain %u device %u "
			       "disconnected: %u worker%s killed", ev.domid,
			       ev.devid, n, n == 1 ? "" : "s");
			break;
		default:
			xd_log_ratelimited(XD_LOG_WARN, "unknown event %u "
					   "from the backend", ev.type);
			break;
		}
	}
	if (ret < 0)
		xd_xen_close_control(d, strerror(-ret));
}

static void xd_xen_start(struct xd_daemon *d)
{
	const char *dev = d->xen_device ? d->xen_device : XD_XEN_DEVICE;
	int fd;

	if (d->no_xen)
		return;
	fd = xd_xen_control_open(d->xen_device);
	if (fd == -ENOENT && !d->xen_device) {
		xd_log(XD_LOG_INFO, "no %s (xcuda-back.ko not loaded): "
		       "serving the local transport only", dev);
		return;
	}
	if (fd < 0) {
		xd_log(XD_LOG_WARN, "cannot serve Xen guests on %s: %s", dev,
		       strerror(-fd));
		return;
	}
	d->xfd = fd;
	xd_super_parent_fd(&d->super, fd);
	xd_log(XD_LOG_INFO, "serving Xen guests on %s", dev);
}

static int xd_signals(struct xd_daemon *d, sigset_t *old)
{
	sigset_t set;

	/* Replies to guests that left must not kill anyone. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, old))
		return -1;
	d->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return d->sfd < 0 ? -1 : 0;
}

/* Returns 1 when the daemon must stop. */
static int xd_on_signal(struct xd_daemon *d)
{
	struct signalfd_siginfo si;
	int stop = 0;

	while (read(d->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			xd_super_reap(&d->super);
			break;
		case SIGTERM:
		case SIGINT:
			xd_log(XD_LOG_INFO, "%s: shutting down",
			       strsignal((int)si.ssi_signo));
			stop = 1;
			break;
		default:
			break;
		}
	}
	return stop;
}

/* A session is gone: what it shared with other workers goes too. */
static void xd_session_gone(uint32_t session)
{
	xd_ipc_forget_session(session);
	xd_broker_forget_session(session);
	xd_gpumem_forget_session(session);
	xd_cgroup_forget_session(session);
}

/*
 * Fills @p after its first @base entries with the workers' channels, and
 * @kid with the worker each belongs to.  Returns the entries in all.
 */
static unsigned int xd_poll_workers(const struct xd_super *sv,
				    struct pollfd *p, unsigned int *kid,
				    unsigned int base)
{
	unsigned int i, n = base;

	for (i = 0; i < sv->max; i++) {
		if (!sv->kids[i].pid || sv->kids[i].chan < 0)
			continue;
		p[n].fd = sv->kids[i].chan;
		p[n].events = POLLIN;
		p[n].revents = 0;
		kid[n++] = i;
	}
	return n;
}

/* Answers the workers' channels that poll() found ready. */
static void xd_serve_workers(struct xd_super *sv, const struct pollfd *p,
			     const unsigned int *kid, unsigned int base,
			     unsigned int n)
{
	struct xd_child *k;
	unsigned int i;

	for (i = base; i < n; i++) {
		k = &sv->kids[kid[i]];
		if (!p[i].revents || k->chan != p[i].fd)
			continue;
		/* A broken channel is closed; the worker runs on. */
		if (!(p[i].revents & POLLIN) ||
		    xd_broker_serve(k->chan, k->session)) {
			close(k->chan);
			k->chan = -1;
		}
	}
}

int main(int argc, char **argv)
{
	struct xd_daemon d;
	struct pollfd *p;
	unsigned int *kid, n;
	struct stat st;
	sigset_t old;
	int stop = 0, gm_err;

	memset(&d, 0, sizeof(d));
	d.lfd = -1;
	d.sfd = -1;
	d.xfd = -1;
	d.tfd = -1;
	if (xd_options(&d, argc, argv))
		return 2;
	xd_log_setup(d.level, d.use_syslog);
	if (xd_user_resolve(&d.user, d.user_name))
		return 1;
	if (d.uid_range && d.user.active) {
		xd_uid_range_parse(d.uid_range, &d.user.range_first,
				   &d.user.range_last);
		if (d.user.range_first <= d.user.uid &&
		    d.user.uid <= d.user.range_last) {
			xd_log(XD_LOG_ERROR, "--uid-range %s holds the uid of "
			       "'%s'", d.uid_range, d.user.name);
			return 1;
		}
	}
	d.sandbox.user = &d.user;
	d.sandbox.deny = d.xen_device ? d.xen_device : XD_XEN_DEVICE;
	xd_rlimits_settle(&d.rlimits);
	d.sandbox.rlimits = &d.rlimits;
	xd_sandbox_describe(&d.sandbox);
	/*
	 * Not root: the workers share our uid, so nothing of ours may be
	 * open to them (/proc/PID/mem, ptrace): we are not dumpable.
	 */
	if (!d.user.active && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		xd_log(XD_LOG_WARN, "cannot become undumpable: %s",
		       strerror(errno));
	/* Asked for: without them the daemon does not start. */
	if (xd_cgroup_setup(&d.cgroup)) {
		xd_log(XD_LOG_ERROR, "cannot set up the workers' cgroups in "
		       "%s (--cgroup)", d.cgroup.dir);
		return 1;
	}
	d.sandbox.deny_write = xd_cgroup_dir();
	if (xd_super_init(&d.super, d.max_sessions) ||
	    xd_signals(&d, &old)) {
		xd_log(XD_LOG_ERROR, "cannot start: %s", strerror(errno));
		return 1;
	}
	d.super.child_mask = old;
	/* Before any worker: they all inherit the one table. */
	if (xd_ipc_table_create(0) < 0)
		xd_log(XD_LOG_WARN, "no IPC table: cudaIpc* handles will "
		       "not open");
	d.super.gone = xd_session_gone;
	/* The key and the TCP address before anything else is set up. */
	if (xd_upstream_start(&d))
		return 1;
	d.lfd = xd_listen(d.socket_path, &d.sock_ino);
	if (d.lfd < 0)
		return 1;
	xd_super_parent_fd(&d.super, d.lfd);
	xd_super_parent_fd(&d.super, d.sfd);
	/* Once the socket is ours (no other daemon's file is replaced). */
	gm_err = asprintf(&d.gpumem_path, "%s" XD_GPUMEM_FILE_SUFFIX,
			  d.socket_path) < 0 ? -ENOMEM :
		 xd_gpumem_create(d.max_sessions, d.gpumem_path);
	if (gm_err) {
		xd_log(XD_LOG_ERROR, "cannot create the GPU memory table "
		       "%s: %s", d.gpumem_path ? d.gpumem_path : "",
		       strerror(-gm_err));
		return 1;
	}
	xd_log(XD_LOG_INFO, "listening on %s: at most %u sessions (%u from "
	       "this socket, %u a user, %u a domain), arena %llu MiB, ring "
	       "order %u, workers run as %s", d.socket_path, d.max_sessions,
	       d.max_local, d.max_uid, d.max_domain,
	       (unsigned long long)(d.lim.max_arena >> 20),
	       d.lim.max_ring_order, d.user.name);
	xd_log(XD_LOG_INFO, "GPU memory per domain: %lld MiB, per uid on "
	       "the local socket: %lld MiB (-1: no quota)",
	       d.gpumem == XD_GPUMEM_NONE ? -1LL : (long long)(d.gpumem >> 20),
	       d.local_gpumem == XD_GPUMEM_NONE ? -1LL :
	       (long long)(d.local_gpumem >> 20));

	xd_xen_start(&d);

	p = calloc(4 + d.max_sessions, sizeof(*p));
	kid = calloc(4 + d.max_sessions, sizeof(*kid));
	if (!p || !kid) {
		xd_log(XD_LOG_ERROR, "cannot start: out of memory");
		return 1;
	}
	p[0].fd = d.sfd;
	p[0].events = POLLIN;
	p[1].fd = d.lfd;
	p[1].events = POLLIN;
	p[2].events = POLLIN;
	p[3].fd = d.tfd;	/* -1 when not listening: ignored */
	p[3].events = POLLIN;
	while (!stop) {
		/* A negative fd is ignored by poll(): Xen may come and go. */
		p[2].fd = d.xfd;
		p[2].revents = 0;
		p[3].revents = 0;
		n = xd_poll_workers(&d.super, p, kid, 4);
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			xd_log(XD_LOG_ERROR, "poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents)
			stop = xd_on_signal(&d);
		if (!stop)
			xd_serve_workers(&d.super, p, kid, 4, n);
		if (!stop && p[1].revents)
			xd_accept_local(&d);
		if (!stop && d.tfd >= 0 && p[3].revents)
			xd_accept_tcp(&d);
		if (!stop && d.xfd >= 0 && p[2].revents)
			xd_xen_events(&d, p[2].revents);
	}

	close(d.lfd);
	if (!stat(d.socket_path, &st) && st.st_ino == d.sock_ino)
		unlink(d.socket_path);
	if (d.xfd >= 0)
		close(d.xfd);
	if (d.tfd >= 0)
		close(d.tfd);
	xd_super_stop_all(&d.super, 2000);
	xd_cgroup_fini();
	xd_up_key_wipe(&d.key);
	xd_super_fini(&d.super);
	xd_ipc_table_destroy();
	xd_gpumem_destroy();
	free(d.gpumem_path);
	free(p);
	free(kid);
	xd_user_free(&d.user);
	close(d.sfd);
	xd_log(XD_LOG_INFO, "stopped");
	return 0;
}
