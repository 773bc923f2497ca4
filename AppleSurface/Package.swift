// swift-tools-version:6.1
// Compiles the iOS adapters (Sources/SwitchbackApple) and the guides' iOS wiring (Examples/AppleSnippets)
// on Linux, against the core and a declared model of the Apple API they use: modules named UIKit, WebKit,
// AuthenticationServices, SafariServices, Security, SwiftUI, CryptoKit, LocalAuthentication, DeviceCheck and PassKit that declare exactly that API, each
// declaration with the documentation page it was taken from. Test-only; not a product of Switchback.
//
// The core and the adapters come in by symlink (Sources/Switchback, Sources/SwitchbackApple), so this
// package does not depend on the root one: two packages in one graph cannot both have a target named
// SwitchbackApple. scripts/apple-typecheck.sh builds it (warnings are errors) and runs its tests.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .unsafeFlags(["-warnings-as-errors"]),
]

let surface = [
    "UIKit", "WebKit", "AuthenticationServices", "SafariServices", "Security", "SwiftUI", "CryptoKit", "LocalAuthentication", "DeviceCheck",
    "PassKit",
]

let package = Package(
    name: "SwitchbackAppleSurface",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // The core exactly as the root package builds it.
        .target(
            name: "Switchback",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
        // The model of Apple's SDK.
        .target(name: "UIKit", swiftSettings: strict),
        .target(name: "WebKit", dependencies: ["UIKit"], swiftSettings: strict),
        .target(name: "AuthenticationServices", dependencies: ["UIKit"], swiftSettings: strict),
        .target(name: "SafariServices", dependencies: ["UIKit"], swiftSettings: strict),
        // Also seen by swift-certificates, whose `canImport(Security)` extension it satisfies.
        .target(name: "Security", swiftSettings: strict),
        .target(name: "SwiftUI", dependencies: ["UIKit"], swiftSettings: strict),
        // The Secure Enclave's part of CryptoKit, over swift-crypto's P256 (which has CryptoKit's API).
        .target(name: "CryptoKit", dependencies: [.product(name: "Crypto", package: "swift-crypto")], swiftSettings: strict),
        .target(name: "LocalAuthentication", swiftSettings: strict),
        .target(name: "DeviceCheck", swiftSettings: strict),
        .target(name: "PassKit", swiftSettings: strict),
        // The adapters and the guides' wiring, type-checked with warnings as errors.
        .target(name: "SwitchbackApple", dependencies: ["Switchback"] + surface.map { .target(name: $0) }, swiftSettings: strict),
        .target(name: "SnippetBankIDNorwayApp", dependencies: ["Switchback", "SwitchbackApple", "SwiftUI", "UIKit"], swiftSettings: strict),
        .target(name: "SnippetMitIDSceneDelegate", dependencies: ["Switchback", "SwitchbackApple", "UIKit"], swiftSettings: strict),
        .target(name: "SnippetSingpassApp", dependencies: ["Switchback", "SwitchbackApple", "SwiftUI", "UIKit"], swiftSettings: strict),
        .target(name: "SnippetWalletApp", dependencies: ["Switchback", "SwitchbackApple", "SwiftUI", "UIKit"], swiftSettings: strict),
        .target(name: "SnippetUAEPassApp", dependencies: ["Switchback", "SwitchbackApple", "SwiftUI", "UIKit", "WebKit"], swiftSettings: strict),
        .target(name: "SnippetGettingStarted", dependencies: ["Switchback", "SwitchbackApple", "SwiftUI", "UIKit"], swiftSettings: strict),
        // Swift Testing's cross-import overlay for UIKit, which a test file importing both needs.
        .target(name: "_Testing_UIKit", swiftSettings: strict),
        // The adapters' glue run on the model: completions, decisions and status codes reach the core unchanged.
        .testTarget(
            name: "AppleGlueTests",
            dependencies: ["Switchback", "SwitchbackApple", "_Testing_UIKit"] + surface.map { .target(name: $0) },
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
