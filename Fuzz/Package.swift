// swift-tools-version:6.1
// libFuzzer targets for every parser an attacker reaches: a package of its own, so that neither the app
// package nor the companion's build depends on it. It builds only with the fuzzer sanitizer (libFuzzer
// supplies `main`): `scripts/fuzz.sh` builds and runs it.
//
// The verifier's sources and the companion's parsers (addresses, the allow-list, cookies, revocation lists) are
// compiled here through links
// (Sources/SwitchbackVerification, Sources/ServerParsers), so the fuzz build instruments them without
// building the companion's server stack.
import PackageDescription

let package = Package(
    name: "SwitchbackFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Switchback", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .target(
            name: "SwitchbackVerification",
            dependencies: [
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ServerParsers",
            dependencies: [
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FuzzTargets",
            dependencies: [
                "SwitchbackVerification",
                "ServerParsers",
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SwitchbackFuzz",
            dependencies: ["FuzzTargets"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

var swiftSettings: [SwiftSetting] {
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
