/*
 * Airlock's optional native addon: the few system calls Node does not offer. Each source holds one concern
 * (reaper.c: orphans of a server's process tree, Linux only; peer.c: who is on the other end of a Unix socket;
 * mtime.c: the times of many files at once, for the launcher, Linux only);
 * this file names them to JavaScript.
 */
#include "native.h"

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
#ifdef __linux__
    {"setChildSubreaper", NULL, airlock_set_child_subreaper, NULL, NULL, NULL, napi_default, NULL},
    {"reap", NULL, airlock_reap, NULL, NULL, NULL, napi_default, NULL},
    {"mtimeRange", NULL, airlock_mtime_range, NULL, NULL, NULL, napi_default, NULL},
#endif
    {"peerCredentials", NULL, airlock_peer_credentials, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
