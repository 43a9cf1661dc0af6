# Airlock's optional native addon, built by install.mjs at install, never required: without it the wrapper
# finds a server's descendants through /proc, and the broker knows no socket peer (presence proofs that need
# one are refused). Linux: the reaper, peer credentials, and many files' times at once (the launcher's check of
# the wrap bundle; without it, fs.statSync each); macOS: peer credentials. Node-API, so the same
# binary loads in Node and in Electron's Node.
{
  "targets": [
    {
      "target_name": "airlock_native",
      "conditions": [
        ["OS=='linux'", { "sources": ["addon.c", "reaper.c", "peer.c", "mtime.c"] }],
        ["OS=='mac'", { "sources": ["addon.c", "peer.c"] }]
      ],
      "cflags": ["-Wall", "-Wextra", "-O2"]
    }
  ]
}
