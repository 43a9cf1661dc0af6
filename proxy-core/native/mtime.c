/*
 * The modification times of many files in one call: the launcher's check that the wrap bundle is at least as
 * new as every compiled file it was made from (proxy-core/bin/airlock.js) stats about a hundred files before a
 * wrapper may spawn its server, and through fs.statSync each costs a wrapper's start some 45 µs (its Stats
 * object and four Dates, in code not yet compiled); here, about one system call each. Milliseconds as Node's
 * mtimeMs computes them, so the two ways compare alike. Linux only (the launcher uses it only there).
 */
#include "native.h"
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static napi_value null_value(napi_env env) {
  napi_value result;
  napi_get_null(env, &result);
  return result;
}

/*
 * mtimeRange(dir, names): [oldest, newest] modification time (ms) of the files dir + "/" + name, or null when
 * any cannot be read (missing, a path too long, a name not a string, an empty list): the caller then checks the
 * slow way, which says why.
 */
napi_value airlock_mtime_range(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  char path[PATH_MAX];
  size_t dir_len = 0;
  uint32_t count = 0;
  bool is_array = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return null_value(env);
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof(path), &dir_len) != napi_ok) return null_value(env);
  // a directory name that filled the buffer may have been cut
  if (dir_len == 0 || dir_len >= sizeof(path) - 2) return null_value(env);
  if (napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array) return null_value(env);
  if (napi_get_array_length(env, argv[1], &count) != napi_ok || count == 0) return null_value(env);
  path[dir_len] = '/';
  double oldest = 0, newest = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value name;
    napi_valuetype type;
    size_t name_len = 0;
    size_t room = sizeof(path) - dir_len - 1;
    if (napi_get_element(env, argv[1], i, &name) != napi_ok || napi_typeof(env, name, &type) != napi_ok || type != napi_string)
      return null_value(env);
    if (napi_get_value_string_utf8(env, name, path + dir_len + 1, room, &name_len) != napi_ok || name_len == 0 ||
        name_len >= room - 1 || strlen(path + dir_len + 1) != name_len)
      return null_value(env);
    struct stat st;
    if (stat(path, &st) != 0) return null_value(env);
    double ms = (double)st.st_mtim.tv_sec * 1000 + (double)st.st_mtim.tv_nsec / 1e6;
    if (i == 0 || ms < oldest) oldest = ms;
    if (i == 0 || ms > newest) newest = ms;
  }
  napi_value result, value;
  napi_create_array_with_length(env, 2, &result);
  napi_create_double(env, oldest, &value);
  napi_set_element(env, result, 0, value);
  napi_create_double(env, newest, &value);
  napi_set_element(env, result, 1, value);
  return result;
}
