// swift-tools-version:6.1
// Switchback's server side and tools: the backend companion (library and `switchback-companion`), the
// emulator, the demo's scenarios, the `switchback` CLI and the benchmarks. A package of its own so that an
// app depending on Switchback (the package one level up) resolves none of their dependencies.
import PackageDescription

let package = Package(
    name: "SwitchbackTools",
    // What Hummingbird 2 declares: its routers and the companion need macOS 14 / iOS 17.
    platforms: [
        .macOS(.v14),
        .iOS(.v17),
    ],
    products: [
        .library(name: "SwitchbackEmulator", targets: ["SwitchbackEmulator"]),
        .library(name: "SwitchbackServer", targets: ["SwitchbackServer"]),
        // The demo's scenarios, only for this repository's WebKitGTK package (WebKitHost/): the leading
        // underscore marks the product unsupported for anyone else, as swift-crypto's _CryptoExtras is.
        .library(name: "_SwitchbackScenarios", targets: ["SwitchbackScenarios"]),
        .executable(name: "switchback", targets: ["SwitchbackCLI"]),
        // The production companion alone: no emulator, simulated device or demo in its image.
        .executable(name: "switchback-companion", targets: ["SwitchbackCompanion"]),
    ],
    dependencies: [
        .package(name: "Switchback", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // What a verifier does and an app never needs: the SD-JWT VC and mdoc verifiers with their CBOR, Inflate and
        // status-list readers, DCQL, DPoP proof checking, Back-Channel Logout tokens, and the JSON writer the
        // companion's records use. Here rather than in the app package, so no app compiles or ships them.
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
        // What the emulator and the companion share as HTTP servers.
        .target(
            name: "SwitchbackHosting",
            dependencies: [
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SwitchbackEmulator",
            dependencies: [
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "SwitchbackTesting", package: "Switchback"),
                "SwitchbackVerification",
                "SwitchbackHosting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // getrandom(2) for the companion's secrets, which Swift's Glibc module does not declare.
        .target(name: "CSwitchbackSystem"),
        .target(
            name: "SwitchbackServer",
            dependencies: [
                "CSwitchbackSystem",
                "SwitchbackVerification",
                "SwitchbackHosting",
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SwitchbackScenarios",
            dependencies: [
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "SwitchbackTesting", package: "Switchback"),
                "SwitchbackEmulator",
                "SwitchbackServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "SwitchbackCLI",
            dependencies: [
                .product(name: "Switchback", package: "Switchback"),
                "SwitchbackEmulator",
                "SwitchbackServer",
                .product(name: "SwitchbackTesting", package: "Switchback"),
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
                .product(name: "Switchback", package: "Switchback"),
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
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "SwitchbackTesting", package: "Switchback"),
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
        .executableTarget(
            name: "GettingStarted",
            dependencies: [.product(name: "Switchback", package: "Switchback"), .product(name: "SwitchbackTesting", package: "Switchback"), "SwitchbackEmulator", "SwitchbackServer"],
            path: "Examples/GettingStarted",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "Guides",
            dependencies: [.product(name: "Switchback", package: "Switchback"), .product(name: "SwitchbackTesting", package: "Switchback"), "SwitchbackEmulator", "SwitchbackServer", .product(name: "Crypto", package: "swift-crypto")],
            path: "Examples/Guides",
            swiftSettings: swiftSettings
        ),
        // What the tools' tests share: the companion rig, the scripted browser, the emulator harness and
        // the two companion stores; and, through the link Tests/Support/Core, the core tests' own support
        // (the scripted provider, the glewlwyd peer, expectCode), compiled here a second time so that the
        // app package need not offer it as a product.
        .target(
            name: "ToolsTestSupport",
            dependencies: testDependencies(["SwitchbackEmulator", "SwitchbackServer"]) + [
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/Support",
            swiftSettings: swiftSettings
        ),
        // The tools' tests, one target per module: the emulator, the companion, the end-to-end scenarios on the
        // simulated device, and the executables.
        .testTarget(name: "VerificationTests", dependencies: testDependencies(["SwitchbackVerification", "ToolsTestSupport"]), swiftSettings: swiftSettings),
        .testTarget(name: "EmulatorTests", dependencies: testDependencies(["SwitchbackEmulator", "ToolsTestSupport"]), swiftSettings: swiftSettings),
        .testTarget(
            name: "CompanionTests",
            dependencies: testDependencies(["SwitchbackEmulator", "SwitchbackServer", "ToolsTestSupport"]) + [
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            // Apple's Verify with Wallet sample data, read by path (Wallet/AppleSample/README.md says whence).
            exclude: ["Wallet/AppleSample"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ScenarioTests",
            dependencies: testDependencies(["SwitchbackEmulator", "SwitchbackServer", "SwitchbackScenarios", "ToolsTestSupport"]),
            swiftSettings: swiftSettings),
        .testTarget(name: "CLITests", dependencies: testDependencies(["SwitchbackEmulator", "ToolsTestSupport"]), swiftSettings: swiftSettings),
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

/// What every test target uses, and the modules under test.
func testDependencies(_ modules: [Target.Dependency]) -> [Target.Dependency] {
    [
        .product(name: "Switchback", package: "Switchback"),
        .product(name: "SwitchbackTesting", package: "Switchback"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "_CryptoExtras", package: "swift-crypto"),
        .product(name: "JWTKit", package: "jwt-kit"),
        .product(name: "Logging", package: "swift-log"),
    ] + modules
}
