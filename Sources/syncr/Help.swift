/// The help texts; `man/syncr.1` says the same at more length.
enum Help {
    static let overview = """
    Usage: syncr <command> [options] [MANIFEST]

    Keeps files in sync with a YAML manifest: downloads what is missing or changed, resumes what
    was cut off, skips what is up to date, and never leaves a half-written file in place.

    Commands:
      validate [MANIFEST]   Check a manifest and report every error with its position.
      plan [MANIFEST]       Ask every server and show what apply would do, byte-exact.
      apply [MANIFEST]      Carry out the plan.
      zip SRC_DIR OUT.zip   Zip a folder (paths relative to SRC_DIR, no top-level folder).
      unzip ARCHIVE DEST    Unpack a zip, tar or tar.gz into DEST, replacing it in one step.
      version               Print the version, commit and library versions (also --version).
      help [COMMAND]        Show help for a command or subcommand (also COMMAND --help).
      init [FILE]           Write a commented starter syncr.yml (never overwrites one).
      cache [MANIFEST]      List the cache: each entry's state, size on disk, URL and age.
      cache prune           Remove cache entries nothing uses (--older-than, --dry-run).
      completions SHELL     Print a completion script for bash, zsh or fish.
      lock [MANIFEST]       Write the lockfile (syncr.lock): size, ETag, SHA-256 of each download.
      report merge FILE...  Merge the --report (or --junit) files of a sharded run (-o OUT).

    MANIFEST defaults to syncr.yml in the current folder.

    Sources and targets: http:// and https:// URLs, and s3://BUCKET/KEY for AWS S3 and
    S3-compatible stores (MinIO, Ceph, SeaweedFS, R2); a key ending in / is every object under
    that prefix. s3:// requests are signed with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
    AWS_SESSION_TOKEN unless the manifest names an s3.profile, else with the profile's
    (s3.profile, AWS_PROFILE, "default") from ~/.aws/credentials and ~/.aws/config (or
    AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE); the store and region come from the
    manifest's s3: block, else AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION,
    AWS_DEFAULT_REGION. Secret keys and tokens are never printed. Large uploads go up in
    parts, and a killed upload resumes from the parts the store holds.

    Exit codes:
      0   success (for plan: every entry planned, and nothing to do or --detailed-exitcode
          not given)
      1   at least one entry failed, or for plan could not be planned (the others still ran
          to completion); cache prune, lock or report merge failed; stdout could not be written
      2   plan --detailed-exitcode: there is work to do
      64  bad command line, or no command (this overview is then printed on stderr)
      65  invalid manifest (or it cannot be read); with --locked, a missing or stale lockfile,
          or another manifest's (data.yml and data.yaml share data.lock)
      75  another syncr run is using the same cache: apply (see --lock-timeout), and cache
          prune and lock --hash, which do not wait
      130 interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: progress is saved, and running
          the same command again resumes

    See 'syncr help <command>' and man syncr(1), syncr-manifest(5).
    """

