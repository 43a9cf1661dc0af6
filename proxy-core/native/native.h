/* What each source of Airlock's native addon gives to addon.c, which names it to JavaScript. */
#ifndef AIRLOCK_NATIVE_H
#define AIRLOCK_NATIVE_H
#define NAPI_VERSION 8
#include <node_api.h>

#ifdef __linux__
napi_value airlock_set_child_subreaper(napi_env env, napi_callback_info info);
napi_value airlock_reap(napi_env env, napi_callback_info info);
napi_value airlock_mtime_range(napi_env env, napi_callback_info info);
#endif
napi_value airlock_peer_credentials(napi_env env, napi_callback_info info);

#endif
