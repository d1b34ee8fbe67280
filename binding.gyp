{
  "targets": [
    {
      "target_name": "forkpoint_native",
      "sources": ["native/lstat_names.c"],
      "cflags": ["-O2", "-ffp-contract=off"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2", "-ffp-contract=off"] }
    }
  ]
}
