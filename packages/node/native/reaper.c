/*
 * agent-terminal-reaper: ends the process trees of an owner that died, whatever killed it (SIGKILL and the
 * OOM killer included). A native port of the reaper of `Reaper.ts` (`reaperMain.ts` is the Node fallback,
 * `internal/teardown/reaper.ts`, `internal/teardown/hostExit.ts` and `internal/teardown/treeTracker.ts` the same rules in TypeScript):
 * a process of a few hundred KiB instead of a second Node runtime.
 *
 * Started detached (its own session and process group) with a pipe from its owner as its stdin. The owner
 * writes one line per tree it starts and ends:
 *
 *   track <root pid> <root start time> <cgroup path, hex, or -> <marker NAME=value, hex, or ->
 *   untrack <root pid> <root start time>
 *
 * At the end of the pipe (the owner is gone: the kernel closes it however the owner died) it kills every tree
 * still tracked: `cgroup.kill` of the trees' cgroups, then SIGKILL rounds (~100 ms) over each tree's
 * processes — found from the /proc table by parent, and by the process groups and sessions the tree created,
 * each fenced by its identity (pid + start time) — then every process whose environment carries a tree's
 * marker (~300 ms of rounds), removes the emptied cgroups and their parents, says what it did on stderr, and
 * exits. Never signalled: pid 1, itself, its ancestors, its own process group.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KILL_ROUNDS_MS 100
#define CGROUP_EMPTY_MS 100
#define MARKER_ROUNDS_MS 300
#define MAX_LINE 16384

typedef unsigned long long u64;

typedef struct {
  int pid, ppid, pgid, sid;
  u64 start;
  char state;
} Proc;

/* The process table at one instant: open addressing by pid. */
typedef struct {
  Proc *slots;
  size_t capacity, count;
} Table;

typedef struct {
  int root;
  u64 start;
  char *cgroup;
  char *marker;
  int live;
} Tree;

static Tree *trees;
static size_t tree_count, tree_capacity;

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

static void *grow(void *items, size_t *capacity, size_t size) {
  size_t next = *capacity == 0 ? 16 : *capacity * 2;
  void *more = realloc(items, next * size);
  if (more == NULL) {
    fputs("agent-terminal reaper: out of memory\n", stderr);
    exit(1);
  }
  *capacity = next;
  return more;
}

/* The whole file (small /proc files), NUL-terminated; its length in *length. NULL when unreadable. */
static char *read_file(const char *path, size_t *length) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  size_t capacity = 4096, used = 0;
  char *buffer = malloc(capacity + 1);
  for (;;) {
    if (buffer == NULL) break;
    ssize_t n = read(fd, buffer + used, capacity - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += (size_t)n;
    if (used == capacity) {
      capacity *= 2;
      char *more = realloc(buffer, capacity + 1);
      if (more == NULL) {
        free(buffer);
        buffer = NULL;
        break;
      }
      buffer = more;
    }
  }
  close(fd);
  if (buffer == NULL) return NULL;
  buffer[used] = '\0';
  if (length != NULL) *length = used;
  return buffer;
}

/* /proc/<pid>/stat: the fields after the last ')' (the command name may hold anything). */
static int read_stat(int pid, Proc *out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  char *text = read_file(path, NULL);
  if (text == NULL) return 0;
  char *close_paren = strrchr(text, ')');
  int ok = 0;
  if (close_paren != NULL && close_paren[1] == ' ') {
    char state;
    int ppid, pgid, sid;
    u64 start;
    /* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
       priority nice num_threads itrealvalue starttime */
    if (sscanf(close_paren + 2, "%c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
               &state, &ppid, &pgid, &sid, &start) == 5) {
      out->pid = pid;
      out->ppid = ppid;
      out->pgid = pgid;
      out->sid = sid;
      out->start = start;
      out->state = state;
      ok = 1;
    }
  }
  free(text);
  return ok;
}

static int gone(const Proc *p) { return p->state == 'Z' || p->state == 'X'; }

