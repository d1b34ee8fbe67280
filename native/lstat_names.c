/*
 * Batched lstat for the workspace scan; src/world/scan/lstatNames.ts does the same in
 * JavaScript when this is not built.
 *
 * Why this exists: a warm snapshot stats every file of the workspace, and Node's
 * lstatSync spends about 2 us of JavaScript around each 1 us system call (a Stats
 * object per file, then garbage to collect). Here the calls go straight to fstatat on a
 * directory descriptor, and the check of the index's files runs on both cores. Times
 * are computed exactly as Node computes mtimeMs and ctimeMs (sec * 1e3 + nsec / 1e6 in
 * doubles, no fused multiply-add: binding.gyp), so an index written from either is read
 * the same by the other.
 *
 * lstatNames(dir, names, out): lstat each of `names` (one string or Buffer, NUL-separated) inside
 * directory `dir`, writing per name into the Float64Array `out`: file type and mode,
 * size, mtime and ctime in milliseconds, inode. A name that cannot be stat-ed gets
 * -errno as its mode. Returns 0, or -errno when `dir` itself cannot be opened.
 *
 * startFilesCheck(root, dirPaths, dirRows, names, kinds, stats): begins checking, for
 * every directory of the workspace index, whether each of its file rows still has the
 * recorded stat and executable bit (not racy, not gone). A thread of libuv's pool works
 * from the last directory back while the scan asks for them from the first:
 * filesCheck(job, dir) takes the directory itself when the thread has not, or waits for
 * the thread's answer, and returns 1 (all hold), 0 (some file differs) or -errno (the
 * directory cannot be opened). filesStop(job): the scan is done asking; the thread
 * stops after the directory it is on.
 */
#define NAPI_VERSION 8
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* gcc takes -ffp-contract=off from binding.gyp */
#endif
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__APPLE__)
#define st_mtim st_mtimespec
#define st_ctim st_ctimespec
#endif

#define FIELDS 5
/* Index rows (src/world/scan/indexFile.ts): kind in the low bits, RACY a flag; four stat fields. */
#define KIND_MASK 0x0f
#define FILE_ROW 0
#define EXEC_ROW 1
#define RACY 0x20
#define INDEX_FIELDS 4

enum { TODO, TAKEN, DONE };

/* Marks the handles startFilesCheck makes, so that no other external passes for one. */
static const napi_type_tag FILES_CHECK_TAG = {0x8f1c2b7d5e4a4c61ULL, 0xb0d3e6a9c2f41857ULL};

