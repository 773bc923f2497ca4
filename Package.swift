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
        .library(name: "SwitchbackEmulator", targets: ["SwitchbackEmulator"]),
        .library(name: "SwitchbackServer", targets: ["SwitchbackServer"]),
        // The demo's scenarios, only for this repository's WebKitGTK package (WebKitHost/): the leading
        // underscore marks the product unsupported for anyone else, as swift-crypto's _CryptoExtras is.
        .library(name: "_SwitchbackScenarios", targets: ["SwitchbackScenarios"]),
        .library(name: "SwitchbackApple", targets: ["SwitchbackApple"]),
        .executable(name: "switchback", targets: ["SwitchbackCLI"]),
        // The production companion alone: no emulator, simulated device or demo in its image.
        .executable(name: "switchback-companion", targets: ["SwitchbackCompanion"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
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
        .target(
            name: "SwitchbackEmulator",
            dependencies: [
                "Switchback",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
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
            name: "SwitchbackServer",
            dependencies: [
                "Switchback",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SwitchbackScenarios",
            dependencies: [
                "Switchback",
                "SwitchbackTesting",
                "SwitchbackEmulator",
                "SwitchbackServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SwitchbackCLI",
            dependencies: [
                "Switchback",
                "SwitchbackEmulator",
                "SwitchbackServer",
                "SwitchbackTesting",
                "SwitchbackScenarios",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SwitchbackCompanion",
            dependencies: [
                "Switchback",
                "SwitchbackServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SwitchbackBenchmarks",
            dependencies: [
                "Switchback",
                "SwitchbackTesting",
                "SwitchbackEmulator",
                "SwitchbackServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        // The README's getting-started code, compiled and run against the emulator (scripts/test.sh runs it).
        .executableTarget(
            name: "GettingStarted",
            dependencies: ["Switchback", "SwitchbackTesting", "SwitchbackEmulator", "SwitchbackServer"],
            path: "Examples/GettingStarted",
            swiftSettings: swiftSettings
        ),
        // The provider guides' app-side code, run against the emulator (scripts/test.sh runs it).
        .executableTarget(
            name: "Guides",
            dependencies: ["Switchback", "SwitchbackTesting", "SwitchbackEmulator", "SwitchbackServer", .product(name: "Crypto", package: "swift-crypto")],
            path: "Examples/Guides",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SwitchbackTests",
            dependencies: [
                "Switchback",
                "SwitchbackTesting",
                "SwitchbackEmulator",
                "SwitchbackServer",
                "SwitchbackScenarios",
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