static Proc *lookup(const Table *table, int pid) {
  if (table->capacity == 0) return NULL;
  for (size_t i = (size_t)pid % table->capacity;; i = (i + 1) % table->capacity) {
    if (table->slots[i].pid == 0) return NULL;
    if (table->slots[i].pid == pid) return &table->slots[i];
  }
}

static void table_put(Table *table, const Proc *p) {
  for (size_t i = (size_t)p->pid % table->capacity;; i = (i + 1) % table->capacity) {
    if (table->slots[i].pid == 0 || table->slots[i].pid == p->pid) {
      if (table->slots[i].pid == 0) table->count++;
      table->slots[i] = *p;
      return;
    }
  }
}

static void table_free(Table *table) {
  free(table->slots);
  table->slots = NULL;
  table->capacity = table->count = 0;
}

/* Every process of /proc, with its stat; those that vanish between the listing and the read are skipped. */
static Table read_table(void) {
  Table table = {NULL, 0, 0};
  DIR *dir = opendir("/proc");
  if (dir == NULL) return table;
  size_t n = 0, capacity = 0;
  int *pids = NULL;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (n == capacity) pids = grow(pids, &capacity, sizeof *pids);
    pids[n++] = (int)pid;
  }
  closedir(dir);
  table.capacity = n * 2 + 16;
  table.slots = calloc(table.capacity, sizeof *table.slots);
  if (table.slots == NULL) {
    free(pids);
    table.capacity = 0;
    return table;
  }
  for (size_t i = 0; i < n; i++) {
    Proc p;
    if (read_stat(pids[i], &p)) table_put(&table, &p);
  }
  free(pids);
  return table;
}

/* The same process still holds the pid (same start time) and has not died. */
static int identity_holds(int pid, u64 start) {
  Proc p;
  return read_stat(pid, &p) && p.start == start && !gone(&p);
}

/* What must never be signalled: pid 1, this process and its ancestors, and members of its process group. */
typedef struct {
  int self;
  int pgid, sid, known;
  int *lineage;
  size_t lineage_count, lineage_capacity;
} Guard;

static Guard make_guard(const Table *table) {
  Guard guard = {getpid(), 0, 0, 0, NULL, 0, 0};
  Proc *self = lookup(table, guard.self);
  if (self != NULL) {
    guard.pgid = self->pgid;
    guard.sid = self->sid;
    guard.known = 1;
  }
  guard.lineage = grow(NULL, &guard.lineage_capacity, sizeof(int));
  guard.lineage[guard.lineage_count++] = guard.self;
  for (Proc *current = self; current != NULL && current->ppid > 1;) {
    int seen = 0;
    for (size_t i = 0; i < guard.lineage_count; i++) seen |= guard.lineage[i] == current->ppid;
    if (seen) break;
    if (guard.lineage_count == guard.lineage_capacity) {
      guard.lineage = grow(guard.lineage, &guard.lineage_capacity, sizeof(int));
    }
    guard.lineage[guard.lineage_count++] = current->ppid;
    current = lookup(table, current->ppid);
  }
  return guard;
}

static int untouchable(const Guard *guard, int pid) {
  if (pid <= 1) return 1;
  for (size_t i = 0; i < guard->lineage_count; i++) {
    if (guard->lineage[i] == pid) return 1;
  }
  return 0;
}

/* Whether `p` may be signalled: not ours, not of our group (nothing at all when our own stat was unreadable). */
static int may_signal(const Guard *guard, const Proc *p) {
  if (untouchable(guard, p->pid)) return 0;
  return guard->known && p->pgid != guard->pgid;
}

/* pid → start time (0: none), a small map. */
typedef struct {
  int *keys;
  u64 *values;
  size_t count, capacity;
} IdMap;

static long idmap_find(const IdMap *map, int key) {
  for (size_t i = 0; i < map->count; i++) {
    if (map->keys[i] == key) return (long)i;
  }
  return -1;
}

static void idmap_set(IdMap *map, int key, u64 value) {
  long at = idmap_find(map, key);
  if (at >= 0) {
    map->values[at] = value;
    return;
  }
  if (map->count == map->capacity) {
    size_t capacity = map->capacity;
    map->keys = grow(map->keys, &capacity, sizeof(int));
    map->values = grow(map->values, &map->capacity, sizeof(u64));
  }
  map->keys[map->count] = key;
  map->values[map->count++] = value;
}

