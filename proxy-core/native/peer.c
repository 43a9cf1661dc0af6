/*
 * Who is on the other end of a Unix socket, as the kernel recorded it when that end connected: the one answer
 * a same-user process cannot forge by what it writes on the socket. Linux: SO_PEERCRED (pid, uid, gid).
 * macOS: LOCAL_PEERPID and getpeereid (uid, gid). Elsewhere the call answers null.
 */
#ifdef __linux__
#define _GNU_SOURCE /* struct ucred */
#endif
#include "native.h"
#include <sys/types.h>
#include <sys/socket.h>
#ifdef __APPLE__
#include <sys/un.h>
#include <unistd.h>
#endif

static napi_value null_value(napi_env env) {
  napi_value result;
  napi_get_null(env, &result);
  return result;
}

static napi_value credentials(napi_env env, int64_t pid, int64_t uid, int64_t gid) {
  napi_value result, value;
  napi_create_object(env, &result);
  napi_create_int64(env, pid, &value);
  napi_set_named_property(env, result, "pid", value);
  napi_create_int64(env, uid, &value);
  napi_set_named_property(env, result, "uid", value);
  napi_create_int64(env, gid, &value);
  napi_set_named_property(env, result, "gid", value);
  return result;
}

/* peerCredentials(fd): { pid, uid, gid } of the socket's peer, or null when the system does not say. */
napi_value airlock_peer_credentials(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "peerCredentials(fd): fd must be a non-negative integer");
    return NULL;
  }
#if defined(__linux__)
  {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred) || cred.pid <= 0)
      return null_value(env);
    return credentials(env, cred.pid, cred.uid, cred.gid);
  }
#elif defined(__APPLE__)
  {
    pid_t pid = 0;
    socklen_t len = sizeof(pid);
    uid_t uid;
    gid_t gid;
    if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &pid, &len) != 0 || pid <= 0) return null_value(env);
    if (getpeereid(fd, &uid, &gid) != 0) return null_value(env);
    return credentials(env, pid, uid, gid);
  }
#else
  return null_value(env);
#endif
}
