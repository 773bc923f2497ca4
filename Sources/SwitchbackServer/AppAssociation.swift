public import Foundation
public import Switchback

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
                "details": .array(associations.map { association in
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
        .array(associations.compactMap { association in
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