/*
 * One tree's processes, each by identity, gathered over repeated scans: a process whose parent is a member
 * (or the root) by identity; a process in a process group or session created by a member or the root.
 */
typedef struct {
  int root;
  u64 root_start;
  IdMap members;
  IdMap owners;
} Tracker;

static Tracker make_tracker(const Guard *guard, int root, u64 root_start) {
  Tracker tracker = {root, root_start, {NULL, NULL, 0, 0}, {NULL, NULL, 0, 0}};
  if (!untouchable(guard, root)) idmap_set(&tracker.owners, root, root_start);
  return tracker;
}

static Proc *root_of(const Tracker *tracker, const Table *table) {
  Proc *root = lookup(table, tracker->root);
  return root != NULL && root->start == tracker->root_start ? root : NULL;
}

static int owned_id(const Tracker *tracker, const Table *table, const Guard *guard, int id) {
  if ((guard->known && (id == guard->pgid || id == guard->sid))) return 0;
  long at = idmap_find(&tracker->owners, id);
  if (at < 0) return 0;
  Proc *holder = lookup(table, id);
  return holder == NULL || holder->start == tracker->owners.values[at];
}

static int child_of_tree(const Tracker *tracker, const Table *table, const Proc *p) {
  if (p->ppid == tracker->root) return root_of(tracker, table) != NULL;
  long at = idmap_find(&tracker->members, p->ppid);
  if (at < 0) return 0;
  Proc *parent = lookup(table, p->ppid);
  return parent != NULL && parent->start == tracker->members.values[at];
}

static void capture(Tracker *tracker, const Table *table, const Guard *guard) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (size_t i = 0; i < table->capacity; i++) {
      const Proc *p = &table->slots[i];
      if (p->pid == 0 || p->pid == tracker->root || gone(p) || untouchable(guard, p->pid)) continue;
      long at = idmap_find(&tracker->members, p->pid);
      if (at >= 0 && tracker->members.values[at] == p->start) continue;
      if (!(child_of_tree(tracker, table, p) || owned_id(tracker, table, guard, p->pgid) ||
            owned_id(tracker, table, guard, p->sid))) {
        continue;
      }
      idmap_set(&tracker->members, p->pid, p->start);
      if (may_signal(guard, p)) idmap_set(&tracker->owners, p->pid, p->start);
      changed = 1;
    }
  }
}

/* The pids signalled, for the report. */
static int *killed;
static size_t killed_count, killed_capacity;

static void note_killed(int pid) {
  for (size_t i = 0; i < killed_count; i++) {
    if (killed[i] == pid) return;
  }
  if (killed_count == killed_capacity) killed = grow(killed, &killed_capacity, sizeof(int));
  killed[killed_count++] = pid;
}

static void kill_if_same(const Guard *guard, const Proc *p) {
  if (!may_signal(guard, p) || !identity_holds(p->pid, p->start)) return;
  kill(p->pid, SIGKILL);
  note_killed(p->pid);
}

static char *join(const char *dir, const char *name) {
  size_t length = strlen(dir) + strlen(name) + 2;
  char *path = malloc(length);
  if (path != NULL) snprintf(path, length, "%s/%s", dir, name);
  return path;
}

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text);
}

/* Whether the cgroup holds pid 1, this process or an ancestor: then it is never killed whole. */
static int cgroup_holds_us(const Guard *guard, const char *dir) {
  char *path = join(dir, "cgroup.procs");
  char *text = path == NULL ? NULL : read_file(path, NULL);
  free(path);
  if (text == NULL) return 0;
  int holds = 0;
  for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (untouchable(guard, atoi(line))) holds = 1;
  }
  free(text);
  return holds;
}

static int cgroup_unpopulated(const char *dir) {
  char *path = join(dir, "cgroup.events");
  char *text = path == NULL ? NULL : read_file(path, NULL);
  free(path);
  if (text == NULL) return 1;
  int empty = strstr(text, "populated 0") != NULL;
  free(text);
  return empty;
}

