#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's soft limit on open files (`ulimit -n`, `LimitNOFILE`), which the companion's connections,
/// its database pool and its listeners share. Past it, `accept(2)` fails with `EMFILE` and new connections
/// wait in the listen backlog: a `limits.maxConnections` above it never applies.
enum OpenFileLimit {
    /// The soft limit; nil when it cannot be read or there is none.
    static func current() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
            let read = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
            let read = getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        // "No limit" is all bits set on Linux and Int64.max on Darwin (RLIM_INFINITY, a macro Swift does
        // not import on either): any value from Int.max up is none.
        guard read == 0, limit.rlim_cur < rlim_t(Int.max) else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Descriptors kept for what is not a client connection: the database pool, the listeners, files.
    static let reserve = 64

    /// Why `maxConnections` cannot take effect under `limit`, or nil when it can.
    static func warning(maxConnections: Int, limit: Int?) -> String? {
        guard let limit else { return nil }
        let needed = maxConnections == 0 ? nil : maxConnections + reserve
        if let needed, needed <= limit { return nil }
        let cap = maxConnections == 0 ? "no cap (0)" : "\(maxConnections)"
        return "limits.maxConnections is \(cap), but the process may open only \(limit) files (ulimit -n): "
            + "past that, new connections wait unaccepted and the database pool cannot open one. "
            + "Raise the limit (LimitNOFILE, --ulimit nofile) or set limits.maxConnections to at most \(max(limit - reserve, 1))."
    }
}
