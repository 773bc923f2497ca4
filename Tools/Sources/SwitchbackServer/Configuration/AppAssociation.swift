import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// The app links a domain vouches for: which apps may open which paths of it as universal links (Apple's
/// `apple-app-site-association`) and as Android App Links (`assetlinks.json`).
public struct AppAssociation: Sendable, Codable, Equatable {
    /// Apple app IDs, `TEAMID.bundle.identifier`.
    public var appIDs: [String]
    /// Path patterns (`*` and `?` wildcards), for example `/appswitch*`.
    public var paths: [String]
    /// The Android package and its signing-certificate SHA-256 fingerprints, when there is an Android app.
    public var androidPackage: String?
    public var androidFingerprints: [String]

    public init(appIDs: [String], paths: [String], androidPackage: String? = nil, androidFingerprints: [String] = []) {
        self.appIDs = appIDs
        self.paths = paths
        self.androidPackage = androidPackage
        self.androidFingerprints = androidFingerprints
    }

    /// The `apple-app-site-association` document (the `components` form iOS 13+ reads).
    public static func appleDocument(_ associations: [AppAssociation]) -> JSONValue {
        .object([
            "applinks": .object([
                "details": .array(
                    associations.map { association in
                        .object([
                            "appIDs": .array(association.appIDs.map(JSONValue.string)),
                            "components": .array(association.paths.map { .object(["/": .string($0)]) }),
                        ])
                    })
            ]),
            "webcredentials": .object(["apps": .array(associations.flatMap(\.appIDs).map(JSONValue.string))]),
        ])
    }

    /// The Digital Asset Links statement list for Android App Links.
    public static func androidDocument(_ associations: [AppAssociation]) -> JSONValue {
        .array(
            associations.compactMap { association in
                guard let package = association.androidPackage else { return nil }
                return .object([
                    "relation": .array([.string("delegate_permission/common.handle_all_urls")]),
                    "target": .object([
                        "namespace": .string("android_app"), "package_name": .string(package),
                        "sha256_cert_fingerprints": .array(association.androidFingerprints.map(JSONValue.string)),
                    ]),
                ])
            })
    }

    /// Whether `path` is one of the universal-link paths.
    public func claims(_ path: String) -> Bool {
        paths.contains { AssociationPattern.matches(path, pattern: $0) }
    }
}

extension AppAssociation {
    private enum Keys: String, CodingKey { case appIDs, paths, androidPackage, androidFingerprints }

    /// In a file, `androidPackage` and `androidFingerprints` may be left out.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            appIDs: try c.decodeIfPresent([String].self, forKey: .appIDs) ?? [], paths: try c.decode([String].self, forKey: .paths),
            androidPackage: try c.decodeIfPresent(String.self, forKey: .androidPackage),
            androidFingerprints: try c.decodeIfPresent([String].self, forKey: .androidFingerprints) ?? []
        )
    }

    /// Refuses app IDs that are not `TEAMID.bundle.id` (a ten-character team ID), paths that do not
    /// start with `/`, and Android fingerprints that are not 32 colon-separated hex bytes.
    public func validate() throws {
        guard !appIDs.isEmpty || androidPackage != nil else {
            throw SwitchbackError(.invalidConfiguration, "an association needs at least one Apple app ID or an Android package")
        }
        for appID in appIDs {
            let parts = appID.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 10, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }),
                parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }), !parts[1].hasPrefix("."),
                !parts[1].hasSuffix(".")
            else {
                throw SwitchbackError(
                    .invalidConfiguration, "app ID \(appID.prefix(80)) is not TEAMID.bundle.identifier with a ten-character team ID")
            }
        }
        guard !paths.isEmpty else { throw SwitchbackError(.invalidConfiguration, "an association needs at least one path") }
        for path in paths where !path.hasPrefix("/") || path.contains(where: { $0.isWhitespace || !$0.isASCII }) {
            throw SwitchbackError(.invalidConfiguration, "path \(path.prefix(80)) must start with / and hold no spaces or non-ASCII characters")
        }
        if androidPackage != nil, androidFingerprints.isEmpty {
            throw SwitchbackError(.invalidConfiguration, "an Android package needs its signing-certificate SHA-256 fingerprint")
        }
        for fingerprint in androidFingerprints {
            let bytes = fingerprint.split(separator: ":", omittingEmptySubsequences: false)
            guard bytes.count == 32, bytes.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
                throw SwitchbackError(.invalidConfiguration, "fingerprint \(fingerprint.prefix(100)) is not 32 colon-separated hex bytes")
            }
        }
    }
}