/* cgroup.kill of every tree's cgroup, then KILL rounds over each tree (~100 ms), then the cgroups removed. */
static void kill_trees(void) {
  Table first = read_table();
  Guard guard = make_guard(&first);
  int *killed_cgroup = calloc(tree_count + 1, sizeof(int));
  for (size_t t = 0; t < tree_count; t++) {
    if (!trees[t].live || trees[t].cgroup == NULL || cgroup_holds_us(&guard, trees[t].cgroup)) continue;
    char *path = join(trees[t].cgroup, "cgroup.kill");
    if (path != NULL && write_file(path, "1") && killed_cgroup != NULL) killed_cgroup[t] = 1;
    free(path);
  }
  Tracker *trackers = calloc(tree_count + 1, sizeof(Tracker));
  size_t tracker_count = 0;
  for (size_t t = 0; trackers != NULL && t < tree_count; t++) {
    if (trees[t].live && !untouchable(&guard, trees[t].root)) {
      trackers[tracker_count++] = make_tracker(&guard, trees[t].root, trees[t].start);
    }
  }
  long deadline = now_ms() + KILL_ROUNDS_MS;
  Table table = first;
  for (;;) {
    size_t targets = 0;
    for (size_t k = 0; k < tracker_count; k++) {
      Tracker *tracker = &trackers[k];
      capture(tracker, &table, &guard);
      for (size_t m = 0; m < tracker->members.count; m++) {
        Proc *p = lookup(&table, tracker->members.keys[m]);
        if (p == NULL || p->start != tracker->members.values[m] || gone(p)) continue;
        if (may_signal(&guard, p) && identity_holds(p->pid, p->start)) {
          kill(p->pid, SIGKILL);
          note_killed(p->pid);
          targets++;
        }
      }
      Proc *root = root_of(tracker, &table);
      if (root != NULL && may_signal(&guard, root) && identity_holds(root->pid, root->start)) {
        kill(root->pid, SIGKILL);
        note_killed(root->pid);
        targets++;
      }
    }
    /* The deadline bounds the rescans for forks, never the first round: a reaper descheduled for longer than
       the deadline (a loaded machine) still kills what it found. */
    if (targets == 0 || now_ms() >= deadline) break;
    sleep_ms(2);
    table_free(&table);
    table = read_table();
  }
  table_free(&table);
  long empty_by = now_ms() + CGROUP_EMPTY_MS;
  for (size_t t = 0; killed_cgroup != NULL && t < tree_count; t++) {
    if (!killed_cgroup[t]) continue;
    while (!cgroup_unpopulated(trees[t].cgroup) && now_ms() < empty_by) sleep_ms(2);
    rmdir(trees[t].cgroup);
  }
  free(killed_cgroup);
  free(guard.lineage);
  for (size_t k = 0; k < tracker_count; k++) {
    free(trackers[k].members.keys);
    free(trackers[k].members.values);
    free(trackers[k].owners.keys);
    free(trackers[k].owners.values);
  }
  free(trackers);
}

/* Whether the environment (NUL-separated) holds one of the live trees' markers. */
static int carries_marker(const char *environ, size_t length) {
  for (size_t at = 0; at < length; at += strlen(environ + at) + 1) {
    for (size_t t = 0; t < tree_count; t++) {
      if (trees[t].live && trees[t].marker != NULL && strcmp(environ + at, trees[t].marker) == 0) return 1;
    }
  }
  return 0;
}