    static func text(for command: CommandName) -> String {
        switch command {
        case .validate:
            return """
            Usage: syncr validate [--quiet] [MANIFEST]

            Parses the manifest and reports every error found as FILE:LINE:COL with the source
            line and a caret. Asks no server. Exits 0 when valid, 65 when not.

            Options:
              --quiet               Print nothing when the manifest is valid.
              -h, --help            Show this help.
            """
        case .plan:
            return """
            Usage: syncr plan [--json] [--detailed-exitcode] [--cache DIR] [--jobs N] [--force]
                              [--no-fsync] [--quiet] [--shard I/N|auto] [--locked] [MANIFEST]

            Sends HEAD to every server (a ranged GET where HEAD is refused), compares the answers
            with the cache and the destinations, and prints each entry's action: skip, download,
            resume (with the offset), restart or upload, with sizes and a reason. Changes nothing.
            Takes no lock on the cache, so it may run while an apply does (it then shows the
            cache as it is at that moment).

            Options:
              --json                Print one JSON object: {"version": 1, "items": [...], "totals": {...}}.
              --detailed-exitcode   Exit 2 when there is work to do, 0 when everything is up to date.
              --cache DIR           Use DIR as the cache folder instead of the manifest's 'cache:'.
              --jobs N              Ask up to N servers at once (default: defaults.jobs, 4).
              --force               Plan to upload even what is unchanged since the last upload.
              --no-fsync            Plan as apply --no-fsync would run (the plan then says so).
              --quiet               Print only the totals line.
              --shard I/N|auto      Plan only shard I of N (1-based) and say which entries and how
                                    many bytes it holds; auto reads the CI engine's variables.
              --locked              Plan against the lockfile (syncr.lock): see apply --help.
              -h, --help            Show this help.
            """
        case .apply:
            return """
            Usage: syncr apply [--json] [--cache DIR] [--jobs N] [--connections N] [--force]
                               [--no-fsync] [--quiet] [--progress MODE] [--progress-interval TIME]
                               [--report FILE] [--junit FILE] [--lock-timeout TIME]
                               [--shard I/N|auto] [--locked] [MANIFEST]

            Plans, then does what the plan says: up to N entries at once, resuming partial
            downloads, retrying with backoff, verifying checksums, moving each file into place
            only when it is complete, and sending uploads streamed from disk. Progress and the
            summary go to stderr; stdout carries only the --json output.

            One run at a time uses a cache folder (it locks syncr.lock in the cache). Ctrl-C
            (SIGINT) or SIGTERM stops the transfers and saves what arrived; the same command
            run again resumes. A second Ctrl-C quits at once, still without harm to the cache.

            Options:
              --json                Print the results as one JSON object on stdout.
              --cache DIR           Use DIR as the cache folder instead of the manifest's 'cache:'.
              --jobs N              Transfer up to N files at once (default: defaults.jobs, 4).
              --connections N       Fetch each file of at least min_split over up to N parallel
                                    Range requests (default: connections, 8).
              --force               Upload even what is unchanged since the last upload.
              --no-fsync            Flush nothing to disk (as fsync: false): safe if syncr is
                                    killed, not against a power loss. For ephemeral CI runners.
              --lock-timeout TIME   When another syncr run is using the same cache, wait up to
                                    TIME (30s, 5m, 1h) for it to finish (default 0: exit 75 at once).
              --quiet               Print only the summary, which names each failure (not with
                                    --progress bar or plain).
              --progress MODE       auto (default): bar on a terminal, plain otherwise; bar: one line
                                    per transfer and a total, redrawn in place; plain: whole lines
                                    only (start, finish, a summary every interval); none: no progress.
              --progress-interval TIME
                                    How often plain mode prints a summary line (default 10s; e.g.
                                    500ms, 30s, 1m).
              --report FILE         Also write the --json output to FILE.
              --junit FILE          Write a JUnit XML report to FILE: one test case per entry,
                                    failed entries as failures with their error.
              --shard I/N|auto      Run only shard I of N (1-based): each entry is in exactly one
                                    shard, and every machine splits the manifest alike (by a hash
                                    of the destination; by bytes when a lockfile is beside the
                                    manifest). auto reads CI_NODE_INDEX/CI_NODE_TOTAL (GitLab),
                                    JOB_COMPLETION_INDEX/SYNCR_SHARD_TOTAL (Kubernetes),
                                    BUILDKITE_PARALLEL_JOB/_COUNT, CIRCLE_NODE_INDEX/_TOTAL, or
                                    SYNCR_SHARD=I/N, and says which it used.
              --locked              Fetch exactly what the lockfile beside the manifest (syncr
                                    lock) pins: a download it lacks stops the run (exit 65); a
                                    server whose size or ETag changed fails that entry and leaves
                                    its destination; bytes must match its SHA-256. A destination
                                    syncr verified against that SHA-256, unchanged since, is up to
                                    date without a request.
              -h, --help            Show this help.
            """
        case .zip:
            return """
            Usage: syncr zip [--deterministic] [--quiet] SRC_DIR OUT.zip

            Zips the folder SRC_DIR into OUT.zip: paths relative to SRC_DIR, sorted, UTF-8 names,
            Unix permissions, symbolic links that stay inside the folder, ZIP64 only where
            needed. Files already compressed are stored. OUT.zip appears only when complete; an
            existing OUT.zip is replaced only when it is a zip archive or empty. Timestamps come
            from SOURCE_DATE_EPOCH when it is set (whole seconds; another value is refused).

            Options:
              --deterministic       Fixed timestamps: the same tree always gives the same bytes.
              --quiet               Print nothing on success.
              -h, --help            Show this help.
            """
        case .unzip:
            return """
            Usage: syncr unzip [--strip-components N] [--max-unpacked-size SIZE] [--replace] [--quiet]
                               ARCHIVE DEST_DIR

            Unpacks a .zip, .tar, .tar.gz or .tgz (format from the name, then from the first
            bytes) into a staging folder beside DEST_DIR, and replaces DEST_DIR with it in one
            step once every entry was unpacked and verified. A DEST_DIR that is or holds the
            current folder, or holds the archive, is refused; so is one that holds a file the
            archive does not (the replace would delete it), unless --replace. Refuses absolute
            paths, '..', absolute links, links that point outside, duplicate names and zip bombs,
            naming the entry: data beyond an entry's declared size, overlapping entries, and a
            total that would not fit in the free space of DEST_DIR's file system.

            Options:
              --strip-components N  Drop N leading path components from every entry (like tar);
                                    two entries that it makes one name are refused.
              --max-unpacked-size SIZE
                                    Refuse an archive that unpacks to more than SIZE (like
                                    512MiB or 2GiB), before writing it where the sizes are
                                    declared. Default: only the free space limits it.
              --replace             Replace DEST_DIR even where it holds files the archive does
                                    not: they are deleted with the old folder.
              --quiet               Print nothing on success.
              -h, --help            Show this help.
            """
        case .version:
            return """
            Usage: syncr version [--json]

            Prints syncr's version, the git commit it was built from ("unknown" for a build
            that was not told), and the versions of libcurl, libyaml, zlib and OpenSSL it runs
            with. Same as 'syncr --version'.

            Options:
              --json                Print one JSON object: {"version": "...", "commit": "..." or
                                    null, "libraries": {"libcurl": "...", "libyaml": "...",
                                    "zlib": "...", "openssl": "..."}}.
              -h, --help            Show this help.
            """
        case .help:
            return overview
        case .initialize:
            return InitCommand.help
        case .cache:
            return CacheCommand.help
        case .completions:
            return Completions.help
        case .lock:
            return LockCommand.help
        case .report:
            return ReportCommand.help
        }
    }
}
