// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Switchback",
    platforms: [
        .macOS(.v13),
        .iOS(.v16),
    ],
    products: [
        .library(name: "Switchback", targets: ["Switchback"]),
        .library(name: "SwitchbackTesting", targets: ["SwitchbackTesting"]),
        .library(name: "SwitchbackApple", targets: ["SwitchbackApple"]),
    ],
    // Only what the app-side products need: an app that adds Switchback resolves these and their own
    // dependencies, nothing of the server. The companion, the emulator, the demo, the CLI and the
    // benchmarks are the package in Tools/, which depends on this one by path.
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "Switchback",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SwitchbackTesting",
            dependencies: [
                "Switchback",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        // iOS adapters; every file is behind `#if canImport(...)`, so on Linux the module is empty and
        // scripts/test.sh checks each file parses.
        .target(
            name: "SwitchbackApple",
            dependencies: ["Switchback"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SwitchbackTestSupport",
            dependencies: [
                "Switchback",
                "SwitchbackTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support",
            swiftSettings: swiftSettings
        ),
        // The core's own tests: no server, emulator or network peer needed but glewlwyd for the interop suite.
        .testTarget(
            name: "SwitchbackTests",
            dependencies: [
                "Switchback",
                "SwitchbackTesting",
                "SwitchbackTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")],
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
