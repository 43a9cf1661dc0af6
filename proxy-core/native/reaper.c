/*
 * Airlock's process reaper, Linux only: the two system calls Node does not offer. The wrapper makes itself a
 * child subreaper (prctl PR_SET_CHILD_SUBREAPER), so a process its server started that leaves its parent behind
 * (setsid, a double fork) is reparented to the wrapper instead of to init, and stays findable as a descendant;
 * once such an orphan is killed, the wrapper reaps it by its pid. Never waitpid(-1): libuv reaps its own
 * children by pid, and must keep finding them.
 */
#include "native.h"
#include <errno.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

/* setChildSubreaper(): true when this process is now a child subreaper. */
napi_value airlock_set_child_subreaper(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  napi_get_boolean(env, prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, &result);
  return result;
}

/* reap(pid): true when pid was a child of this process that had ended and is now reaped (never blocks). */
napi_value airlock_reap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value result;
  int32_t pid = 0;
  int status = 0;
  pid_t got;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &pid) != napi_ok || pid <= 0) {
    napi_throw_type_error(env, NULL, "reap(pid): pid must be a positive integer");
    return NULL;
  }
  do {
    got = waitpid((pid_t)pid, &status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  napi_get_boolean(env, got == (pid_t)pid, &result);
  return result;
}
