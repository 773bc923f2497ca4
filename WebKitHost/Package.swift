// swift-tools-version:6.1
// The WebView host on a real WebKit engine (WebKitGTK), kept out of the main package so that its
// `swift build` and `swift test` need nothing beyond the toolchain. scripts/test.sh installs WebKitGTK
// and Xvfb and runs these tests; see README.md.
import PackageDescription

let package = Package(
    name: "SwitchbackWebKitGTK",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "WebKitGTKHost", targets: ["WebKitGTKHost"]),
        .executable(name: "switchback-webkit", targets: ["SwitchbackWebKit"]),
    ],
    dependencies: [
        .package(name: "Switchback", path: ".."),
        .package(name: "SwitchbackTools", path: "../Tools"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        .systemLibrary(name: "CWebKitGTK", pkgConfig: "webkit2gtk-4.1", providers: [.apt(["libwebkit2gtk-4.1-dev"])]),
        .target(name: "CWebKitShim", dependencies: ["CWebKitGTK"]),
        .target(
            name: "WebKitGTKHost",
            dependencies: [
                "CWebKitShim", "CWebKitGTK", .product(name: "Switchback", package: "Switchback"),
                // iOS's user-agent rules, shared with the simulated device (IOSUserAgentRules).
                .product(name: "SwitchbackTesting", package: "Switchback"),
                // The loopback proxy that gives the device's names real TLS (NameProxy).
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "SwitchbackWebKit",
            dependencies: [
                "WebKitGTKHost",
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "SwitchbackTesting", package: "Switchback"),
                .product(name: "_SwitchbackScenarios", package: "SwitchbackTools"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "WebKitGTKHostTests",
            dependencies: [
                "WebKitGTKHost",
                .product(name: "Switchback", package: "Switchback"),
                .product(name: "SwitchbackTesting", package: "Switchback"),
                .product(name: "SwitchbackEmulator", package: "SwitchbackTools"),
                .product(name: "_SwitchbackScenarios", package: "SwitchbackTools"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