static double ms_of(struct timespec t) {
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static napi_value int_value(napi_env env, int32_t n) {
  napi_value v;
  napi_create_int32(env, n, &v);
  return v;
}

/* A descriptor to stat names relative to: like lstat, it needs search permission only, not read. */
static int open_dir(const char* path) {
#ifdef O_PATH
  return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
  return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
}

/* A UTF-8 copy of a JS string (malloc'd, NUL-terminated), its length in *len; NULL on failure. */
static char* utf8_of(napi_env env, napi_value value, size_t* len) {
  if (napi_get_value_string_utf8(env, value, NULL, 0, len) != napi_ok) return NULL;
  char* text = malloc(*len + 1);
  if (text && napi_get_value_string_utf8(env, value, text, *len + 1, len) != napi_ok) {
    free(text);
    return NULL;
  }
  return text;
}

/*
 * The bytes of a path or a NUL-separated list of names (malloc'd, NUL-terminated), its
 * length in *len: a Uint8Array (Buffer) as it is, since file names are bytes and need not
 * be UTF-8 (src/util/fsName.ts), or a string as UTF-8. NULL on failure.
 */
static char* bytes_of(napi_env env, napi_value value, size_t* len) {
  bool is_typed = false;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return utf8_of(env, value, len);
  napi_typedarray_type type;
  void* data = NULL;
  if (napi_get_typedarray_info(env, value, &type, len, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) return NULL;
  char* text = malloc(*len + 1);
  if (!text) return NULL;
  if (*len) memcpy(text, data, *len);
  text[*len] = '\0';
  return text;
}

/* Whether `value` is a typed array of `type`: its data in *data (NULL when empty), its element count in *len. */
static int typed_data(napi_env env, napi_value value, napi_typedarray_type type, void** data, size_t* len) {
  napi_typedarray_type actual;
  return napi_get_typedarray_info(env, value, &actual, len, data, NULL, NULL) == napi_ok && actual == type;
}

/* ---- lstatNames ---- */

static napi_value lstat_names(napi_env env, napi_callback_info info) {
  size_t argc = 3, dir_len, names_len, out_len;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  double* out = NULL;
  int ok = argc == 3 && typed_data(env, argv[2], napi_float64_array, (void**)&out, &out_len);
  char* dir = ok ? bytes_of(env, argv[0], &dir_len) : NULL;
  char* names = dir ? bytes_of(env, argv[1], &names_len) : NULL;
  if (!names) {
    free(dir);
    napi_throw_type_error(env, NULL, "lstatNames(dir: string | Buffer, names: string | Buffer, out: Float64Array)");
    return NULL;
  }
  int32_t code = 0;
  int fd = open_dir(dir);
  if (fd < 0) {
    code = -errno;
  } else {
    size_t slot = 0;
    for (char* name = names; name <= names + names_len && (slot + 1) * FIELDS <= out_len; slot++) {
      struct stat st;
      double* o = out + slot * FIELDS;
      memset(o, 0, FIELDS * sizeof(double));
      if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        o[0] = (double)st.st_mode;
        o[1] = (double)st.st_size;
        o[2] = ms_of(st.st_mtim);
        o[3] = ms_of(st.st_ctim);
        o[4] = (double)st.st_ino;
      } else {
        o[0] = -(double)errno;
      }
      name += strlen(name) + 1;
    }
    close(fd);
  }
  free(dir);
  free(names);
  return int_value(env, code);
}

/* ---- the files check ---- */

/*
 * A check owns copies of everything its thread reads (a few hundred KB for 10k files),
 * so nothing the JS heap may free or move is touched off the JS thread, even while a
 * worker's environment is torn down.
 */
typedef struct {
  size_t dirs, rows;
  char** dir_paths;      /* "root/dir" of each directory */
  uint32_t* dir_rows;    /* first row, row count */
  char* names;           /* NUL-separated */
  const char** row_names;
  uint8_t* kinds;
  double* stats;         /* four per row */
  _Atomic int* state;    /* per directory: TODO, TAKEN, DONE */
  int32_t* answer;
  atomic_bool stop;      /* the scan is done asking: the thread takes no more */
  napi_async_work work;
  int owners;            /* the thread's work and the JS handle: freed when both are done */
} files_check_t;

/* Whether file row `kind` (not racy) still has stat `row` (size, mtime, ctime, inode) as `st`. */
static int row_holds(uint8_t kind, const double* row, const struct stat* st) {
  if ((kind & RACY) != 0 || !S_ISREG(st->st_mode)) return 0;
  int exec = (st->st_mode & 0111) != 0;
  if ((kind & KIND_MASK) != (exec ? EXEC_ROW : FILE_ROW)) return 0;
  return row[0] == (double)st->st_size && row[1] == ms_of(st->st_mtim) && row[2] == ms_of(st->st_ctim) && row[3] == (double)st->st_ino;
}

static int is_file_row(uint8_t kind) {
  uint8_t low = kind & KIND_MASK;
  return low == FILE_ROW || low == EXEC_ROW;
}

static int32_t check_dir(const files_check_t* job, size_t dir) {
  size_t first = job->dir_rows[2 * dir], end = first + job->dir_rows[2 * dir + 1];
  size_t row = first;
  while (row < end && !is_file_row(job->kinds[row])) row++;
  if (row == end) return 1; /* no files: nothing to stat (a directory of directories) */
  int fd = open_dir(job->dir_paths[dir]);
  if (fd < 0) return -errno;
  int32_t holds = 1;
  for (; row < end && holds == 1; row++) {
    if (!is_file_row(job->kinds[row])) continue;
    struct stat st;
    if (fstatat(fd, job->row_names[row], &st, AT_SYMLINK_NOFOLLOW) != 0 || !row_holds(job->kinds[row], job->stats + row * INDEX_FIELDS, &st)) holds = 0;
  }
  close(fd);
  return holds;
}

/* Check `dir` unless the other side took it first; returns whether this side did. */
static int take_and_check(files_check_t* job, size_t dir) {
  int expected = TODO;
  if (!atomic_compare_exchange_strong(&job->state[dir], &expected, TAKEN)) return 0;
  job->answer[dir] = check_dir(job, dir);
  atomic_store(&job->state[dir], DONE);
  return 1;
}

static void check_from_the_back(napi_env env, void* data) {
  (void)env;
  files_check_t* job = data;
  for (size_t dir = job->dirs; dir-- > 0 && !atomic_load(&job->stop);) take_and_check(job, dir);
}

static void free_job(files_check_t* job) {
  if (job->dir_paths) {
    for (size_t i = 0; i < job->dirs; i++) free(job->dir_paths[i]);
  }
  free(job->dir_paths);
  free(job->dir_rows);
  free(job->names);
  free(job->row_names);
  free(job->kinds);
  free(job->stats);
  free((void*)job->state);
  free(job->answer);
  free(job);
}

/* Both run on the JS thread: the work's completion, and the handle's finalizer. */
static void disown(files_check_t* job) {
  if (--job->owners == 0) free_job(job);
}

static void checked(napi_env env, napi_status status, void* data) {
  (void)status;
  files_check_t* job = data;
  napi_delete_async_work(env, job->work);
  disown(job);
}

static void release_job(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  files_check_t* job = data;
  atomic_store(&job->stop, 1);
  disown(job);
}

/* Split `text` (len bytes, NUL-separated) into `count` pointers; 0 when the counts disagree. */
static int split_names(const char* text, size_t len, const char** out, size_t count) {
  size_t n = 0;
  for (const char* p = text; p < text + len && n < count; p += strlen(p) + 1) out[n++] = p;
  return n == count;
}

/* A malloc'd copy of `len` bytes (at least one byte allocated), or NULL. */
static void* copy_of(const void* data, size_t len) {
  void* copy = malloc(len ? len : 1);
  if (copy && len) memcpy(copy, data, len);
  return copy;
}

/* Fill `job` from the columns; 0 when they do not fit together (or memory ran out). */
static int fill_job(files_check_t* job, const char* root, const char* paths, size_t paths_len, const uint32_t* dir_rows, const char* names, size_t names_len, const uint8_t* kinds, const double* stats) {
  size_t n = job->dirs ? job->dirs : 1;
  job->dir_paths = calloc(n, sizeof(char*));
  job->state = calloc(n, sizeof(_Atomic int));
  job->answer = calloc(n, sizeof(int32_t));
  job->row_names = calloc(job->rows ? job->rows : 1, sizeof(char*));
  job->dir_rows = copy_of(dir_rows, job->dirs * 2 * sizeof(uint32_t));
  job->kinds = copy_of(kinds, job->rows);
  job->stats = copy_of(stats, job->rows * INDEX_FIELDS * sizeof(double));
  job->names = malloc(names_len + 1);
  if (!job->dir_paths || !job->state || !job->answer || !job->row_names || !job->dir_rows || !job->kinds || !job->stats || !job->names) return 0;
  if (names_len) memcpy(job->names, names, names_len);
  job->names[names_len] = '\0';
  if (!split_names(job->names, names_len + 1, job->row_names, job->rows)) return 0;
  const char* rel = paths;
  for (size_t dir = 0; dir < job->dirs; dir++, rel += strlen(rel) + 1) {
    if (rel > paths + paths_len || (size_t)job->dir_rows[2 * dir] + job->dir_rows[2 * dir + 1] > job->rows) return 0;
    size_t len = strlen(root) + 1 + strlen(rel) + 1;
    if (!(job->dir_paths[dir] = malloc(len))) return 0;
    if (*rel) snprintf(job->dir_paths[dir], len, "%s/%s", root, rel);
    else snprintf(job->dir_paths[dir], len, "%s", root);
  }
  return 1;
}

static napi_value start_files_check(napi_env env, napi_callback_info info) {
  size_t argc = 6, root_len, paths_len, dir_rows_len, names_len, kinds_len, stats_len;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char* usage = "startFilesCheck(root: string, dirPaths: string, dirRows: Uint32Array, names: Uint8Array, kinds: Uint8Array, stats: Float64Array)";
  uint32_t* dir_rows;
  char* names;
  uint8_t* kinds;
  double* stats;
  int typed = argc == 6 && typed_data(env, argv[2], napi_uint32_array, (void**)&dir_rows, &dir_rows_len) && typed_data(env, argv[3], napi_uint8_array, (void**)&names, &names_len) &&
              typed_data(env, argv[4], napi_uint8_array, (void**)&kinds, &kinds_len) && typed_data(env, argv[5], napi_float64_array, (void**)&stats, &stats_len);
  if (!typed || stats_len != kinds_len * INDEX_FIELDS || dir_rows_len % 2 != 0) return napi_throw_type_error(env, NULL, usage), NULL;
  char* root = bytes_of(env, argv[0], &root_len);
  char* paths = root ? bytes_of(env, argv[1], &paths_len) : NULL;
  files_check_t* job = paths ? calloc(1, sizeof *job) : NULL;
  if (job) {
    job->dirs = dir_rows_len / 2;
    job->rows = kinds_len;
  }
  int ok = job && fill_job(job, root, paths, paths_len, dir_rows, names, names_len, kinds, stats);
  free(root);
  free(paths);
  if (!ok) {
    if (job) free_job(job);
    return napi_throw_error(env, NULL, "startFilesCheck: the index columns do not fit together"), NULL;
  }
  /* The handle first: once it exists, its finalizer owns the job; the work is a second owner only once queued. */
  napi_value name, handle = NULL;
  job->owners = 1;
  if (napi_create_external(env, job, release_job, NULL, &handle) != napi_ok || napi_type_tag_object(env, handle, &FILES_CHECK_TAG) != napi_ok) {
    if (!handle) free_job(job);
    return napi_throw_error(env, NULL, "startFilesCheck: cannot make the job's handle"), NULL;
  }
  if (napi_create_string_utf8(env, "forkpoint:filesCheck", NAPI_AUTO_LENGTH, &name) == napi_ok &&
      napi_create_async_work(env, NULL, name, check_from_the_back, checked, job, &job->work) == napi_ok) {
    if (napi_queue_async_work(env, job->work) == napi_ok) job->owners = 2;
    else napi_delete_async_work(env, job->work);
  }
  /* Not queued: the JS thread checks every directory itself when asked. */
  return handle;
}

/* The job behind a handle made by startFilesCheck, or NULL (after throwing a TypeError). */
static files_check_t* job_of(napi_env env, napi_value handle, const char* usage) {
  bool tagged = false;
  void* job = NULL;
  if (napi_check_object_type_tag(env, handle, &FILES_CHECK_TAG, &tagged) != napi_ok || !tagged || napi_get_value_external(env, handle, &job) != napi_ok) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  return job;
}

/* filesStop(job): the scan asks no more; the thread stops after its current directory. */
static napi_value files_stop(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  files_check_t* job = argc == 1 ? job_of(env, argv[0], "filesStop(job)") : NULL;
  if (!job) {
    if (argc != 1) napi_throw_type_error(env, NULL, "filesStop(job)");
    return NULL;
  }
  atomic_store(&job->stop, 1);
  return NULL;
}

static napi_value files_check(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  uint32_t dir;
  const char* usage = "filesCheck(job, dir: index of a directory)";
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 2) return napi_throw_type_error(env, NULL, usage), NULL;
  files_check_t* job = job_of(env, argv[0], usage);
  if (!job) return NULL;
  if (napi_get_value_uint32(env, argv[1], &dir) != napi_ok || dir >= job->dirs) return napi_throw_type_error(env, NULL, usage), NULL;
  if (!take_and_check(job, dir)) {
    while (atomic_load(&job->state[dir]) != DONE) sched_yield();
  }
  return int_value(env, job->answer[dir]);
}

static void export_function(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn);
  napi_set_named_property(env, exports, name, fn);
}

NAPI_MODULE_INIT() {
  export_function(env, exports, "lstatNames", lstat_names);
  export_function(env, exports, "startFilesCheck", start_files_check);
  export_function(env, exports, "filesCheck", files_check);
  export_function(env, exports, "filesStop", files_stop);
  return exports;
}
