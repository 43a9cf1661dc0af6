# Airlock's optional native reaper (reaper.c), Linux only: built by build/native.mjs at install, never required
# (the wrapper falls back to finding descendants through /proc). Node-API, so the same binary loads in Node and
# in Electron's Node.
{
  "targets": [
    {
      "target_name": "airlock_reaper",
      "conditions": [["OS=='linux'", { "sources": ["reaper.c"] }]],
      "cflags": ["-Wall", "-Wextra", "-O2"]
    }
  ]
}
