public import Foundation
public import Logging

/// Where a client gets its provider's metadata from.
public enum ProviderSource: Sendable, Equatable {
    /// Fetch `/.well-known/openid-configuration` under this issuer.
    case discovery(issuer: String)
    /// Use metadata given by hand (providers that publish no discovery document).
    case `static`(ProviderMetadata)

    /// The issuer identifier the metadata must carry.
    public var issuer: String {
        switch self {
        case .discovery(let issuer): issuer
        case .static(let metadata): metadata.issuer
        }
    }
}

/// Fetches and caches provider metadata, refusing a document that names another issuer.
public actor DiscoveryClient {
    private struct Entry {
        let metadata: ProviderMetadata
        let fetchedAt: Date
    }

    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let timeToLive: TimeInterval
    private let logger: Logger
    private var cache: [String: Entry] = [:]

    /// Creates a client; metadata is kept for `timeToLive` seconds.
    public init(transport: any HTTPTransport, clock: any WallClock, timeToLive: TimeInterval = 3600, logger: Logger) {
        self.transport = transport
        self.clock = clock
        self.timeToLive = timeToLive
        self.logger = logger
    }

    /// The metadata for `source`, from the cache when fresh.
    public func metadata(for source: ProviderSource) async throws -> ProviderMetadata {
        switch source {
        case .static(let metadata):
            try metadata.checkEndpointsAreSecure()
            return metadata
        case .discovery(let issuer):
            if let entry = cache[issuer], clock.now().timeIntervalSince(entry.fetchedAt) < timeToLive {
                return entry.metadata
            }
            let metadata = try await fetch(issuer: issuer)
            cache[issuer] = Entry(metadata: metadata, fetchedAt: clock.now())
            return metadata
        }
    }

    /// Drops every cached document.
    public func invalidate() {
        cache.removeAll()
    }

    /// The discovery URL for an issuer: the issuer with any trailing slash removed, then the well-known path.
    public static func discoveryURL(for issuer: String) throws -> URL {
        var base = issuer
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + "/.well-known/openid-configuration"), url.host != nil,
            EndpointSecurity.isAcceptable(url)
        else {
            throw SwitchbackError(.invalidConfiguration, "issuer is not an HTTPS URL (plain HTTP is allowed on loopback only)")
        }
        return url
    }

    private func fetch(issuer: String) async throws -> ProviderMetadata {
        let url = try Self.discoveryURL(for: issuer)
        logger.debug("fetching discovery document", metadata: ["url": "\(url)"])
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: .get, url: url, headers: ["Accept": "application/json"]))
        } catch let error as SwitchbackError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw SwitchbackError(.discoveryFailed, "could not fetch \(url)", underlying: error)
        }
        guard response.status == 200 else {
            throw SwitchbackError(.discoveryFailed, "discovery document answered HTTP \(response.status)", httpStatus: response.status)
        }
        let metadata: ProviderMetadata
        do {
            metadata = try JSONDecoder().decode(ProviderMetadata.self, from: response.body)
        } catch {
            throw SwitchbackError(.discoveryFailed, "discovery document is not valid provider metadata", underlying: error)
        }
        guard metadata.issuer == issuer else {
            throw SwitchbackError(
                .issuerMismatch,
                "discovery document names issuer \"\(metadata.issuer.prefix(200))\" but \"\(issuer)\" was asked for"
            )
        }
        try metadata.checkEndpointsAreSecure()
        return metadata
    }
}