/* SIGKILL every process carrying a tree's marker, in rounds (~300 ms): one forking meanwhile is caught next. */
static void kill_marked(void) {
  int any = 0;
  for (size_t t = 0; t < tree_count; t++) any |= trees[t].live && trees[t].marker != NULL;
  if (!any) return;
  long deadline = now_ms() + MARKER_ROUNDS_MS;
  for (;;) {
    Table table = read_table();
    Guard guard = make_guard(&table);
    size_t targets = 0;
    for (size_t i = 0; i < table.capacity; i++) {
      const Proc *p = &table.slots[i];
      if (p->pid == 0 || gone(p) || !may_signal(&guard, p)) continue;
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/environ", p->pid);
      size_t length;
      char *environ = read_file(path, &length);
      if (environ == NULL) continue;
      if (carries_marker(environ, length)) {
        kill_if_same(&guard, p);
        targets++;
      }
      free(environ);
    }
    free(guard.lineage);
    table_free(&table);
    if (targets == 0 || now_ms() >= deadline) break;
    sleep_ms(2);
  }
}

static char *unhex(const char *text) {
  if (strcmp(text, "-") == 0) return NULL;
  size_t length = strlen(text);
  if (length % 2 != 0) return NULL;
  char *out = malloc(length / 2 + 1);
  if (out == NULL) return NULL;
  for (size_t i = 0; i < length / 2; i++) {
    unsigned int byte;
    if (sscanf(text + 2 * i, "%2x", &byte) != 1) {
      free(out);
      return NULL;
    }
    out[i] = (char)byte;
  }
  out[length / 2] = '\0';
  return out;
}

static void handle(char *line) {
  char op[16], cgroup[MAX_LINE], marker[MAX_LINE];
  int root;
  u64 start;
  int fields = sscanf(line, "%15s %d %llu %16383s %16383s", op, &root, &start, cgroup, marker);
  if (fields >= 3 && strcmp(op, "untrack") == 0) {
    for (size_t t = 0; t < tree_count; t++) {
      if (trees[t].live && trees[t].root == root && trees[t].start == start) {
        trees[t].live = 0;
        free(trees[t].cgroup);
        free(trees[t].marker);
        trees[t].cgroup = trees[t].marker = NULL;
      }
    }
  } else if (fields == 5 && strcmp(op, "track") == 0) {
    size_t at = tree_count;
    for (size_t t = 0; t < tree_count; t++) {
      if (!trees[t].live) {
        at = t;
        break;
      }
    }
    if (at == tree_count) {
      if (tree_count == tree_capacity) trees = grow(trees, &tree_capacity, sizeof *trees);
      tree_count++;
    }
    trees[at] = (Tree){root, start, unhex(cgroup), unhex(marker), 1};
  }
}

static char *parent_dir(const char *path) {
  char *copy = strdup(path);
  if (copy == NULL) return NULL;
  char *slash = strrchr(copy, '/');
  if (slash == NULL || slash == copy) {
    free(copy);
    return NULL;
  }
  *slash = '\0';
  return copy;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  const char *owner = argc > 1 ? argv[1] : "?";
  static char buffer[MAX_LINE * 2 + 64];
  size_t used = 0;
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buffer + used, sizeof buffer - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += (size_t)n;
    buffer[used] = '\0';
    char *start = buffer, *newline;
    while ((newline = memchr(start, '\n', used - (size_t)(start - buffer))) != NULL) {
      *newline = '\0';
      handle(start);
      start = newline + 1;
    }
    used -= (size_t)(start - buffer);
    memmove(buffer, start, used);
    if (used == sizeof buffer - 1) used = 0; /* a line longer than any message: not one */
  }
  long started = now_ms();
  size_t live = 0;
  for (size_t t = 0; t < tree_count; t++) live += trees[t].live;
  if (live == 0) return 0;
  kill_trees();
  kill_marked();
  for (size_t t = 0; t < tree_count; t++) {
    if (!trees[t].live || trees[t].cgroup == NULL) continue;
    char *parent = parent_dir(trees[t].cgroup);
    if (parent != NULL) rmdir(parent);
    free(parent);
  }
  fprintf(stderr, "agent-terminal reaper: owner %s is gone: %zu tree(s) it still held ended, %zu process(es) killed (",
          owner, live, killed_count);
  for (size_t i = 0; i < killed_count; i++) fprintf(stderr, "%s%d", i == 0 ? "" : " ", killed[i]);
  fprintf(stderr, "%s) in %ld ms\n", killed_count == 0 ? "none alive" : "", now_ms() - started);
  return 0;
}
