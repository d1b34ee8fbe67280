/*
 * Batched lstat of a directory's entries, for the workspace scan (src/world/lstatNames.ts
 * has the same two functions in JavaScript, used when this is not built):
 *
 * lstatNames(dir, names, out): lstat each of `names` (one string, NUL-separated) inside
 * directory `dir`, writing per name into the Float64Array `out`: file type and mode,
 * size, mtime and ctime in milliseconds, inode. A name that cannot be stat-ed gets
 * -errno as its mode. Returns 0, or -errno when `dir` itself cannot be opened.
 *
 * filesUnchanged(dir, names, kinds, stats): whether every file row of an index directory
 * (`names` NUL-separated, `kinds` their kind bytes, `stats` their size, mtime, ctime,
 * inode) still has that stat and executable bit, none is marked racy, and none is gone.
 * Returns 1 or 0 (at the first difference), or -errno when `dir` cannot be opened.
 *
 * Why this exists: a warm snapshot stats every file of the workspace, and Node's
 * lstatSync spends about 2 us of JavaScript around each 1 us system call (a Stats
 * object per file, then garbage to collect). Here the calls go straight to fstatat on
 * one directory descriptor. The times are computed exactly as Node computes mtimeMs and
 * ctimeMs (sec * 1e3 + nsec / 1e6 in doubles, no fused multiply-add), so an index written
 * from either is read the same by the other.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIELDS 5
/* Index rows (src/world/indexFile.ts): kind in the low bits, RACY a flag; four stat fields. */
#define KIND_MASK 0x0f
#define FILE_ROW 0
#define EXEC_ROW 1
#define RACY 0x20
#define INDEX_FIELDS 4

static double ms_of(struct timespec t) {
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void put_stat(double* o, const struct stat* st) {
  o[0] = (double)st->st_mode;
  o[1] = (double)st->st_size;
  o[2] = ms_of(st->st_mtim);
  o[3] = ms_of(st->st_ctim);
  o[4] = (double)st->st_ino;
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

static napi_value result(napi_env env, int32_t code) {
  napi_value r;
  napi_create_int32(env, code, &r);
  return r;
}

static napi_value lstat_names(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 3) {
    napi_throw_type_error(env, NULL, "lstatNames(dir, names, out)");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length;
  void* data;
  if (napi_get_typedarray_info(env, argv[2], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_float64_array) {
    napi_throw_type_error(env, NULL, "out must be a Float64Array");
    return NULL;
  }
  size_t dir_len, names_len;
  char* dir = utf8_of(env, argv[0], &dir_len);
  char* names = utf8_of(env, argv[1], &names_len);
  if (!dir || !names) {
    free(dir);
    free(names);
    napi_throw_type_error(env, NULL, "dir and names must be strings");
    return NULL;
  }
  int32_t code = 0;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    code = -errno;
  } else {
    double* out = data;
    size_t slot = 0;
    for (char* name = names; name <= names + names_len && (slot + 1) * FIELDS <= length; slot++) {
      size_t n = strlen(name);
      struct stat st;
      double* o = out + slot * FIELDS;
      if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        put_stat(o, &st);
      } else {
        memset(o, 0, FIELDS * sizeof(double));
        o[0] = -(double)errno;
      }
      name += n + 1;
    }
    close(fd);
  }
  free(dir);
  free(names);
  return result(env, code);
}

/* Whether file row `kind` (not racy) still has stat `row` (size, mtime, ctime, inode) as `st`. */
static int row_holds(uint8_t kind, const double* row, const struct stat* st) {
  if ((kind & RACY) != 0 || !S_ISREG(st->st_mode)) return 0;
  int exec = (st->st_mode & 0111) != 0;
  if ((kind & KIND_MASK) != (exec ? EXEC_ROW : FILE_ROW)) return 0;
  return row[0] == (double)st->st_size && row[1] == ms_of(st->st_mtim) && row[2] == ms_of(st->st_ctim) && row[3] == (double)st->st_ino;
}

static napi_value files_unchanged(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_typedarray_type kinds_type, stats_type;
  size_t kinds_len, stats_len;
  void *kinds_data, *stats_data;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4 ||
      napi_get_typedarray_info(env, argv[2], &kinds_type, &kinds_len, &kinds_data, NULL, NULL) != napi_ok || kinds_type != napi_uint8_array ||
      napi_get_typedarray_info(env, argv[3], &stats_type, &stats_len, &stats_data, NULL, NULL) != napi_ok || stats_type != napi_float64_array ||
      stats_len != kinds_len * INDEX_FIELDS) {
    napi_throw_type_error(env, NULL, "filesUnchanged(dir, names, kinds: Uint8Array, stats: Float64Array of 4 per kind)");
    return NULL;
  }
  size_t dir_len, names_len;
  char* dir = utf8_of(env, argv[0], &dir_len);
  char* names = utf8_of(env, argv[1], &names_len);
  if (!dir || !names) {
    free(dir);
    free(names);
    napi_throw_type_error(env, NULL, "dir and names must be strings");
    return NULL;
  }
  int32_t unchanged = 1;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    unchanged = -errno;
  } else {
    const uint8_t* kinds = kinds_data;
    const double* stats = stats_data;
    char* name = names;
    for (size_t row = 0; row < kinds_len && unchanged == 1; row++) {
      if (name > names + names_len) {
        unchanged = 0; /* fewer names than kinds */
        break;
      }
      uint8_t kind = kinds[row];
      uint8_t low = kind & KIND_MASK;
      if (low == FILE_ROW || low == EXEC_ROW) {
        struct stat st;
        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !row_holds(kind, stats + row * INDEX_FIELDS, &st)) unchanged = 0;
      }
      name += strlen(name) + 1;
    }
    close(fd);
  }
  free(dir);
  free(names);
  return result(env, unchanged);
}

static void export_function(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value fn;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn);
  napi_set_named_property(env, exports, name, fn);
}

NAPI_MODULE_INIT() {
  export_function(env, exports, "lstatNames", lstat_names);
  export_function(env, exports, "filesUnchanged", files_unchanged);
  return exports;
}
